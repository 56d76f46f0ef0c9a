# mypy: ignore-errors
"""Looking at a search space with Ray's domain types.

User code that converts a Tune search space for another tool (or logs it)
walks the `param_space` and tells a domain from a constant with
`ray.tune.search.sample`'s types, as Ray's own searcher integrations do
(python/ray/tune/search/optuna/optuna_search.py, `convert_search_space`:
`isinstance(domain, Float)`, `Integer`, `Categorical`; `Domain` for
"is this still to be sampled").
"""

import tunecore as tune
from tunecore.search.sample import Categorical, Domain, Float, Function, Integer


def describe(space, prefix=""):
    """Each parameter's kind, by its path."""
    kinds = {}
    for key, value in space.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and "grid_search" not in value:
            kinds.update(describe(value, f"{path}/"))
        elif isinstance(value, Float):
            kinds[path] = "float"
        elif isinstance(value, Integer):
            kinds[path] = "int"
        elif isinstance(value, Categorical):
            kinds[path] = "categorical"
        elif isinstance(value, Function):
            kinds[path] = "function"
        elif isinstance(value, Domain):
            kinds[path] = "other domain"
        else:
            kinds[path] = "constant"
    return kinds


space = {
    "lr": tune.loguniform(1e-4, 1e-1),
    "momentum": tune.quniform(0.1, 0.9, 0.1),
    "noise": tune.randn(0, 1),
    "layers": tune.randint(1, 4),
    "width": tune.qlograndint(8, 128, 8),
    "activation": tune.choice(["relu", "tanh"]),
    "nested": {"dropout": tune.uniform(0, 0.5), "seed": 7},
    "scaled": tune.sample_from(lambda config: config["lr"] * 10),
    "batch": 32,
}
assert describe(space) == {
    "lr": "float",
    "momentum": "float",
    "noise": "float",
    "layers": "int",
    "width": "int",
    "activation": "categorical",
    "nested/dropout": "float",
    "nested/seed": "constant",
    "scaled": "function",
    "batch": "constant",
}
# A grid is not a domain (in Ray it is a plain dict).
assert not isinstance(tune.grid_search([1, 2]), Domain)


def trainable(config):
    assert not any(isinstance(value, Domain) for value in config.values())
    tune.report({"score": config["lr"] * config["layers"]})


results = tune.Tuner(trainable, param_space=space, tune_config=tune.TuneConfig(num_samples=2)).fit()
assert not results.errors
assert len(results) == 2
