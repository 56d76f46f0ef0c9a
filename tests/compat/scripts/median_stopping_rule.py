# mypy: ignore-errors
"""Early stopping with the median stopping rule.

Follows Ray Tune's Trial Schedulers guide (tune/api/schedulers.rst,
"Median Stopping Rule") and the scheduler usage of
doc/source/tune/doc_code/key_concepts.py.
"""

import tunecore as tune
from tunecore.schedulers import MedianStoppingRule


def trainable(config):
    for step in range(1, 21):
        # The quality of a trial shows from its first step on; the best
        # trials run first, so later bad ones fall below their median.
        tune.report({"score": config["quality"] * step})


median_stopping_rule = MedianStoppingRule(
    time_attr="training_iteration",
    grace_period=4,
    min_samples_required=2,
)

tuner = tune.Tuner(
    trainable,
    param_space={"quality": tune.grid_search([6, 5, 4, 3, 2, 1])},
    tune_config=tune.TuneConfig(
        metric="score", mode="max", scheduler=median_stopping_rule, max_concurrent_trials=2
    ),
)
results = tuner.fit()

assert len(results) == 6
assert not results.errors
iterations = {r.config["quality"]: r.metrics["training_iteration"] for r in results}
# The best trial is never stopped by the rule; a trial below the median of
# the others is stopped after the grace period.
assert iterations[6] == 20, iterations
assert any(it < 20 for it in iterations.values()), iterations
assert all(it >= 4 for it in iterations.values()), iterations
assert results.get_best_result().config["quality"] == 6
