# mypy: ignore-errors
"""A custom `Stopper` that stops one trial and then the whole experiment,
and the function form of `stop`.

Follows Ray Tune's "How to Define Stopping Criteria" guide
(tutorials/tune-stopping.md, "Stopping with a custom Stopper class") and
the `Stopper` API docstring: `__call__(trial_id, result)` and
`stop_all()`; with `tune.run` (`stop=CustomStopper()`,
`raise_on_failed_trial=False`) as Ray 2.x's tune.run users write it.
"""

import time

import tunecore as tune
from tunecore import Stopper


class CustomStopper(Stopper):
    def __init__(self):
        self.should_stop = False

    def __call__(self, trial_id, result):
        if not self.should_stop and result["mean_accuracy"] >= 0.8:
            self.should_stop = True
        return self.should_stop

    def stop_all(self):
        """Returns whether to stop trials and prevent new ones from starting."""
        return self.should_stop


def my_trainable(config):
    i = 1
    while True:
        time.sleep(0.05)
        tune.report({"mean_accuracy": min(i / 10 * config["speed"], 1.0)})
        i += 1


stopper = CustomStopper()
analysis = tune.run(
    my_trainable,
    config={"speed": tune.grid_search([1.0, 2.0])},
    num_samples=2,
    stop=stopper,
    raise_on_failed_trial=False,
    metric="mean_accuracy",
    mode="max",
)
assert stopper.should_stop
trials = analysis.trials
assert len(trials) == 4
assert all(t.status in ("TERMINATED", "PENDING") for t in trials), [t.status for t in trials]
# A trial stopped before its first result has no metrics (on Ray only the
# keys Ray fills in: docs/differences.md).
ran = [t for t in trials if "mean_accuracy" in t.last_result]
assert ran and any(t.last_result["mean_accuracy"] >= 0.8 for t in ran)


def stop_fn(trial_id: str, result: dict) -> bool:
    return result["mean_accuracy"] >= 0.5 or result["training_iteration"] >= 20


tuner = tune.Tuner(
    my_trainable, param_space={"speed": 1.0}, run_config=tune.RunConfig(stop=stop_fn)
)
results = tuner.fit()
assert results[0].metrics["mean_accuracy"] == 0.5
assert results[0].metrics["training_iteration"] == 5
