# mypy: ignore-errors
"""Redirecting a trainable's output to files with `log_to_file`.

Follows Ray Tune's "Logging and Outputs in Tune" guide
(tune/tutorials/tune-output.md, "How to redirect Trainable logs to files in
a Tune run?"): `RunConfig(log_to_file=True)` writes `stdout` and `stderr`
in the trial directory, one name combines both, two names split them. As
in Ray, the output is still shown on the driver's console (each line
prefixed with the worker), which this script does not capture.

Ray Tune 2.60 writes the files in the trial's working directory, which
reaches `result.path` with `SyncConfig(sync_artifacts=True)` (the guide's
"How do you log arbitrary files from a Tune Trainable?"); tunecore writes
them in the trial directory itself, with or without it. Ray's files also
hold its worker's `:actor_name:trainable` line, so a line is looked for
in them rather than compared with the whole file.
"""

import os
import sys

import tunecore as tune
from tunecore import RunConfig, SyncConfig

ARTIFACTS = SyncConfig(sync_artifacts=True)


def trainable(config):
    print(f"training with x={config['x']}")
    print("a warning of the trainable's", file=sys.stderr)
    tune.report({"score": config["x"]})


def read(result, name):
    with open(os.path.join(result.path, name)) as f:
        return f.read()


tuner = tune.Tuner(
    trainable,
    param_space={"x": tune.grid_search([1, 2])},
    run_config=RunConfig(log_to_file=True, sync_config=ARTIFACTS),
)
results = tuner.fit()
assert not results.errors
for result in results:
    x = result.config["x"]
    assert f"training with x={x}\n" in read(result, "stdout")
    assert "a warning of the trainable's\n" in read(result, "stderr")
    assert "training" not in read(result, "stderr")

tuner = tune.Tuner(
    trainable,
    param_space={"x": 3},
    run_config=RunConfig(log_to_file="std_combined.log", sync_config=ARTIFACTS),
)
(result,) = tuner.fit()
combined = read(result, "std_combined.log")
assert "training with x=3\n" in combined
assert "a warning of the trainable's\n" in combined

tuner = tune.Tuner(
    trainable,
    param_space={"x": 4},
    run_config=RunConfig(log_to_file=("my_stdout.log", "my_stderr.log"), sync_config=ARTIFACTS),
)
(result,) = tuner.fit()
assert "training with x=4\n" in read(result, "my_stdout.log")
assert "a warning of the trainable's\n" in read(result, "my_stderr.log")
assert "warning" not in read(result, "my_stdout.log")
