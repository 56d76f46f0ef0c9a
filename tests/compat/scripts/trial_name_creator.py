# mypy: ignore-errors
"""Custom trial names and trial directory names.

Follows Ray Tune's FAQ ("How can I customize the trial directory name?",
tune/faq.rst) and python/ray/tune/examples/logging_example.py
(trial_str_creator).
"""

import os

import tunecore as tune


def trial_str_creator(trial):
    return "{}_{}_123".format(trial.trainable_name, trial.trial_id)


def trial_dirname_creator(trial):
    return "dir_{}_lr={}".format(trial.trial_id, trial.config["lr"])


names = []


class RecordNames(tune.Callback):
    def on_trial_start(self, iteration, trials, trial, **info):
        names.append(str(trial))


def my_trainable(config):
    tune.report({"loss": config["lr"]})


tuner = tune.Tuner(
    my_trainable,
    param_space={"lr": tune.grid_search([0.1, 0.01])},
    tune_config=tune.TuneConfig(
        trial_name_creator=trial_str_creator,
        trial_dirname_creator=trial_dirname_creator,
    ),
    run_config=tune.RunConfig(callbacks=[RecordNames()]),
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
dirnames = sorted(os.path.basename(r.path) for r in results)
assert all(d.startswith("dir_") for d in dirnames), dirnames
assert sorted(d.split("_lr=")[1] for d in dirnames) == ["0.01", "0.1"], dirnames
# str(trial) is the trial's name, made by trial_name_creator.
assert len(names) == 2
assert all(n.startswith("my_trainable_") and n.endswith("_123") for n in names), names
