# mypy: ignore-errors
# requires: comet_ml
# timeout: 240
"""Comet through `ray.air.integrations.comet`: the logger callback.

Follows Ray Tune's "Using Comet with Tune" guide
(doc/source/tune/examples/tune-comet.ipynb: `tune.run` with
`CometLoggerCallback(api_key=..., project_name=..., tags=[...])`), with
Comet's offline experiment (`online=False`; the guide mocks Comet where
there is no API key) in the working directory, and checks the archives:
one per trial, with its parameters and every result.
"""

import json
import os
import zipfile
from pathlib import Path

import numpy as np

import tunecore as tune
from tunecore.integrations.comet import CometLoggerCallback


def train_function(config, checkpoint_dir=None):
    for _ in range(30):
        loss = config["mean"] + config["sd"] * np.random.randn()
        tune.report({"loss": loss})


api_key = "YOUR_COMET_API_KEY"
project_name = "YOUR_COMET_PROJECT_NAME"
offline_directory = os.path.abspath("comet-offline")

analysis = tune.run(
    train_function,
    name="comet",
    metric="loss",
    mode="min",
    callbacks=[
        CometLoggerCallback(
            online=False,
            api_key=api_key,
            project_name=project_name,
            tags=["comet_example"],
            offline_directory=offline_directory,
        )
    ],
    config={"mean": tune.grid_search([1, 2, 3]), "sd": tune.uniform(0.2, 0.8)},
)
print(analysis.best_config)
# The best trial by its last loss (each trial's last draw is noisy: mean 2
# beats mean 1 on its last report now and then).
last_losses = {trial.trial_id: trial.last_result["loss"] for trial in analysis.trials}
best_trial = min(analysis.trials, key=lambda trial: last_losses[trial.trial_id])
assert analysis.best_config == best_trial.config

archives = sorted(Path(offline_directory).glob("*.zip"))
assert len(archives) == 3, archives
means = []
for archive in archives:
    with zipfile.ZipFile(archive) as opened:
        meta = json.loads(opened.read("experiment.json"))
        messages = [json.loads(line) for line in opened.read("messages.json").splitlines()]
    assert meta["project_name"] == project_name
    assert meta["tags"] == ["comet_example"]
    params = {
        m["payload"]["param"]["paramName"]: m["payload"]["param"]["paramValue"]
        for m in messages
        if m["type"] == "parameter_msg"
    }
    means.append(params["mean"])
    steps = sorted(
        m["payload"]["metric"]["step"]
        for m in messages
        if m["type"] == "metric_msg" and m["payload"]["metric"]["metricName"] == "loss"
    )
    assert steps == list(range(1, 31)), steps
assert sorted(means) == [1, 2, 3]
