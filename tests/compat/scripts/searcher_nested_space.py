# mypy: ignore-errors
"""One nested search space of Tune's domains, converted for Optuna and for
HyperOpt: floats, log scales, integers, quantized values, choices and
constants, in nested dicts.

Follows Ray Tune's "Working with Tune Search Spaces"
(tune/tutorials/tune-search-spaces.rst: the search space API, nested
param_space dicts) and the Search Algorithms reference (tune/api/
suggestion.rst: "Tune will automatically convert search spaces passed to
Tuner to the library format"). 6 samples per searcher.
"""

import tunecore as tune
from tunecore.search.hyperopt import HyperOptSearch
from tunecore.search.optuna import OptunaSearch

param_space = {
    "model": {
        "layers": tune.randint(1, 5),
        "units": tune.qrandint(32, 256, 32),
        "activation": tune.choice(["relu", "tanh", "gelu"]),
    },
    "optimizer": {
        "lr": tune.loguniform(1e-4, 1e-1),
        "momentum": tune.quniform(0.5, 0.95, 0.05),
        "name": "sgd",
    },
    "dropout": tune.uniform(0.0, 0.5),
    "epochs": 3,
}


def trainable(config):
    model, optimizer = config["model"], config["optimizer"]
    for epoch in range(config["epochs"]):
        loss = (
            abs(optimizer["lr"] - 0.01) * 10
            + config["dropout"]
            + model["layers"] / model["units"]
            + (0.1 if model["activation"] == "tanh" else 0.0)
            + (1 - optimizer["momentum"]) / (epoch + 1)
        )
        tune.report({"loss": loss})


for searcher in (OptunaSearch(seed=3), HyperOptSearch(random_state_seed=3)):
    tuner = tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(search_alg=searcher, metric="loss", mode="min", num_samples=6),
        param_space=param_space,
    )
    results = tuner.fit()
    name = type(searcher).__name__

    assert len(results) == 6, name
    assert not results.errors, name
    for result in results:
        config = result.config
        model, optimizer = config["model"], config["optimizer"]
        assert set(config) == {"model", "optimizer", "dropout", "epochs"}, (name, config)
        assert config["epochs"] == 3 and optimizer["name"] == "sgd", (name, config)
        assert isinstance(model["layers"], int) and 1 <= model["layers"] < 5, (name, config)
        assert isinstance(model["units"], int), (name, config)
        assert model["units"] % 32 == 0 and 32 <= model["units"] <= 256, (name, config)
        assert model["activation"] in ("relu", "tanh", "gelu"), (name, config)
        assert 1e-4 <= optimizer["lr"] <= 1e-1, (name, config)
        momentum_steps = optimizer["momentum"] / 0.05
        assert abs(momentum_steps - round(momentum_steps)) < 1e-6, (name, config)
        assert 0.5 <= optimizer["momentum"] <= 0.95, (name, config)
        assert 0.0 <= config["dropout"] <= 0.5, (name, config)
        assert result.metrics["training_iteration"] == 3, (name, result.metrics)
    best = results.get_best_result()
    assert best.metrics["loss"] == min(r.metrics["loss"] for r in results), name
    df = results.get_dataframe()
    assert "config/model/units" in df.columns and "config/optimizer/lr" in df.columns, name
