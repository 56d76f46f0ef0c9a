# mypy: ignore-errors
"""A searcher saved after a run with the Tuner's param space, restored into
a fresh searcher behind a ConcurrencyLimiter, and run by a Tuner given no
param space: the restored searcher searches the first run's space.

Follows the docstring of `Searcher.save` and `Searcher.restore` in Ray
Tune 2.60 (python/ray/tune/search/searcher.py: `search_alg =
Searcher(...)`, a Tuner with `param_space=config`, `search_alg.save(...)`;
then `search_alg2 = ConcurrencyLimiter(search_alg2, 1)`,
`search_alg2.restore(checkpoint_path)` and a Tuner with no param_space),
made runnable with HyperOptSearch and 4 samples per run. On Ray Tune 2.60
it passes (the pickle brings the space back); tunecore refused the second
Tuner ("param_space={} is invalid") until af12d54.
"""

import tunecore as tune
from tunecore.search import ConcurrencyLimiter
from tunecore.search.hyperopt import HyperOptSearch


def cost(config):
    tune.report({"loss": (config["a"] - 3) ** 2})


config = {"a": tune.uniform(0, 10), "b": 7}
search_alg = HyperOptSearch(metric="loss", mode="min")

tuner = tune.Tuner(
    cost,
    tune_config=tune.TuneConfig(search_alg=search_alg, num_samples=4),
    param_space=config,
)
results = tuner.fit()

search_alg.save("./my_favorite_path.pkl")

search_alg2 = HyperOptSearch(metric="loss", mode="min")
search_alg2 = ConcurrencyLimiter(search_alg2, 1)
search_alg2.restore("./my_favorite_path.pkl")
tuner = tune.Tuner(
    cost,
    tune_config=tune.TuneConfig(search_alg=search_alg2, num_samples=4),
)
results_2 = tuner.fit()

assert len(results) == 4 and len(results_2) == 4
assert not results.errors and not results_2.errors
assert all(0 <= r.config["a"] <= 10 and r.config["b"] == 7 for r in results_2), [
    r.config for r in results_2
]
