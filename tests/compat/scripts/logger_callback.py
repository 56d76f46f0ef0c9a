# mypy: ignore-errors
"""A custom LoggerCallback writes one file per trial.

Follows Ray Tune's "Logging and Outputs in Tune" guide
(tune/tutorials/tune-output.rst, "How to Build Custom Tune Loggers?") and
python/ray/tune/examples/logging_example.py.
"""

import json
import os

import tunecore as tune
from tunecore.logger import LoggerCallback


class CustomLoggerCallback(LoggerCallback):
    """Custom logger interface"""

    def __init__(self, filename: str = "log.txt"):
        self._trial_files = {}
        self._filename = filename

    def log_trial_start(self, trial):
        trial_logfile = os.path.join(trial.local_path, self._filename)
        self._trial_files[trial] = open(trial_logfile, "at")

    def log_trial_result(self, iteration, trial, result):
        if trial in self._trial_files:
            self._trial_files[trial].write(json.dumps(result, default=str) + "\n")

    def on_trial_complete(self, iteration, trials, trial, **info):
        if trial in self._trial_files:
            self._trial_files[trial].close()
            del self._trial_files[trial]


def train_fn(config):
    for step in range(3):
        tune.report({"loss": config["x"] / (step + 1)})


tuner = tune.Tuner(
    train_fn,
    param_space={"x": tune.grid_search([1.0, 2.0])},
    run_config=tune.RunConfig(callbacks=[CustomLoggerCallback("log_test.txt")]),
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
for result in results:
    with open(os.path.join(result.path, "log_test.txt")) as f:
        logged = [json.loads(line) for line in f]
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert [row["loss"] for row in logged] == [result.config["x"] / s for s in (1, 2, 3)]
