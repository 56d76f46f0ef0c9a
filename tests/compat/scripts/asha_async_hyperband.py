# mypy: ignore-errors
"""Early stopping with ASHA, a function trainable given resources.

Follows Ray Tune's python/ray/tune/examples/async_hyperband_example.py and
the early-stopping part of doc/source/tune/doc_code/stopping.py
(__early_stopping__), at a smoke-test size.
"""

import time

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler


def evaluation_fn(step, width, height):
    time.sleep(0.01)
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def easy_objective(config):
    # Hyperparameters
    width, height = config["width"], config["height"]

    for step in range(config["steps"]):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluation_fn(step, width, height)
        # Feed the score back back to Tune.
        tune.report({"iterations": step, "mean_loss": intermediate_score})


# AsyncHyperBand enables aggressive early stopping of bad trials.
scheduler = AsyncHyperBandScheduler(grace_period=1, max_t=9)

tuner = tune.Tuner(
    tune.with_resources(easy_objective, {"cpu": 1, "gpu": 0}),
    run_config=tune.RunConfig(name="asynchyperband_test", stop={"training_iteration": 9999}),
    tune_config=tune.TuneConfig(metric="mean_loss", mode="min", scheduler=scheduler, num_samples=8),
    param_space={
        "steps": 100,
        "width": tune.uniform(10, 100),
        "height": tune.uniform(0, 100),
    },
)
results = tuner.fit()
print("Best hyperparameters found were: ", results.get_best_result().config)

assert len(results) == 8
assert not results.errors
iterations = [r.metrics["training_iteration"] for r in results]
# No trial runs past max_t, and the bad ones are stopped at a rung.
assert max(iterations) == 9, iterations
assert min(iterations) < 9, iterations
# The best trial is one that survived every rung.
best = results.get_best_result()
assert best.metrics["training_iteration"] == 9
assert 10 <= best.config["width"] <= 100 and 0 <= best.config["height"] <= 100
