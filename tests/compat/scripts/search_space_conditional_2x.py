# mypy: ignore-errors
# timeout: 180
"""Conditional and nested search spaces with `sample_from` and `grid_search`.

Follows Ray Tune's "Working with Tune Search Spaces" guide
(tutorials/tune-search-spaces.md: "How to use Custom and Conditional
Search Spaces in Tune?", "How do I access relative filepaths", the
nested-dict and list-of-dicts spaces), with a trivial trainable.
"""

import numpy as np

import tunecore as tune


def trainable(config):
    tune.report({"score": config["alpha"] + config["beta"], **{"q": 1}})


param_space = {
    "alpha": tune.sample_from(lambda spec: np.random.uniform(100)),
    "beta": tune.sample_from(lambda spec: spec.config.alpha * np.random.normal()),
    "nn_layers": [
        tune.grid_search([16, 64, 256]),
        tune.grid_search([16, 64, 256]),
    ],
}
tuner = tune.Tuner(trainable, param_space=param_space)
results = tuner.fit()
assert len(results) == 9 and not results.errors
layers = sorted(tuple(r.config["nn_layers"]) for r in results)
assert layers == sorted((a, b) for a in (16, 64, 256) for b in (16, 64, 256))

# The same with a nested grid: the conditional value reads the grid value.
param_space = {
    "x": tune.grid_search([1, 2]),
    "y": tune.sample_from(lambda spec: spec.config.x * 10),
    "nested": {"a": tune.choice([3]), "b": tune.sample_from(lambda spec: spec.config.nested.a + 1)},
}
results = tune.Tuner(
    lambda c: tune.report({"v": c["y"] + c["nested"]["b"]}),
    param_space=param_space,
).fit()
assert sorted(r.metrics["v"] for r in results) == [14, 24]
df = results.get_dataframe()
assert sorted(df["config/y"]) == [10, 20] and list(df["config/nested/b"]) == [4, 4]

# Ray's docs: `tune.sample_from(lambda _: np.random.uniform(100) ** 2)` etc.
param_space = {
    "a": tune.sample_from(lambda _: np.random.uniform(100) ** 2),
    "b": tune.sample_from(lambda spec: spec.config["a"] * 0),
}
results = tune.Tuner(
    lambda c: {"b": c["b"]}, param_space=param_space, tune_config=tune.TuneConfig(num_samples=3)
).fit()
assert len(results) == 3 and all(r.metrics["b"] == 0 for r in results)
