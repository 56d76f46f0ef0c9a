# mypy: ignore-errors
"""Callback hooks for a failing trial and for the end of the experiment.

Follows Ray Tune's Callback API reference (tune/api/callbacks.rst:
on_trial_error, on_experiment_end) and the Callbacks guide.
"""

import tunecore as tune
from tunecore import Callback


class MyCallback(Callback):
    def __init__(self):
        self.errored = []
        self.completed = []
        self.ended_with = None

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.completed.append(trial.config["fail"])

    def on_trial_error(self, iteration, trials, trial, **info):
        self.errored.append(trial.config["fail"])

    def on_experiment_end(self, trials, **info):
        self.ended_with = sorted((t.config["fail"], str(t.status)) for t in trials)


def train_fn(config):
    tune.report({"metric": 1})
    if config["fail"]:
        raise ValueError("this trial fails")
    tune.report({"metric": 2})


callback = MyCallback()
tuner = tune.Tuner(
    train_fn,
    param_space={"fail": tune.grid_search([False, True])},
    run_config=tune.RunConfig(callbacks=[callback]),
)
results = tuner.fit()

assert results.num_errors == 1
assert callback.errored == [True]
assert callback.completed == [False]
assert callback.ended_with == [(False, "TERMINATED"), (True, "ERROR")], callback.ended_with
