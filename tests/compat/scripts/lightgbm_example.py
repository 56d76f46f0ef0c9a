# mypy: ignore-errors
# requires: lightgbm
# timeout: 180
"""LightGBM through `ray.tune.integration.lightgbm`: the breast-cancer example.

Follows Ray Tune's python/ray/tune/examples/lightgbm_example.py (the
callback's metrics renamed from `eval-binary_error`, a grid over the
boosting type, ASHA), with 20 boosting rounds instead of 100, and ASHA's
`max_t` 20 instead of its default 100 to match: ASHA stops a trial at its
20th result, as at the example's 100th, so the function's last report
(which lacks the metric) is never taken.
"""

import lightgbm as lgb
import numpy as np
import sklearn.datasets
import sklearn.metrics
from sklearn.model_selection import train_test_split

import tunecore as tune
from tunecore.integration.lightgbm import TuneReportCheckpointCallback
from tunecore.schedulers import ASHAScheduler


def train_breast_cancer(config):
    data, target = sklearn.datasets.load_breast_cancer(return_X_y=True)
    train_x, test_x, train_y, test_y = train_test_split(data, target, test_size=0.25)
    train_set = lgb.Dataset(train_x, label=train_y)
    test_set = lgb.Dataset(test_x, label=test_y)
    gbm = lgb.train(
        config,
        train_set,
        valid_sets=[test_set],
        valid_names=["eval"],
        callbacks=[
            TuneReportCheckpointCallback(
                {
                    "binary_error": "eval-binary_error",
                    "binary_logloss": "eval-binary_logloss",
                }
            )
        ],
    )
    preds = gbm.predict(test_x)
    pred_labels = np.rint(preds)
    tune.report(
        {
            "mean_accuracy": sklearn.metrics.accuracy_score(test_y, pred_labels),
            "done": True,
        }
    )


config = {
    "objective": "binary",
    "metric": ["binary_error", "binary_logloss"],
    "verbose": -1,
    "num_iterations": 20,
    "boosting_type": tune.grid_search(["gbdt", "dart"]),
    "num_leaves": tune.randint(10, 1000),
    "learning_rate": tune.loguniform(1e-8, 1e-1),
}

tuner = tune.Tuner(
    train_breast_cancer,
    tune_config=tune.TuneConfig(
        metric="binary_error",
        mode="min",
        scheduler=ASHAScheduler(max_t=20),
        num_samples=2,
    ),
    param_space=config,
)
results = tuner.fit()

print(f"Best hyperparameters found were: {results.get_best_result().config}")

assert len(results) == 4
assert not results.errors
assert sorted(r.config["boosting_type"] for r in results) == ["dart", "dart", "gbdt", "gbdt"]
best = results.get_best_result()
assert best.metrics["binary_error"] == min(r.metrics["binary_error"] for r in results)
# The last round carries the booster; a trial that trained all 20 rounds
# has it, loadable with the callback's helper.
finished = [r for r in results if r.metrics["training_iteration"] >= 20]
for result in finished:
    booster = TuneReportCheckpointCallback.get_model(result.checkpoint)
    assert booster.current_iteration() == 20
