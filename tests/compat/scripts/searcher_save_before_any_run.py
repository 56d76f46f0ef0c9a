# mypy: ignore-errors
"""A searcher saved before it ever ran, and restored into a new one.

Follows "Saving and Restoring Tune Search Algorithms" in Ray Tune 2.60's
doc/source/tune/api/suggestion.rst as the page writes it: `HyperOptSearch()`
with no space, metric or mode, so its `fit()` fails (Ray: RuntimeError,
tunecore: a ValueError naming `param_space`), then `search_alg.save(...)`
and `search_alg2.restore(...)`. Ray's save of a searcher that never ran
writes its untouched state; tunecore's raised a RuntimeError until the
unused searcher's file said it has no history. The restored searcher then
runs a space given the way the page leaves out.
"""

import tunecore as tune
from tunecore.search.hyperopt import HyperOptSearch


def train_fn(config):
    # This objective function is just for demonstration purposes
    tune.report({"loss": config["param"]})


search_alg = HyperOptSearch()

tuner_1 = tune.Tuner(train_fn, tune_config=tune.TuneConfig(search_alg=search_alg))
try:
    tuner_1.fit()
except (RuntimeError, ValueError) as error:
    print("no search space:", type(error).__name__)
else:
    raise AssertionError("a searcher without a space ran")

search_alg.save("./my-checkpoint.pkl")

# Restore the saved state onto another search algorithm,
# in a new tuning script
search_alg2 = HyperOptSearch()
search_alg2.restore("./my-checkpoint.pkl")

tuner_2 = tune.Tuner(
    train_fn,
    tune_config=tune.TuneConfig(search_alg=search_alg2, num_samples=3, metric="loss", mode="min"),
    param_space={"param": tune.uniform(0, 1)},
)
results_2 = tuner_2.fit()

assert len(results_2) == 3 and results_2.num_errors == 0
assert all(0 <= result.metrics["loss"] <= 1 for result in results_2)
