# mypy: ignore-errors
"""A user's own Searcher that suggests no trial for a while, with nothing running.

Follows Ray Tune's Search Algorithms reference (tune/api/suggestion.rst,
"Implementing your own Searcher": `suggest` returns None when there is no
point to try right now, `Searcher.FINISHED` when there will be none), on
its own, in a ConcurrencyLimiter and in a Repeater. Ray Tune asks such a
searcher again about every second while no trial runs
(`TuneController._update_trial_queue(blocking=True)`) until it suggests or
says FINISHED: each run below ends without an error, with the trials the
searcher suggested after its answers of None.
"""

import tunecore as tune
from tunecore.search import ConcurrencyLimiter, Repeater, Searcher


class Hesitant(Searcher):
    """Answers its asks from `script`: "none" (nothing now), "finished"
    (Searcher.FINISHED), or "x" (the next x: 1, 2, ...); "x" once the
    script is used up."""

    def __init__(self, script):
        super().__init__(metric="score", mode="max")
        self.script = list(script)
        self.suggested = 0

    def suggest(self, trial_id):
        action = self.script.pop(0) if self.script else "x"
        if action == "none":
            return None
        if action == "finished":
            return Searcher.FINISHED
        self.suggested += 1
        return {"x": float(self.suggested)}

    def on_trial_complete(self, trial_id, result=None, error=False):
        pass  # Ray's Searcher requires it; what it is told changes no answer here


def trainable(config):
    tune.report({"score": -((config["x"] - 3) ** 2)})


def run(search_alg, num_samples):
    return tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(search_alg=search_alg, num_samples=num_samples),
    ).fit()


def xs(results):
    assert not results.errors, results.errors
    return sorted(r.config["x"] for r in results)


# Three answers of None before the first trial: asked again until it suggests.
results = run(Hesitant(["none", "none", "none", "x", "x", "x", "finished"]), num_samples=10)
assert xs(results) == [1.0, 2.0, 3.0], xs(results)
assert results.get_best_result(metric="score", mode="max").config["x"] == 3.0

# One trial at a time: after each trial, None twice, then a trial (then FINISHED).
script = ["x", "none", "none", "x", "none", "finished"]
results = run(ConcurrencyLimiter(Hesitant(script), max_concurrent=1), num_samples=10)
assert xs(results) == [1.0, 2.0], xs(results)

# A Repeater asks its searcher once per group: None twice, then one config run twice.
results = run(Repeater(Hesitant(["none", "none", "x", "finished"]), repeat=2), num_samples=4)
assert xs(results) == [1.0, 1.0], xs(results)
