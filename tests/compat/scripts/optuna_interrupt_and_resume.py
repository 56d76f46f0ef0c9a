# mypy: ignore-errors
# timeout: 300
"""An OptunaSearch experiment stopped with Ctrl-C and resumed with
Tuner.restore: the searcher goes on where it stopped.

Follows Ray Tune's "How to Enable Fault Tolerance in Ray Tune" guide
(tune/tutorials/tune-fault-tolerance.rst: Ctrl+C, then
Tuner.restore(path, trainable=...); "Tune automatically saves searcher
state inside the current experiment folder", tune/api/suggestion.rst) with
the searcher of the Optuna notebook (tune/examples/optuna_example.ipynb).
10 samples, one at a time, 0.5 s each (time to press Ctrl-C after three).
"""

import json
import os
import signal
import subprocess
import sys
import time

import tunecore as tune
from tunecore.search.optuna import OptunaSearch

NUM_SAMPLES = 10


def objective(config):
    time.sleep(0.5)
    tune.report({"loss": (config["x"] - 2) ** 2 + config["y"]})


storage_path = os.path.expanduser("~/ray_results")
path = os.path.join(storage_path, "optuna_interrupted")

if "--first-run" in sys.argv:
    # The run as the user started it from a terminal.
    tuner = tune.Tuner(
        objective,
        param_space={"x": tune.uniform(-5, 5), "y": tune.choice([0, 1])},
        tune_config=tune.TuneConfig(
            search_alg=OptunaSearch(),
            metric="loss",
            mode="min",
            num_samples=NUM_SAMPLES,
            max_concurrent_trials=1,
        ),
        run_config=tune.RunConfig(storage_path=storage_path, name="optuna_interrupted"),
    )
    tuner.fit()
    sys.exit(0)


def finished_configs():
    """The config of each trial that has written its result."""
    configs = []
    for root, _, files in os.walk(path):
        result_json = os.path.join(root, "result.json")
        if "params.json" in files and "result.json" in files and os.path.getsize(result_json):
            with open(os.path.join(root, "params.json")) as f:
                configs.append(json.load(f))
    return configs


first_run = subprocess.Popen([sys.executable, __file__, "--first-run"])
# Press Ctrl-C once three trials have finished.
deadline = time.monotonic() + 240
while len(finished_configs()) < 3:
    assert first_run.poll() is None, "the first run ended before it was interrupted"
    assert time.monotonic() < deadline, "the first run finished no trial"
    time.sleep(0.02)
first_run.send_signal(signal.SIGINT)
first_run.wait(timeout=240)
before = finished_configs()
assert 3 <= len(before) < NUM_SAMPLES, before

assert tune.Tuner.can_restore(path)
results = tune.Tuner.restore(path, trainable=objective).fit()

assert len(results) == NUM_SAMPLES
assert not results.errors
configs = [result.config for result in results]
# The trials finished before Ctrl-C are kept, and the searcher suggested
# only new configs after the resume: no trial twice, none lost.
for config in before:
    assert config in configs, (config, configs)
assert len({(c["x"], c["y"]) for c in configs}) == NUM_SAMPLES, configs
assert all(-5 <= c["x"] <= 5 and c["y"] in (0, 1) for c in configs), configs
best = results.get_best_result()
assert best.metrics["loss"] == min(r.metrics["loss"] for r in results)
