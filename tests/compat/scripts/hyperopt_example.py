# mypy: ignore-errors
"""HyperOpt with a conditional space of hyperopt's own expressions, a
concurrency limit and a separate scheduler.

Follows Ray Tune's python/ray/tune/examples/hyperopt_example.py (Ray 2.x),
with the imports rewritten. Smaller than Ray's run to stay fast: 12 samples
(Ray: 100, or 10 with --smoke-test), 10 steps per trial instead of 100 and
0.01 s sleeps instead of 0.1 s.
"""

import time

from hyperopt import hp

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler
from tunecore.search import ConcurrencyLimiter
from tunecore.search.hyperopt import HyperOptSearch


def f_unpack_dict(dct):
    """
    Unpacks all sub-dictionaries in given dictionary recursively.
    There should be no duplicated keys across all nested
    subdictionaries, or some instances will be lost without warning

    Source: https://www.kaggle.com/fanvacoolt/tutorial-on-hyperopt

    Parameters:
    ----------------
    dct : dictionary to unpack

    Returns:
    ----------------
    : unpacked dictionary
    """

    res = {}
    for k, v in dct.items():
        if isinstance(v, dict):
            res = {**res, **f_unpack_dict(v)}
        else:
            res[k] = v

    return res


def evaluation_fn(step, width, height, mult=1):
    return (0.1 + width * step / 100) ** (-1) + height * 0.1 * mult


def easy_objective(config_in):
    # Hyperparameters
    config = f_unpack_dict(config_in)
    width, height, mult = config["width"], config["height"], config.get("mult", 1)
    print(config)

    for step in range(config["steps"]):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluation_fn(step, width, height, mult)
        # Feed the score back back to Tune.
        tune.report({"iterations": step, "mean_loss": intermediate_score})
        time.sleep(0.01)


config_space = {
    "activation": hp.choice(
        "activation",
        [
            {"activation": "relu", "mult": hp.uniform("mult", 1, 2)},
            {"activation": "tanh"},
        ],
    ),
    "width": hp.uniform("width", 0, 20),
    "height": hp.uniform("heright", -100, 100),
    "steps": 10,
}


def run_hyperopt_tune(config_dict=config_space, smoke_test=False):
    algo = HyperOptSearch(space=config_dict, metric="mean_loss", mode="min")
    algo = ConcurrencyLimiter(algo, max_concurrent=4)
    scheduler = AsyncHyperBandScheduler()
    tuner = tune.Tuner(
        easy_objective,
        tune_config=tune.TuneConfig(
            metric="mean_loss",
            mode="min",
            search_alg=algo,
            scheduler=scheduler,
            num_samples=12,
        ),
    )
    results = tuner.fit()
    print("Best hyperparameters found were: ", results.get_best_result().config)
    return results


results = run_hyperopt_tune()

assert len(results) == 12
assert not results.errors
for result in results:
    config = result.config
    activation = config["activation"]
    # The conditional space: only "relu" has a "mult", inside its own dict.
    assert activation["activation"] in ("relu", "tanh")
    assert ("mult" in activation) == (activation["activation"] == "relu")
    assert 1 <= activation.get("mult", 1) <= 2
    assert 0 <= config["width"] <= 20 and -100 <= config["height"] <= 100
    assert config["steps"] == 10
best = results.get_best_result()
assert best.metrics["mean_loss"] == min(r.metrics["mean_loss"] for r in results)
