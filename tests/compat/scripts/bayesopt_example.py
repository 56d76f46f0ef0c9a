# mypy: ignore-errors
"""BayesOpt with a concurrency limit and a separate scheduler.

Follows Ray Tune's python/ray/tune/examples/bayesopt_example.py (Ray 2.x),
with the imports rewritten. Smaller than Ray's run to stay fast: 14
samples (Ray: 1000, or 10 with --smoke-test; 14 is past BayesOpt's 10
random steps, so the Gaussian process suggests the last 4), 10 steps per
trial instead of 100 and 0.01 s sleeps instead of 0.1 s.
"""

import time

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler
from tunecore.search import ConcurrencyLimiter
from tunecore.search.bayesopt import BayesOptSearch


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
        time.sleep(0.01)


algo = BayesOptSearch(utility_kwargs={"kind": "ucb", "kappa": 2.5, "xi": 0.0})
algo = ConcurrencyLimiter(algo, max_concurrent=4)
scheduler = AsyncHyperBandScheduler()
tuner = tune.Tuner(
    easy_objective,
    tune_config=tune.TuneConfig(
        metric="mean_loss",
        mode="min",
        search_alg=algo,
        scheduler=scheduler,
        num_samples=14,
    ),
    run_config=tune.RunConfig(
        name="my_exp",
    ),
    param_space={
        "steps": 10,
        "width": tune.uniform(0, 20),
        "height": tune.uniform(-100, 100),
    },
)
results = tuner.fit()

print("Best hyperparameters found were: ", results.get_best_result().config)

assert len(results) == 14
assert not results.errors
configs = [r.config for r in results]
# Every config is BayesOpt's: inside the bounds, the constant kept, no two alike.
assert all(0 <= c["width"] <= 20 and -100 <= c["height"] <= 100 for c in configs)
assert all(c["steps"] == 10 for c in configs)
assert len({(c["width"], c["height"]) for c in configs}) == 14
best = results.get_best_result()
assert best.metrics["mean_loss"] == min(r.metrics["mean_loss"] for r in results)
