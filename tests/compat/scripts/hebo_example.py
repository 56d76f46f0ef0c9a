# mypy: ignore-errors
# requires: hebo, torch
# timeout: 400
"""HEBO with a warm start (points evaluated before, with their rewards), a
seed for reproducibility and a separate scheduler.

Follows Ray Tune's python/ray/tune/examples/hebo_example.py (Ray 2.x),
with the imports rewritten. Smaller than Ray's run to stay fast: 10
samples (as Ray's --smoke-test), 10 steps per trial instead of 100 and no
sleeps.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0, HEBO 0.3.6 with pymoo 0.6.0.1, torch 2.13.0 CPU, Python 3.11,
2026-12-06): passes (630 s on a shared two-core machine). `pip install
HEBO` beside Ray does not: HEBO pins numpy < 1.25, with which the resolver
takes GPy 1.9.9, whose build fails on Python 3.11
(`GPy/kern/src/stationary_cython.c:196:12: fatal error: longintrepr.h: No
such file or directory`); HEBO installed without its pins, as the
searchers_torch nox session installs it, runs.
"""

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler
from tunecore.search.hebo import HEBOSearch


def evaluation_fn(step, width, height):
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def easy_objective(config):
    # Hyperparameters
    width, height = config["width"], config["height"]

    for step in range(config["steps"]):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluation_fn(step, width, height)
        # Feed the score back back to Tune.
        tune.report({"iterations": step, "mean_loss": intermediate_score})


if __name__ == "__main__":
    # The config will be automatically converted to HEBO's DesignSpace

    # Optional: Pass the parameter space yourself
    #
    # from hebo.design_space.design_space import DesignSpace
    # space_cfg = [
    #     {"name": "width", "type": "num", "lb": 0, "ub": 20},
    #     {"name": "height", "type": "num", "lb": -100, "ub": 100},
    #     {"name": "activation", "type": "cat", "categories": ["relu", "tanh"]},
    # ]
    # space = DesignSpace().parse(space_cfg)

    previously_run_params = [
        {"width": 10, "height": 0, "activation": "relu"},  # Activation will be relu
        {"width": 15, "height": -20, "activation": "tanh"},  # Activation will be tanh
    ]
    known_rewards = [-189, -1144]

    # maximum number of concurrent trials
    max_concurrent = 8

    algo = HEBOSearch(
        # space = space, # If you want to set the space
        points_to_evaluate=previously_run_params,
        evaluated_rewards=known_rewards,
        random_state_seed=123,  # for reproducibility
        max_concurrent=max_concurrent,
    )

    scheduler = AsyncHyperBandScheduler()

    tuner = tune.Tuner(
        easy_objective,
        tune_config=tune.TuneConfig(
            metric="mean_loss",
            mode="min",
            search_alg=algo,
            scheduler=scheduler,
            num_samples=10,
        ),
        run_config=tune.RunConfig(name="hebo_exp_with_warmstart"),
        param_space={
            "steps": 10,
            "width": tune.uniform(0, 20),
            "height": tune.uniform(-100, 100),
            "activation": tune.choice(["relu", "tanh"]),
        },
    )
    results = tuner.fit()

    print("Best hyperparameters found were: ", results.get_best_result().config)

    # The outcome Ray Tune gives: the evaluated points are told, not run again.
    assert len(results) == 10
    assert not results.errors
    configs = [result.config for result in results]
    for point in previously_run_params:
        assert {**point, "steps": 10} not in configs
    for config in configs:
        assert 0 <= config["width"] <= 20
        assert -100 <= config["height"] <= 100
