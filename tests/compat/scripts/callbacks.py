# mypy: ignore-errors
"""A user callback sees every trial start, result and completion.

Follows Ray Tune's Callbacks guide (tune/tutorials/tune-metrics.rst and
tune/api/callbacks.rst: "class MyCallback(Callback): def on_trial_result(...)").
"""

import tunecore as tune
from tunecore import Callback


class MyCallback(Callback):
    def __init__(self):
        self.started = []
        self.results = {}
        self.completed = []

    def on_trial_start(self, iteration, trials, trial, **info):
        self.started.append(trial.trial_id)

    def on_trial_result(self, iteration, trials, trial, result, **info):
        print(f"Got result: {result['metric']}")
        self.results.setdefault(trial.trial_id, []).append(result["metric"])

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.completed.append(trial.trial_id)


def train_fn(config):
    for i in range(10):
        tune.report({"metric": i})


callback = MyCallback()
tuner = tune.Tuner(
    train_fn,
    param_space={"x": tune.grid_search([1, 2])},
    run_config=tune.RunConfig(callbacks=[callback]),
)
results = tuner.fit()

assert len(results) == 2
assert len(callback.started) == 2
assert sorted(callback.completed) == sorted(callback.started)
# Every reported result reached the callback once, in order.
assert set(callback.results) == set(callback.started)
assert all(metrics == list(range(10)) for metrics in callback.results.values())
