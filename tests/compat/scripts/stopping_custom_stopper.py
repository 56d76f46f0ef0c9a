# mypy: ignore-errors
"""A custom Stopper class that stops every trial and the experiment.

Follows Ray Tune's "How to Define Stopping Criteria" guide,
doc/source/tune/doc_code/stopping.py (__stopping_cls__).
"""

import tunecore as tune
from tunecore import Stopper


def my_trainable(config):
    i = 1
    while True:
        tune.report({"mean_accuracy": min(i / 10, 1.0)})
        i += 1


class CustomStopper(Stopper):
    def __init__(self):
        self.should_stop = False

    def __call__(self, trial_id: str, result: dict) -> bool:
        if not self.should_stop and result["mean_accuracy"] >= 0.8:
            self.should_stop = True
        return self.should_stop

    def stop_all(self) -> bool:
        """Returns whether to stop trials and prevent new ones from starting."""
        return self.should_stop


stopper = CustomStopper()
tuner = tune.Tuner(
    my_trainable,
    run_config=tune.RunConfig(stop=stopper),
    tune_config=tune.TuneConfig(num_samples=2),
)
result_grid = tuner.fit()

assert len(result_grid) == 2
assert not result_grid.errors
for result in result_grid:
    final_iter = result.metrics.get("training_iteration", 0)
    assert final_iter <= 8, final_iter
# The first trial to reach 0.8 stopped at its 8th result.
assert max(r.metrics.get("training_iteration", 0) for r in result_grid) == 8
