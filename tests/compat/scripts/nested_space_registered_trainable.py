# mypy: ignore-errors
"""A nested search space, and a trainable run by its registered name.

Follows Ray Tune's FAQ, doc/source/tune/doc_code/faq.py (__basic_config__:
a nested dict in the space) and the Trainable API reference
(tune/api/trainable.rst: tune.register_trainable, then the name).
"""

import tunecore as tune


def train_fn(config):
    tune.report({"value": config["a"]["x"] * config["b"]})


tune.register_trainable("my_registered_trainable", train_fn)

config = {
    "a": {"x": tune.uniform(0, 10), "kind": tune.grid_search(["p", "q"])},
    "b": tune.choice([1, 2, 3]),
}
results = tune.Tuner(
    "my_registered_trainable",
    param_space=config,
    tune_config=tune.TuneConfig(num_samples=2, metric="value", mode="max"),
).fit()

assert len(results) == 4
assert not results.errors
for result in results:
    assert 0 <= result.config["a"]["x"] <= 10
    assert result.config["a"]["kind"] in ("p", "q")
    assert result.config["b"] in (1, 2, 3)
    assert result.metrics["value"] == result.config["a"]["x"] * result.config["b"]
assert sorted(r.config["a"]["kind"] for r in results) == ["p", "p", "q", "q"]
# The dataframe flattens the nested config with "/".
df = results.get_dataframe()
assert {"config/a/x", "config/a/kind", "config/b"} <= set(df.columns)
