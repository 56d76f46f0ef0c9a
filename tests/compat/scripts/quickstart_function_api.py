# mypy: ignore-errors
"""Key concepts: a function trainable, constants, num_samples, a search space.

Follows Ray Tune's doc/source/tune/doc_code/key_concepts.py
(__function_api__, __run_tunable__, __run_tunable_samples__, __search_space__).
"""

import tunecore as tune


def objective(x, a, b):
    return a * (x**2) + b


def trainable(config):
    # 20 "training" iterations, one score each.
    for x in range(20):
        score = objective(x, config["a"], config["b"])
        tune.report({"score": score})


tuner = tune.Tuner(trainable, param_space={"a": 2, "b": 4})
results = tuner.fit()

assert len(results) == 1
assert not results.errors
assert results[0].config == {"a": 2, "b": 4}
assert results[0].metrics["training_iteration"] == 20
assert results[0].metrics["score"] == objective(19, 2, 4)

tuner = tune.Tuner(
    trainable, param_space={"a": 2, "b": 4}, tune_config=tune.TuneConfig(num_samples=3)
)
results = tuner.fit()

assert len(results) == 3
assert all(result.metrics["training_iteration"] == 20 for result in results)

space = {"a": tune.uniform(0, 1), "b": tune.uniform(0, 1)}
tuner = tune.Tuner(trainable, param_space=space, tune_config=tune.TuneConfig(num_samples=4))
results = tuner.fit()

assert len(results) == 4
assert not results.errors
for result in results:
    assert 0 <= result.config["a"] <= 1 and 0 <= result.config["b"] <= 1
    assert result.metrics["training_iteration"] == 20
# Random search draws a different config for every sample.
assert len({result.config["a"] for result in results}) == 4
