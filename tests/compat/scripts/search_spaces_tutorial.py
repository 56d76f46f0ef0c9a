# mypy: ignore-errors
"""The search-space tutorial's spaces: random primitives beside constants,
and `sample_from` lambdas that read the config they are given
(`config["alpha"]`) or ignore it.

Follows Ray Tune's "Working with Tune Search Spaces",
doc/source/tune/tutorials/tune-search-spaces.md, with a trainable and the
grid's values filled in and the larger runs shrunk.
"""

import numpy as np

import tunecore as tune
from tunecore import RunConfig


def trainable(config):
    tune.report({"score": 1})


my_trainable = trainable

# A constant beside the random primitives; a lambda that ignores its argument.
tuner = tune.Tuner(
    trainable,
    param_space={
        "param1": tune.choice([True, False]),
        "bar": tune.uniform(0, 10),
        "alpha": tune.sample_from(lambda _: np.random.uniform(100) ** 2),
        "const": "hello",  # It is also ok to specify constant values.
    },
)
results = tuner.fit()
assert results[0].config["const"] == "hello"
assert 0 <= results[0].config["bar"] <= 10
assert results[0].config["param1"] in (True, False)

# The tutorial's `tune.randn([0, 1, 2])` (a list as the mean) is refused:
# Ray Tune fails to sample it when the run starts (ValueError), tunecore
# when the domain is built (its InvalidFieldError is a ValueError).
try:
    tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(num_samples=3),
        param_space={"x": tune.choice([0, 1, 2]), "y": tune.randn([0, 1, 2])},
    ).fit()
except ValueError as error:
    print("refused:", error)
else:
    raise AssertionError("a list as randn's mean was sampled")

# A conditional space over a nested grid: beta reads the alpha of its own
# config, through the config subscript the tutorial uses.
tuner = tune.Tuner(
    my_trainable,
    run_config=RunConfig(name="my_trainable"),
    param_space={
        "alpha": tune.sample_from(lambda _: np.random.uniform(100)),
        "beta": tune.sample_from(lambda config: config["alpha"] * np.random.normal()),
        "nn_layers": [
            tune.grid_search([16, 64]),
            tune.grid_search([16, 64]),
        ],
    },
)
results = tuner.fit()
assert len(results) == 4 and not results.errors
assert sorted(tuple(r.config["nn_layers"]) for r in results) == [
    (16, 16),
    (16, 64),
    (64, 16),
    (64, 64),
]
assert all(isinstance(r.config["beta"], float) for r in results)
assert len({r.config["alpha"] for r in results}) == 4
