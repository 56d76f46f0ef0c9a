# mypy: ignore-errors
"""Experiment-wide stoppers: a timeout and a plateau of the top results.

Follows Ray Tune's Stopper API page (tune/api/stoppers.rst: TimeoutStopper,
ExperimentPlateauStopper) and the "How to Define Stopping Criteria" guide.
"""

import time

import tunecore as tune
from tunecore.stopper import ExperimentPlateauStopper, TimeoutStopper


def slow_trainable(config):
    while True:
        time.sleep(0.1)
        tune.report({"my_metric": config["x"]})


# Stop every trial, and start no new one, once 2 seconds have passed.
tuner = tune.Tuner(
    slow_trainable,
    param_space={"x": tune.grid_search([1.0, 2.0])},
    run_config=tune.RunConfig(stop=TimeoutStopper(timeout=2)),
)
results = tuner.fit()
assert len(results) == 2
assert not results.errors
assert all(r.metrics.get("training_iteration", 0) < 25 for r in results)


def flat_trainable(config):
    for _ in range(100):
        tune.report({"my_metric": 1.0})


# The best results no longer move: stop the whole experiment.
tuner = tune.Tuner(
    flat_trainable,
    param_space={"x": tune.grid_search([1, 2])},
    run_config=tune.RunConfig(
        stop=ExperimentPlateauStopper(metric="my_metric", mode="max", top=3, std=0.001)
    ),
)
results = tuner.fit()
assert len(results) == 2
assert not results.errors
assert all(r.metrics.get("training_iteration", 0) < 100 for r in results)
