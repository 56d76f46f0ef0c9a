# mypy: ignore-errors
"""What a callback does with `trials`, the list of every trial its hooks
are given (Ray Tune's `Callback` API reference: "trials: List of trials"):
its length, membership, index, sorting a copy, and keeping it.

On Ray Tune the controller passes its own list of trials to every hook,
so a callback that keeps it sees the trials made after; sorting a copy
leaves it in the order the trials were created.
"""

import tunecore as tune


def trainable(config):
    for step in range(3):
        tune.report({"score": config["x"] * (step + 1)})


class UsesTrials(tune.Callback):
    def __init__(self):
        self.kept = None
        self.same_list = []
        self.lengths = []
        self.best_first = None

    def on_trial_result(self, iteration, trials, trial, result, **info):
        if self.kept is None:
            self.kept = trials
        self.same_list.append(trials is self.kept)
        self.lengths.append(len(trials))
        assert trial in trials
        assert trials[trials.index(trial)].trial_id == trial.trial_id
        ranked = sorted(trials, key=lambda t: (t.last_result or {}).get("score", 0), reverse=True)
        self.best_first = [t.trial_id for t in ranked]

    def on_experiment_end(self, trials, **info):
        self.at_end = [t.trial_id for t in trials]


callback = UsesTrials()
tuner = tune.Tuner(
    trainable,
    param_space={"x": tune.grid_search([1, 2, 3, 4])},
    tune_config=tune.TuneConfig(max_concurrent_trials=1),
    run_config=tune.RunConfig(callbacks=[callback]),
)
results = tuner.fit()

ids = sorted(r.metrics["trial_id"] for r in results)
assert callback.at_end == ids, (callback.at_end, ids)  # creation order
assert all(callback.same_list), callback.same_list  # one list, every call
assert [t.trial_id for t in callback.kept] == ids  # a kept list saw the later trials
assert max(callback.lengths) == 4
assert sorted(callback.best_first) == ids and callback.best_first != ids  # a sorted copy
print("callback_trials_list: ok", callback.lengths)
