# mypy: ignore-errors
"""The basic example: random search crossed with a grid, best config.

Follows Ray Tune's python/ray/tune/examples/tune_basic_example.py, at a
smoke-test size.
"""

import time

import tunecore as tune


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


tuner = tune.Tuner(
    easy_objective,
    tune_config=tune.TuneConfig(metric="mean_loss", mode="min", num_samples=3),
    param_space={
        "steps": 5,
        "width": tune.uniform(0, 20),
        "height": tune.uniform(-100, 100),
        # This is an ignored parameter.
        "activation": tune.grid_search(["relu", "tanh"]),
    },
)
results = tuner.fit()

best = results.get_best_result()
print("Best hyperparameters found were: ", best.config)

# 3 samples of the random part, each with both grid values.
assert len(results) == 6
assert not results.errors
assert sorted(r.config["activation"] for r in results) == ["relu"] * 3 + ["tanh"] * 3
assert all(r.metrics["training_iteration"] == 5 for r in results)
assert all(r.metrics["iterations"] == 4 for r in results)
assert best.metrics["mean_loss"] == min(r.metrics["mean_loss"] for r in results)
assert 0 <= best.config["width"] <= 20 and -100 <= best.config["height"] <= 100
