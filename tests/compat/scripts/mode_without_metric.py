# mypy: ignore-errors
"""A scheduler, or the `TuneConfig`, given a `mode` and no metric, as Ray
Tune's docs allow ("If None but a mode was passed, the anonymous metric
`_metric` will be used per default": `ASHAScheduler`'s docstring, and
`TuneConfig`'s metric and mode).

Ray Tune 2.60 gives such a scheduler the anonymous metric `_metric`, which
a function trainable's returned number is reported as, and strict metric
checking passes over: a scheduler acts on results that carry it and lets
the others be. With only `TuneConfig(mode=...)`, `get_best_result()` ranks
by `_metric`; with the mode given only to the scheduler it has no metric.
"""

import tempfile

import tunecore as tune
from tunecore.schedulers import ASHAScheduler


def train_anonymous(config):
    for step in range(1, 5):
        tune.report({"_metric": config["x"] * step})


def train_named(config):
    for step in range(1, 5):
        tune.report({"score": config["x"] * step})


def run(trainable, tune_config):
    return tune.Tuner(
        trainable,
        param_space={"x": tune.grid_search([4, 3, 2, 1])},
        tune_config=tune_config,
        run_config=tune.RunConfig(storage_path=tempfile.mkdtemp(), verbose=0),
    ).fit()


def iterations(results):
    return {r.config["x"]: r.metrics["training_iteration"] for r in results}


def asha():
    return ASHAScheduler(mode="max", max_t=4, grace_period=1, reduction_factor=2)


# ASHA ranks by `_metric`: one trial at a time, each worse than the first
# stops at the first rung.
results = run(train_anonymous, tune.TuneConfig(scheduler=asha(), max_concurrent_trials=1))
assert not results.errors, results.errors
assert iterations(results) == {4: 4, 3: 1, 2: 1, 1: 1}, iterations(results)
try:
    results.get_best_result()
except ValueError:
    pass  # the mode was the scheduler's: the results have no metric
else:
    raise AssertionError("get_best_result() ranked by a metric nobody gave")

# Results without `_metric`: no trial fails and ASHA stops none.
results = run(train_named, tune.TuneConfig(scheduler=asha()))
assert not results.errors, results.errors
assert iterations(results) == {4: 4, 3: 4, 2: 4, 1: 4}, iterations(results)
assert results.get_best_result(metric="score", mode="max").config == {"x": 4}


# TuneConfig's mode alone: the returned number is the metric.
def objective(config):
    return (config["x"] - 2) ** 2 + 1


results = run(objective, tune.TuneConfig(mode="min"))
assert not results.errors, results.errors
best = results.get_best_result()
assert best.config == {"x": 2}, best.config
assert best.metrics["_metric"] == 1, best.metrics
print("a mode without a metric: the anonymous metric _metric")
