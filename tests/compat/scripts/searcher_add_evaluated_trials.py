# mypy: ignore-errors
"""A searcher of one's own, warm-started with the trials of an earlier run.

Follows Ray Tune's `Searcher.add_evaluated_trials` (API reference, "Custom
Search Algorithms (tune.search.Searcher)"): the trials of a finished
`tune.run` (its `ExperimentAnalysis`) are passed to a new searcher, which
hears each finished one through `add_evaluated_point` and starts its own
search next to the best of them.
"""

import tunecore as tune
from tunecore.search import Searcher


def objective(config):
    tune.report({"score": -((config["x"] - 3) ** 2)})


class NearBest(Searcher):
    """Suggests points next to the best one it heard of before its first
    suggestion."""

    def __init__(self, metric="score", mode="max"):
        super().__init__(metric=metric, mode=mode)
        self.known = []
        self.suggested = 0
        self.start = None

    def add_evaluated_point(
        self, parameters, value, error=False, pruned=False, intermediate_values=None
    ):
        self.known.append((parameters["x"], value, error, pruned))

    def suggest(self, trial_id):
        if self.suggested == 3:
            return Searcher.FINISHED
        if self.start is None:
            self.start = max(self.known, key=lambda point: point[1])[0]
        self.suggested += 1
        return {"x": self.start + 0.1 * self.suggested}

    def on_trial_complete(self, trial_id, result=None, error=False):
        pass  # it searches from the warm start alone


analysis = tune.run(
    objective,
    config={"x": tune.grid_search([0, 2, 5, 8])},
    metric="score",
    mode="max",
)

searcher = NearBest()
searcher.add_evaluated_trials(analysis, metric="score")
assert sorted(searcher.known) == [
    (0, -9, False, False),
    (2, -1, False, False),
    (5, -4, False, False),
    (8, -25, False, False),
], searcher.known

searcher.add_evaluated_trials(analysis.trials[0], metric="score")
assert len(searcher.known) == 5

results = tune.Tuner(
    objective,
    tune_config=tune.TuneConfig(search_alg=searcher, num_samples=3),
).fit()
assert sorted(round(r.config["x"], 1) for r in results) == [2.1, 2.2, 2.3]
