# mypy: ignore-errors
"""A user's own Searcher with save and restore (pickle), reused across two
tuning runs.

Follows Ray Tune's Searcher reference (tune/api/doc/ray.tune.search.Searcher:
the subclass skeleton with suggest / on_trial_complete, and Searcher.save /
Searcher.restore: `search_alg.save("./my_favorite_path.pkl")` after
`tuner.fit()`, then `search_alg2 = Searcher(...)`,
`ConcurrencyLimiter(search_alg2, 1)`, `search_alg2.restore(checkpoint_path)`
and a second Tuner), with a small hill climber as the optimizer.
"""

import pickle
import random

import tunecore as tune
from tunecore.search import ConcurrencyLimiter, Searcher


class HillClimber(Searcher):
    """Steps from the best x seen so far by a random amount."""

    def __init__(self, metric="loss", mode="min", seed=0):
        super().__init__(metric=metric, mode=mode)
        self.rng = random.Random(seed)
        self.best_x = 0.0
        self.best_loss = float("inf")
        self.asked = 0
        self.configurations = {}

    def suggest(self, trial_id):
        x = self.best_x + self.rng.uniform(-1, 1)
        self.configurations[trial_id] = {"x": x, "n": self.asked}
        self.asked += 1
        return self.configurations[trial_id]

    def on_trial_complete(self, trial_id, result=None, error=False):
        configuration = self.configurations.pop(trial_id)
        if result and self.metric in result and result[self.metric] < self.best_loss:
            self.best_loss = result[self.metric]
            self.best_x = configuration["x"]

    def save(self, checkpoint_path):
        with open(checkpoint_path, "wb") as f:
            pickle.dump((self.rng.getstate(), self.best_x, self.best_loss, self.asked), f)

    def restore(self, checkpoint_path):
        with open(checkpoint_path, "rb") as f:
            rng_state, self.best_x, self.best_loss, self.asked = pickle.load(f)
        self.rng.setstate(rng_state)


def cost(config):
    tune.report({"loss": (config["x"] - 3) ** 2})


search_alg = HillClimber()
tuner = tune.Tuner(
    cost,
    tune_config=tune.TuneConfig(search_alg=ConcurrencyLimiter(search_alg, 1), num_samples=5),
)
results = tuner.fit()
search_alg.save("./my_favorite_path.pkl")

assert len(results) == 5
assert not results.errors
assert sorted(r.config["n"] for r in results) == [0, 1, 2, 3, 4]
# The searcher heard every trial: its best is the best result.
assert search_alg.best_loss == min(r.metrics["loss"] for r in results)

search_alg2 = HillClimber()
search_alg2 = ConcurrencyLimiter(search_alg2, 1)
search_alg2.restore("./my_favorite_path.pkl")
tuner = tune.Tuner(
    cost,
    tune_config=tune.TuneConfig(search_alg=search_alg2, num_samples=5),
)
results2 = tuner.fit()

assert len(results2) == 5
assert not results2.errors
# The restored searcher goes on counting, and climbs from the first run's best.
assert sorted(r.config["n"] for r in results2) == [5, 6, 7, 8, 9]
assert search_alg2.searcher.best_loss <= search_alg.best_loss
bound = search_alg.best_loss**0.5 + 1
assert all(abs(r.config["x"] - 3) <= bound for r in results2), [r.config for r in results2]
