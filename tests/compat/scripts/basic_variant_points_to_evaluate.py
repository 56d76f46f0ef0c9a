# mypy: ignore-errors
"""The default search algorithm: grid x samples, and points to evaluate.

Follows the BasicVariantGenerator docstring in Ray Tune's API reference
(tune/api/suggestion.rst, "Random search and grid search").
"""

import tunecore as tune
from tunecore.search import BasicVariantGenerator


def trainable(config):
    tune.report({"sum": config["a"] + config["b"]})


# This will automatically use the `BasicVariantGenerator`
tuner = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(num_samples=4),
    param_space={"a": tune.grid_search([1, 2]), "b": tune.randint(0, 3)},
)
results = tuner.fit()

# For each sample (4), each of the grid search variants for `a` is sampled
# once; `b` is sampled randomly.
assert len(results) == 8
assert sorted(r.config["a"] for r in results) == [1] * 4 + [2] * 4
assert all(r.config["b"] in (0, 1, 2) for r in results)
assert all(r.metrics["sum"] == r.config["a"] + r.config["b"] for r in results)

order = []


class RecordOrder(tune.Callback):
    def on_trial_start(self, iteration, trials, trial, **info):
        order.append(dict(trial.config))


tuner = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(
        search_alg=BasicVariantGenerator(points_to_evaluate=[{"a": 2, "b": 2}, {"a": 1, "b": 0}]),
        num_samples=2,
        max_concurrent_trials=1,
    ),
    param_space={"a": tune.grid_search([1, 2]), "b": tune.randint(0, 3)},
    run_config=tune.RunConfig(callbacks=[RecordOrder()]),
)
results = tuner.fit()

# The suggested points run first, then the samples of the space.
assert sorted(order[:2], key=lambda c: c["a"]) == [{"a": 1, "b": 0}, {"a": 2, "b": 2}], order
assert len(results) == len(order)
assert not results.errors
