# mypy: ignore-errors
# timeout: 180
"""Ray Tune's front-page quickstart, and its older second half written for
the removed `tune.report(**kwargs)`.

Follows python/ray/tune/tests/example.py, which Ray's docs include in the
Tune index page (__quick_start__ and __ml_quick_start__), with the grids
shrunk to two values each. In the second half every trial calls
`tune.report(mean_loss=...)`: on Ray Tune 2.60 as here each trial fails
with a TypeError, the run finishes, asking for the best result by
`mean_loss` raises a RuntimeError (tunecore's is a ValueError too), and
the dataframe has no rows.
"""

import tunecore as tune


# 1. Define an objective function.
def objective(config):
    score = config["a"] ** 2 + config["b"]
    return {"score": score}


# 2. Define a search space.
search_space = {
    "a": tune.grid_search([0.1, 1.0]),
    "b": tune.choice([1, 2, 3]),
}

# 3. Start a Tune run and print the best result.
tuner = tune.Tuner(objective, param_space=search_space)
results = tuner.fit()
best = results.get_best_result(metric="score", mode="min")
print(best.config)
assert len(results) == 2 and not results.errors
assert best.metrics["score"] == min(r.metrics["score"] for r in results)
assert all(r.metrics["score"] == r.config["a"] ** 2 + r.config["b"] for r in results)


def objective(step, alpha, beta):
    return (0.1 + alpha * step / 100) ** (-1) + beta * 0.1


def training_function(config):
    alpha, beta = config["alpha"], config["beta"]
    for step in range(10):
        intermediate_score = objective(step, alpha, beta)
        tune.report(mean_loss=intermediate_score)


tuner = tune.Tuner(
    training_function,
    param_space={
        "alpha": tune.grid_search([0.01, 0.1]),
        "beta": tune.choice([1, 2, 3]),
    },
)
results = tuner.fit()
assert len(results.errors) == 2
assert all("mean_loss" in str(error) for error in results.errors)
message = ""
try:
    results.get_best_result(metric="mean_loss", mode="min")
except RuntimeError as error:
    message = str(error)
assert "mean_loss" in message, "no trial reported mean_loss, yet a best result was found"
# A trial that never reported has no row in the dataframe, as in Ray.
df = results.get_dataframe()
assert len(df) == 0
