# mypy: ignore-errors
"""The built-in logger callbacks, passed explicitly, and memory as a resource.

Follows Ray Tune's "Logging and Outputs in Tune" guide
(tune/tutorials/tune-output.rst: JsonLoggerCallback, CSVLoggerCallback,
TBXLoggerCallback in tune/api/logging.rst) and the resources FAQ
(tune.with_resources with "memory").
"""

import glob
import json
import os

import tunecore as tune
from tunecore.logger import CSVLoggerCallback, JsonLoggerCallback, TBXLoggerCallback


def trainable(config):
    for step in range(4):
        tune.report({"loss": config["x"] / (step + 1)})


tuner = tune.Tuner(
    tune.with_resources(trainable, {"cpu": 1, "memory": 50 * 1024 * 1024}),
    param_space={"x": tune.grid_search([1.0, 2.0])},
    run_config=tune.RunConfig(
        callbacks=[JsonLoggerCallback(), CSVLoggerCallback(), TBXLoggerCallback()]
    ),
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
for result in results:
    # Each result logged once, whether the loggers are given or by default.
    with open(os.path.join(result.path, "result.json")) as f:
        rows = [json.loads(line) for line in f]
    assert [row["training_iteration"] for row in rows] == [1, 2, 3, 4]
    with open(os.path.join(result.path, "progress.csv")) as f:
        assert len(f.read().strip().splitlines()) == 1 + 4
    assert glob.glob(os.path.join(result.path, "events.out.tfevents*"))
