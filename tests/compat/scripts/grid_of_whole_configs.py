# mypy: ignore-errors
# timeout: 600
"""Ready-made configs, one trial each: the whole space is one
`grid_search` over dicts.

Follows the discuss.ray.io thread "Why does tune.run(config=tune.grid_search(...))
work?" (Ray's `grid_search` returns `{"grid_search": [...]}`, a dict, which
its variant generator resolves at the top like any nested grid), as
`tune.run(config=...)`, as `Tuner(param_space=...)`, and in its dict
spelling.
"""

import tunecore as tune


def some_function(config):
    tune.report({"score": config["a"] * 10 + config.get("b", 0)})


config0 = {"a": 1}
config1 = {"a": 2, "b": 5}

analysis = tune.run(some_function, config=tune.grid_search([config0, config1]))
assert sorted(trial.config["a"] for trial in analysis.trials) == [1, 2]
assert analysis.get_best_config(metric="score", mode="max") == {"a": 2, "b": 5}

results = tune.Tuner(some_function, param_space=tune.grid_search([config0, config1])).fit()
assert sorted((r.config["a"], r.metrics["score"]) for r in results) == [(1, 10), (2, 25)]
assert sorted(len(r.config) for r in results) == [1, 2]

results = tune.Tuner(some_function, param_space={"grid_search": [config1]}).fit()
assert [r.config for r in results] == [{"a": 2, "b": 5}]
