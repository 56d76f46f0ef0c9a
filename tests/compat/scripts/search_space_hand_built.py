# mypy: ignore-errors
"""A search space built by hand from `ray.tune.search.sample`'s classes.

Ray Tune's search-space functions are one-line builders of these classes
(python/ray/tune/search/sample.py: `tune.uniform(a, b)` is
`Float(a, b).uniform()`, `tune.qrandint` is
`Integer(a, b).uniform().quantized(q)`, `tune.choice` is
`Categorical(c).uniform()`, `tune.randn` is `Float(None, None).normal()`),
and code that writes spaces for several tools builds them the same way and
reads them back as Ray's searchers do (`get_sampler()`, `Quantized`,
`LogUniform`, `lower`/`upper`, `categories`: optuna_search.py's
`convert_search_space`). The space then goes to a `Tuner` (with a grid
made by `Categorical(...).grid()`) and to `OptunaSearch`.

On Ray Tune 2.60 (tests/compat/on_ray_tune.py): passes.
"""

import math

import numpy as np

import tunecore as tune
from tunecore.search.optuna import OptunaSearch
from tunecore.search.sample import (
    Categorical,
    Domain,
    Float,
    Function,
    Integer,
    LogUniform,
    Normal,
    Quantized,
    Uniform,
)

space = {
    "lr": Float(1e-4, 1e-1).loguniform(),
    "momentum": Float(0.5, 0.9).uniform().quantized(0.1),
    "noise": Float(None, None).normal(0, 0.1),
    "layers": Integer(1, 4).uniform(),
    "width": Integer(8, 64).uniform().quantized(8),
    "activation": Categorical(["relu", "tanh"]).uniform(),
    "scaled_lr": Function(lambda spec: spec.config.lr * 10),
}


def describe(domain):
    """A tool-neutral description, read as Ray's searchers read a domain."""
    sampler = domain.get_sampler()
    q = None
    if isinstance(sampler, Quantized):
        q = sampler.q
        sampler = sampler.get_sampler()
    if isinstance(domain, Categorical):
        return ("categorical", domain.categories)
    kind = "float" if isinstance(domain, Float) else "int"
    if isinstance(sampler, Normal):
        return (kind, "normal", sampler.mean, sampler.sd, q)
    scale = "log" if isinstance(sampler, LogUniform) else "linear"
    assert isinstance(sampler, Uniform | LogUniform)
    return (kind, scale, domain.lower, domain.upper, q)


described = {key: describe(value) for key, value in space.items() if not value.is_function()}
assert described == {
    "lr": ("float", "log", 1e-4, 1e-1, None),
    "momentum": ("float", "linear", 0.5, 0.9, 0.1),
    "noise": ("float", "normal", 0, 0.1, None),
    "layers": ("int", "linear", 1, 4, None),
    "width": ("int", "linear", 8, 64, 8),
    "activation": ("categorical", ["relu", "tanh"]),
}, described
assert all(isinstance(value, Domain) for value in space.values())
assert not space["activation"].is_grid() and Categorical([1, 2]).grid().is_grid()
assert space["scaled_lr"].is_function()

# Ray's sample() draws with numpy: `tune.uniform(a, b)` "is equivalent to
# np.random.uniform(a, b)", here from a seeded generator.
assert Float(2, 5).uniform().sample(random_state=11) == np.random.default_rng(11).uniform(2, 5)
assert Integer(0, 50).uniform().sample(random_state=11) == np.random.default_rng(11).integers(0, 50)
widths = space["width"].sample(size=50, random_state=3)
assert all(width % 8 == 0 and 8 <= width <= 64 for width in widths), widths
assert space["scaled_lr"].sample(config={"lr": 0.01}) == 0.1


def trainable(config):
    assert 1e-4 <= config["lr"] <= 1e-1
    assert math.isclose(config["scaled_lr"], config["lr"] * 10)
    assert config["width"] % 8 == 0
    assert config["activation"] in ("relu", "tanh")
    tune.report({"loss": config["lr"] * config["layers"] + abs(config["noise"])})


grid_space = {**space, "optimizer": Categorical(["sgd", "adam"]).grid()}
results = tune.Tuner(
    trainable, param_space=grid_space, tune_config=tune.TuneConfig(num_samples=2)
).fit()
assert not results.errors
assert len(results) == 4
assert sorted(result.config["optimizer"] for result in results) == ["adam", "adam", "sgd", "sgd"]

searched = {key: value for key, value in space.items() if key not in ("noise", "scaled_lr")}
results = tune.Tuner(
    lambda config: tune.report({"loss": config["lr"] * config["layers"]}),
    tune_config=tune.TuneConfig(
        search_alg=OptunaSearch(space=searched, metric="loss", mode="min"), num_samples=3
    ),
).fit()
assert not results.errors
assert len(results) == 3
assert all(result.config["width"] % 8 == 0 for result in results)
