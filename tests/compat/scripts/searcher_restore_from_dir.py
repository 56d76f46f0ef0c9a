# mypy: ignore-errors
"""A new searcher takes the state the searcher of a finished experiment
left in its experiment directory.

Follows "Saving and Restoring Tune Search Algorithms" in Ray Tune's Search
Algorithms reference (tune/api/suggestion.rst: "Tune automatically saves
searcher state inside the current experiment folder during tuning", then
`search_alg2.restore_from_dir(os.path.join("~/my_results",
"my-experiment-1"))`), made runnable: the space and objective are given,
the path is expanded (Ray Tune does not expand "~" there), 5 samples per
run, and the searchers are seeded so the outcome can be checked.
"""

import os

import tunecore as tune
from tunecore.search.hyperopt import HyperOptSearch


def train_fn(config):
    tune.report({"loss": (config["x"] - 3) ** 2})


def xs(results):
    return sorted(result.config["x"] for result in results)


def searcher():
    return HyperOptSearch(
        space={"x": tune.uniform(-10, 10)}, metric="loss", mode="min", random_state_seed=42
    )


search_alg = searcher()
tuner_1 = tune.Tuner(
    train_fn,
    tune_config=tune.TuneConfig(
        num_samples=5,
        search_alg=search_alg,
    ),
    run_config=tune.RunConfig(
        name="my-experiment-1",
        storage_path="~/my_results",
    ),
)
results = tuner_1.fit()

search_alg2 = searcher()
search_alg2.restore_from_dir(os.path.join(os.path.expanduser("~/my_results"), "my-experiment-1"))

results_2 = tune.Tuner(
    train_fn,
    tune_config=tune.TuneConfig(num_samples=5, search_alg=search_alg2),
    run_config=tune.RunConfig(name="my-experiment-2", storage_path="~/my_results"),
).fit()

assert len(results) == 5 and len(results_2) == 5
assert not results.errors and not results_2.errors
assert all(-10 <= x <= 10 for x in xs(results) + xs(results_2))
# The second searcher goes on from the first experiment: a fresh one with
# the same seed would suggest the first experiment's configs again.
assert not set(xs(results)) & set(xs(results_2)), (xs(results), xs(results_2))
results_3 = tune.Tuner(
    train_fn,
    tune_config=tune.TuneConfig(num_samples=5, search_alg=searcher()),
    run_config=tune.RunConfig(name="my-experiment-3", storage_path="~/my_results"),
).fit()
assert xs(results_3) == xs(results)
