# mypy: ignore-errors
"""OptunaSearch with its space given as Optuna distributions: initial
points, points already evaluated (their rewards told instead of run),
a seeded sampler, and two objectives with NSGA-II.

Follows the examples in the docstring of Ray Tune's OptunaSearch
(python/ray/tune/search/optuna/optuna_search.py, shown on the API page
tune/api/doc/ray.tune.search.optuna.OptunaSearch), with a trainable and
assertions added: 6 samples per run instead of the default 1 to keep it
fast.
"""

import optuna

import tunecore as tune
from tunecore.search.optuna import OptunaSearch


def trainable(config):
    loss = (config["a"] - 7) ** 2 + 100 * config["b"]
    tune.report({"loss": loss, "loss1": loss, "loss2": config["a"] * config["b"]})


space = {
    "a": optuna.distributions.FloatDistribution(6, 8),
    "b": optuna.distributions.FloatDistribution(1e-4, 1e-2, log=True),
}


def in_space(config):
    return 6 <= config["a"] <= 8 and 1e-4 <= config["b"] <= 1e-2


# Configs evaluated first.
optuna_search = OptunaSearch(
    space,
    points_to_evaluate=[{"a": 6.5, "b": 5e-4}, {"a": 7.5, "b": 1e-3}],
    metric="loss",
    mode="min",
)
tuner = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(search_alg=optuna_search, num_samples=6),
)
results = tuner.fit()

assert len(results) == 6
assert not results.errors
configs = [result.config for result in results]
assert {"a": 6.5, "b": 5e-4} in configs and {"a": 7.5, "b": 1e-3} in configs, configs
assert all(set(config) == {"a", "b"} and in_space(config) for config in configs), configs
best = results.get_best_result("loss", "min")
assert best.metrics["loss"] == min(result.metrics["loss"] for result in results)

# Points already evaluated: their rewards are told, they are not run again.
optuna_search = OptunaSearch(
    space,
    points_to_evaluate=[{"a": 6.5, "b": 5e-4}, {"a": 7.5, "b": 1e-3}],
    evaluated_rewards=[0.89, 0.42],
    metric="loss",
    mode="min",
)
tuner = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(search_alg=optuna_search, num_samples=6),
)
results = tuner.fit()

assert len(results) == 6
assert not results.errors
configs = [result.config for result in results]
assert {"a": 6.5, "b": 5e-4} not in configs and {"a": 7.5, "b": 1e-3} not in configs, configs
assert all(in_space(config) for config in configs), configs


# A seeded sampler: the same seed suggests the same configs, run after run.
def seeded_configs():
    optuna_search = OptunaSearch(
        space,
        metric="loss",
        mode="min",
        sampler=optuna.samplers.TPESampler(seed=42),
    )
    tuner = tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(
            search_alg=optuna_search, num_samples=4, max_concurrent_trials=1
        ),
    )
    return sorted((r.config["a"], r.config["b"]) for r in tuner.fit())


first = seeded_configs()
assert len(set(first)) == 4, first
assert seeded_configs() == first

# Multi-objective: metric and mode on the searcher, not in TuneConfig.
optuna_search = OptunaSearch(
    space,
    metric=["loss1", "loss2"],
    mode=["min", "max"],
    sampler=optuna.samplers.NSGAIISampler(seed=7),
)
tuner = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(search_alg=optuna_search, num_samples=6),
)
results = tuner.fit()

assert len(results) == 6
assert not results.errors
assert all(in_space(result.config) for result in results)
best_loss1 = results.get_best_result(metric="loss1", mode="min")
best_loss2 = results.get_best_result(metric="loss2", mode="max")
assert best_loss1.metrics["loss1"] == min(r.metrics["loss1"] for r in results)
assert best_loss2.metrics["loss2"] == max(r.metrics["loss2"] for r in results)
