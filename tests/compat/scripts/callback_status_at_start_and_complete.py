# mypy: ignore-errors
"""The trial's status a `Callback` reads in `on_trial_start`,
`on_trial_complete` and `on_trial_error` (tune-callbacks: "Callbacks are
called at various points of the training loop"), in `trial` and in the
`trials` list.

Ray Tune 2.60's controller calls `on_trial_start` before it sets the trial
RUNNING, and `on_trial_complete` before it sets it TERMINATED; a failed
trial is ERROR by `on_trial_error`.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py.
"""

import tempfile

import tunecore as tune
from tunecore import Callback

seen = []


class StatusSeen(Callback):
    def on_trial_start(self, iteration, trials, trial, **info):
        listed = next(t for t in trials if t.trial_id == trial.trial_id)
        seen.append(("start", trial.config["x"], trial.status, listed.status))

    def on_trial_complete(self, iteration, trials, trial, **info):
        listed = next(t for t in trials if t.trial_id == trial.trial_id)
        seen.append(("complete", trial.config["x"], trial.status, listed.status))

    def on_trial_error(self, iteration, trials, trial, **info):
        listed = next(t for t in trials if t.trial_id == trial.trial_id)
        seen.append(("error", trial.config["x"], trial.status, listed.status))


def train(config):
    if config["x"] == 2:
        raise ValueError("fails on purpose")
    for step in range(3):
        tune.report({"score": step})


results = tune.Tuner(
    train,
    param_space={"x": tune.grid_search([1, 2])},
    tune_config=tune.TuneConfig(max_concurrent_trials=1),
    run_config=tune.RunConfig(storage_path=tempfile.mkdtemp(), callbacks=[StatusSeen()], verbose=0),
).fit()
assert len(results.errors) == 1, results.errors
assert seen == [
    ("start", 1, "PENDING", "PENDING"),
    ("complete", 1, "RUNNING", "RUNNING"),
    ("start", 2, "PENDING", "PENDING"),
    ("error", 2, "ERROR", "ERROR"),
], seen
print("callbacks see the status Ray Tune shows at each hook")
