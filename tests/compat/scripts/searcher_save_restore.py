# mypy: ignore-errors
"""A searcher's state saved after one run and restored into a new searcher
for the next one.

Follows "Saving and Restoring Tune Search Algorithms" in Ray Tune's Search
Algorithms reference (tune/api/suggestion.rst: search_alg.save(path) after
tuner.fit(), then search_alg2.restore(path) and a second Tuner), made
runnable: the space and objective are given, 5 samples per run, and the
searchers are seeded so the outcome can be checked.
"""

import tunecore as tune
from tunecore.search.hyperopt import HyperOptSearch


def train_fn(config):
    tune.report({"loss": (config["x"] - 3) ** 2})


def configs_of(results):
    return sorted(result.config["x"] for result in results)


search_alg = HyperOptSearch(
    space={"x": tune.uniform(-10, 10)}, metric="loss", mode="min", random_state_seed=42
)

tuner_1 = tune.Tuner(
    train_fn,
    tune_config=tune.TuneConfig(search_alg=search_alg, num_samples=5),
)
results_1 = tuner_1.fit()

search_alg.save("./my-checkpoint.pkl")

# Restore the saved state onto another search algorithm,
# in a new tuning script
search_alg2 = HyperOptSearch(
    space={"x": tune.uniform(-10, 10)}, metric="loss", mode="min", random_state_seed=42
)
search_alg2.restore("./my-checkpoint.pkl")

tuner_2 = tune.Tuner(
    train_fn,
    tune_config=tune.TuneConfig(search_alg=search_alg2, num_samples=5),
)
results_2 = tuner_2.fit()

assert len(results_1) == 5 and len(results_2) == 5
assert not results_1.errors and not results_2.errors
assert all(-10 <= x <= 10 for x in configs_of(results_1) + configs_of(results_2))
# The restored searcher goes on from the first run: a fresh one with the same
# seed would suggest the first run's configs again.
assert not set(configs_of(results_1)) & set(configs_of(results_2)), (
    configs_of(results_1),
    configs_of(results_2),
)
fresh = HyperOptSearch(
    space={"x": tune.uniform(-10, 10)}, metric="loss", mode="min", random_state_seed=42
)
results_3 = tune.Tuner(
    train_fn,
    tune_config=tune.TuneConfig(search_alg=fresh, num_samples=5),
).fit()
assert configs_of(results_3) == configs_of(results_1)
