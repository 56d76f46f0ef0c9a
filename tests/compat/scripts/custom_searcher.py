# mypy: ignore-errors
"""A user's own Searcher, wrapped in ConcurrencyLimiter and Repeater.

Follows Ray Tune's Search Algorithms reference (tune/api/suggestion.rst:
"Implementing your own Searcher", ConcurrencyLimiter, Repeater).
"""

import tunecore as tune
from tunecore.search import ConcurrencyLimiter, Repeater, Searcher


class GridWalker(Searcher):
    """Suggests x = 0, 1, 2, ... and remembers what it was told."""

    def __init__(self, metric="score", mode="max"):
        super().__init__(metric=metric, mode=mode)
        self.next_x = 0
        self.configs = {}
        self.completed = {}

    def suggest(self, trial_id):
        config = {"x": self.next_x}
        self.next_x += 1
        self.configs[trial_id] = config
        return config

    def on_trial_complete(self, trial_id, result=None, error=False):
        self.completed[trial_id] = result["score"] if result else None


def trainable(config):
    tune.report({"score": config["x"] * 2})


searcher = GridWalker()
tuner = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(
        search_alg=ConcurrencyLimiter(searcher, max_concurrent=1),
        metric="score",
        mode="max",
        num_samples=4,
    ),
)
results = tuner.fit()

assert len(results) == 4
assert not results.errors
assert sorted(r.config["x"] for r in results) == [0, 1, 2, 3]
assert results.get_best_result().config == {"x": 3}
# The searcher saw every trial complete, with its last result.
assert sorted(searcher.completed.values()) == [0, 2, 4, 6]

# Repeater evaluates each suggestion several times.
repeated = GridWalker()
results = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(
        search_alg=Repeater(repeated, repeat=2),
        metric="score",
        mode="max",
        num_samples=4,
    ),
).fit()
assert len(results) == 4
assert sorted(r.config["x"] for r in results) == [0, 0, 1, 1]
