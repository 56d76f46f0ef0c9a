# mypy: ignore-errors
# requires: aim
# timeout: 240
"""Aim through `ray.tune.logger.aim`: the logger callback.

Follows Ray Tune's "Using Aim with Tune" guide
(doc/source/tune/examples/tune-aim.ipynb: a grid search of 9 trials with
`AimLoggerCallback()` and its default repo, the experiment's directory),
with 20 results a trial instead of 50 and a storage path in the working
directory instead of /tmp/ray_results, and checks the Aim repo: a run per
trial with its parameters and every result.
"""

import os

import numpy as np
from aim.sdk import Repo, Run

import tunecore as tune
from tunecore.logger.aim import AimLoggerCallback


def train_function(config):
    for _ in range(20):
        loss = config["mean"] + config["sd"] * np.random.randn()
        tune.report({"loss": loss})


storage_path = os.path.abspath("ray_results")
tuner = tune.Tuner(
    train_function,
    run_config=tune.RunConfig(
        callbacks=[AimLoggerCallback()],
        storage_path=storage_path,
        name="aim_example",
    ),
    param_space={
        "mean": tune.grid_search([1, 2, 3, 4, 5, 6, 7, 8, 9]),
        "sd": tune.uniform(0.1, 0.9),
    },
    tune_config=tune.TuneConfig(
        metric="loss",
        mode="min",
    ),
)
results = tuner.fit()
assert not results.errors

repo = os.path.join(storage_path, "aim_example")
hashes = Repo.from_path(repo).list_all_runs()
assert len(hashes) == 9, hashes
means = []
for run_hash in hashes:
    run = Run(run_hash=run_hash, repo=repo, system_tracking_interval=None)
    assert run.experiment == "aim_example"
    means.append(run["hparams"]["mean"])
    (loss,) = [metric for metric in run.metrics() if metric.name == "ray/tune/loss"]
    assert loss.data.indices_list() == list(range(1, 21))
    run.close()
assert sorted(means) == list(range(1, 10))
