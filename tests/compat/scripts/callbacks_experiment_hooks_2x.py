# mypy: ignore-errors
"""A `Callback` using the experiment-level hooks and the trial hooks' arguments.

Follows Ray Tune's Callback API docstring (ray/tune/callback.py:
`setup(stop, num_samples, total_num_samples)`, `on_step_begin`,
`on_trial_start`, `on_trial_result`, `on_checkpoint`, `on_trial_complete`,
`on_experiment_end`, `get_state`/`set_state`) and tune-metrics.md's
"How to use a Callback" example.
"""

import os
import tempfile

import tunecore as tune
from tunecore import Callback


class MyCallback(Callback):
    def __init__(self):
        self.setup_args = None
        self.started = []
        self.results = []
        self.checkpoints = []
        self.completed = []
        self.steps = 0
        self.ended_with = None

    def setup(self, stop=None, num_samples=None, total_num_samples=None, **info):
        self.setup_args = (stop, num_samples, total_num_samples)

    def on_step_begin(self, iteration, trials, **info):
        self.steps += 1

    def on_trial_start(self, iteration, trials, trial, **info):
        self.started.append(trial.trial_id)

    def on_trial_result(self, iteration, trials, trial, result, **info):
        print(f"Got result: {result['metric']}")
        self.results.append((trial.trial_id, result["metric"]))

    def on_checkpoint(self, iteration, trials, trial, checkpoint, **info):
        self.checkpoints.append(checkpoint)

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.completed.append(trial.trial_id)

    def on_experiment_end(self, trials, **info):
        self.ended_with = sorted(t.status for t in trials)


def train_fn(config):
    for i in range(3):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "i"), "w") as f:
                f.write(str(i))
            tune.report(
                {"metric": config["x"] * 10 + i}, checkpoint=tune.Checkpoint.from_directory(d)
            )


callback = MyCallback()
tuner = tune.Tuner(
    train_fn,
    param_space={"x": tune.grid_search([1, 2])},
    tune_config=tune.TuneConfig(num_samples=2),
    run_config=tune.RunConfig(callbacks=[callback], stop={"training_iteration": 10}),
)
results = tuner.fit()
assert not results.errors
stop, num_samples, total = callback.setup_args
assert num_samples == 2 and total == 4, callback.setup_args
assert stop == {"training_iteration": 10}, stop
assert callback.steps > 0
assert len(callback.started) == 4 and sorted(callback.started) == sorted(callback.completed)
assert len(callback.results) == 12
assert len(callback.checkpoints) == 12
assert all(hasattr(c, "path") for c in callback.checkpoints)
assert callback.ended_with == ["TERMINATED"] * 4
