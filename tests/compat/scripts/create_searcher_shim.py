# mypy: ignore-errors
"""The search algorithm chosen by name, as from a command-line option.

Follows "Shim Instantiation (tune.create_searcher)" in Ray Tune's Search
Algorithms reference (tune/api/suggestion.rst, and create_searcher's
docstring: `search_alg = tune.create_searcher('ax')`; keyword arguments the
chosen class does not take are dropped). 4 samples per searcher; "bayesopt"
is left out because Ray Tune's BayesOptSearch needs bayesian-optimization
1.x, so the script could not be checked on Ray Tune here.
"""

import argparse

import tunecore as tune
from tunecore.search import BasicVariantGenerator
from tunecore.search.hyperopt import HyperOptSearch
from tunecore.search.optuna import OptunaSearch


def trainable(config):
    tune.report({"loss": (config["x"] - 1) ** 2})


parser = argparse.ArgumentParser()
parser.add_argument("--search-algs", nargs="+", default=["optuna", "HyperOpt", "random"])
args = parser.parse_args()

expected = {"optuna": OptunaSearch, "hyperopt": HyperOptSearch, "random": BasicVariantGenerator}
for name in args.search_algs:
    # `seed` is OptunaSearch's, `random_state_seed` HyperOptSearch's and
    # `random_state` BasicVariantGenerator's: each class takes only its own.
    searcher = tune.create_searcher(
        name, metric="loss", mode="min", seed=1, random_state_seed=1, random_state=1
    )
    assert isinstance(searcher, expected[name.lower()]), (name, searcher)
    results = tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(search_alg=searcher, num_samples=4),
        param_space={"x": tune.uniform(-2, 2)},
    ).fit()
    assert len(results) == 4, name
    assert not results.errors, name
    assert all(-2 <= r.config["x"] <= 2 for r in results), name

try:
    tune.create_searcher("no-such-searcher")
except ValueError as error:
    message = str(error)
else:
    raise AssertionError("an unknown search algorithm name was accepted")
assert "no-such-searcher" in message, message
