# mypy: ignore-errors
# requires: zoopt
"""A searcher with a space of its own (ZOOpt's `dim_dict`) beside a param
space of constants: every trial's config holds the constants.

Follows the second example of `ZOOptSearch`'s docstring in Ray Tune 2.60
(python/ray/tune/search/zoopt/zoopt_search.py: `dim_dict` with CONTINUOUS,
DISCRETE and GRID values, `"config": {"iterations": 10}` as the Tuner's
param_space, `budget` matching `num_samples`, `stop={"timesteps_total":
10}`), made runnable: the objective is given, the fragment's `"config":`
made the `config` it names, budget and samples 20 -> 6, iterations 10 -> 3,
parallel_num 8 -> 2. Ray Tune merges the param space into each suggestion
(its SearchGenerator), so the objective reads `config["iterations"]`; on
tunecore every trial failed with KeyError: 'iterations' until the constants
went into the configs of a searcher keeping its own space.
"""

from zoopt import ValueType

import tunecore as tune
from tunecore.search.zoopt import ZOOptSearch


def my_objective(config):
    for i in range(config["iterations"]):
        loss = (config["width"] - 1) ** 2 + config["height"] ** 2 / (i + 1)
        tune.report({"mean_loss": loss, "timesteps_total": i})


dim_dict = {
    "height": (ValueType.CONTINUOUS, [-10, 10], 1e-2),
    "width": (ValueType.DISCRETE, [-10, 10], False),
    "layers": (ValueType.GRID, [4, 8, 16]),
}

config = {
    "iterations": 3,  # evaluation times
}

zoopt_search_config = {
    "parallel_num": 2,  # how many workers to parallel
}

zoopt_search = ZOOptSearch(
    algo="Asracos",  # only support Asracos currently
    budget=6,  # must match `num_samples` in `tune.TuneConfig()`.
    dim_dict=dim_dict,
    metric="mean_loss",
    mode="min",
    **zoopt_search_config,
)

tuner = tune.Tuner(
    my_objective,
    tune_config=tune.TuneConfig(search_alg=zoopt_search, num_samples=6),
    run_config=tune.RunConfig(name="zoopt_search", stop={"timesteps_total": 10}),
    param_space=config,
)
results = tuner.fit()

assert len(results) == 6
assert not results.errors, results.errors
assert all(r.config["iterations"] == 3 and r.config["layers"] in (4, 8, 16) for r in results)
assert all(r.metrics["training_iteration"] == 3 for r in results)
