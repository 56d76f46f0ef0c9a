# mypy: ignore-errors
# requires: ax, torch
# timeout: 600
"""Ax on the Hartmann-6 function with a parameter constraint, an outcome
constraint, a concurrency limit and a separate scheduler.

Follows Ray Tune's python/ray/tune/examples/ax_example.py (Ray 2.x), with
the imports rewritten. Smaller than Ray's run to stay fast: 6 samples
(Ray: 10 with --smoke-test, else 50; Ax's first 5 are Sobol points), 10
iterations per trial instead of 100 and no sleeps.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0, ax-platform 1.3.1 with botorch 0.18.1, torch 2.13.0 CPU,
2026-12-06): fails before any trial, in Ray's AxSearch, which drives Ax's
deprecated AxClient: `ray/tune/search/ax/ax_search.py", line 296, in
_setup_experiment: objectives = exp.optimization_config.objective.objectives
AttributeError: 'Objective' object has no attribute 'objectives'`.
tunecore's AxSearch drives Ax's `Client` (docs/search.md).
"""

import numpy as np

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler
from tunecore.search import ConcurrencyLimiter
from tunecore.search.ax import AxSearch


def hartmann6(x):
    alpha = np.array([1.0, 1.2, 3.0, 3.2])
    A = np.array(
        [
            [10, 3, 17, 3.5, 1.7, 8],
            [0.05, 10, 17, 0.1, 8, 14],
            [3, 3.5, 1.7, 10, 17, 8],
            [17, 8, 0.05, 10, 0.1, 14],
        ]
    )
    P = 10 ** (-4) * np.array(
        [
            [1312, 1696, 5569, 124, 8283, 5886],
            [2329, 4135, 8307, 3736, 1004, 9991],
            [2348, 1451, 3522, 2883, 3047, 6650],
            [4047, 8828, 8732, 5743, 1091, 381],
        ]
    )
    y = 0.0
    for j, alpha_j in enumerate(alpha):
        t = 0
        for k in range(6):
            t += A[j, k] * ((x[k] - P[j, k]) ** 2)
        y -= alpha_j * np.exp(-t)
    return y


def easy_objective(config):
    for i in range(config["iterations"]):
        x = np.array([config.get("x{}".format(i + 1)) for i in range(6)])
        tune.report(
            {
                "timesteps_total": i,
                "hartmann6": hartmann6(x),
                "l2norm": np.sqrt((x**2).sum()),
            }
        )


if __name__ == "__main__":
    algo = AxSearch(
        parameter_constraints=["x1 + x2 <= 2.0"],  # Optional.
        outcome_constraints=["l2norm <= 1.25"],  # Optional.
    )
    # Limit to 4 concurrent trials
    algo = ConcurrencyLimiter(algo, max_concurrent=4)
    scheduler = AsyncHyperBandScheduler()
    tuner = tune.Tuner(
        easy_objective,
        run_config=tune.RunConfig(
            name="ax",
            stop={"timesteps_total": 10},
        ),
        tune_config=tune.TuneConfig(
            metric="hartmann6",  # provided in the 'easy_objective' function
            mode="min",
            search_alg=algo,
            scheduler=scheduler,
            num_samples=6,
        ),
        param_space={
            "iterations": 10,
            "x1": tune.uniform(0.0, 1.0),
            "x2": tune.uniform(0.0, 1.0),
            "x3": tune.uniform(0.0, 1.0),
            "x4": tune.uniform(0.0, 1.0),
            "x5": tune.uniform(0.0, 1.0),
            "x6": tune.uniform(0.0, 1.0),
        },
    )
    results = tuner.fit()

    print("Best hyperparameters found were: ", results.get_best_result().config)

    # The outcome Ray Tune gives: every trial ran, within the constraint.
    assert len(results) == 6
    assert not results.errors
    for result in results:
        config = result.config
        assert config["x1"] + config["x2"] <= 2.0
        assert all(0.0 <= config[f"x{i}"] <= 1.0 for i in range(1, 7))
        assert "l2norm" in result.metrics
