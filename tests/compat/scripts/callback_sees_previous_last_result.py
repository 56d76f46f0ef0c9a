# mypy: ignore-errors
"""What `trial.last_result` holds at each hook a callback and a scheduler
of one's own hear, as Ray Tune's user guides write them (tune-callbacks:
`Callback.on_trial_result(iteration, trials, trial, result)`,
`on_trial_complete`; tune-schedulers: a `FIFOScheduler` subclass).

Ray Tune 2.60 updates a trial with a result (`Trial.update_last_result`)
only after its scheduler, searcher and callbacks heard it: inside
`on_trial_result`, `trial.last_result` and `trial.metric_analysis` are
still the previous result's (none before the first), the trial is still
RUNNING when this result stops it, and the `result` argument is the new
one. By `on_trial_complete` the trial holds its last result, marked done.
"""

import tempfile

import tunecore as tune
from tunecore.schedulers import FIFOScheduler, TrialScheduler


def train_fn(config):
    for step in range(1, 4):
        tune.report({"score": config["x"] * step})


def previous(trial):
    last = trial.last_result
    return last.get("training_iteration"), last.get("score"), last.get("done")


heard = {}
scheduled = {}
completed = {}


class LastResultWatcher(tune.Callback):
    def on_trial_result(self, iteration, trials, trial, result, **info):
        listed = {t.trial_id: t for t in trials}[trial.trial_id]
        heard.setdefault(trial.config["x"], []).append(
            (
                result["training_iteration"],
                previous(trial),
                previous(listed),
                trial.metric_analysis.get("score", {}).get("max"),
                trial.status,
            )
        )

    def on_trial_complete(self, iteration, trials, trial, **info):
        stats = trial.metric_analysis["score"]
        completed[trial.config["x"]] = (previous(trial), stats["max"], stats["last"])


class WatchingScheduler(FIFOScheduler):
    def on_trial_result(self, tune_controller, trial, result):
        scheduled.setdefault(trial.config["x"], []).append(
            (result["training_iteration"], previous(trial))
        )
        return TrialScheduler.CONTINUE


tuner = tune.Tuner(
    train_fn,
    param_space={"x": tune.grid_search([1, 2])},
    tune_config=tune.TuneConfig(scheduler=WatchingScheduler()),
    run_config=tune.RunConfig(
        name="previous_last_result",
        storage_path=tempfile.mkdtemp(),
        callbacks=[LastResultWatcher()],
        stop={"score": 4},  # x=2 stops at its second result (score 4)
    ),
)
results = tuner.fit()
assert not results.errors, results.errors

nothing = (None, None, None)
assert heard[1] == [
    (1, nothing, nothing, None, "RUNNING"),
    (2, (1, 1, False), (1, 1, False), 1, "RUNNING"),
    (3, (2, 2, False), (2, 2, False), 2, "RUNNING"),
], heard[1]
# The stopping result: the trial is still RUNNING and holds the one before.
assert heard[2] == [
    (1, nothing, nothing, None, "RUNNING"),
    (2, (1, 2, False), (1, 2, False), 2, "RUNNING"),
], heard[2]
assert scheduled[1] == [(1, nothing), (2, (1, 1, False)), (3, (2, 2, False))], scheduled
# A result the stop criterion stops is not the scheduler's to judge.
assert scheduled[2] == [(1, nothing)], scheduled
assert completed == {1: ((3, 3, True), 3, 3), 2: ((2, 4, True), 4, 4)}, completed
print("trial.last_result inside on_trial_result: the previous result")
