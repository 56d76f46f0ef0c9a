# mypy: ignore-errors
# requires: xgboost
# timeout: 180
"""XGBoost through `ray.tune.integration.xgboost`: the breast-cancer example.

Follows Ray Tune's "Tuning XGBoost hyperparameters with Ray Tune" guide
(doc/source/tune/examples/tune-xgboost.ipynb: `TuneReportCheckpointCallback(
frequency=1)`, ASHA, the best booster loaded with `get_model`) and
python/ray/tune/examples/xgboost_example.py (the `xgb.cv` variant, its fold
results averaged by `results_postprocessing_fn`), at a smoke-test size.
"""

import numpy as np
import sklearn.datasets
import sklearn.metrics
import xgboost as xgb
from sklearn.model_selection import train_test_split

import tunecore as tune
from tunecore.integration.xgboost import TuneReportCheckpointCallback
from tunecore.schedulers import ASHAScheduler


def train_breast_cancer(config: dict):
    # This is a simple training function to be passed into Tune
    # Load dataset
    data, labels = sklearn.datasets.load_breast_cancer(return_X_y=True)
    # Split into train and test set
    train_x, test_x, train_y, test_y = train_test_split(data, labels, test_size=0.25)
    # Build input matrices for XGBoost
    train_set = xgb.DMatrix(train_x, label=train_y)
    test_set = xgb.DMatrix(test_x, label=test_y)
    # Train the classifier, using the Tune callback
    xgb.train(
        config,
        train_set,
        evals=[(test_set, "eval")],
        verbose_eval=False,
        # `TuneReportCheckpointCallback` defines the checkpointing frequency and format.
        callbacks=[TuneReportCheckpointCallback(frequency=1)],
    )


def get_best_model_checkpoint(results):
    best_result = results.get_best_result()

    # `TuneReportCheckpointCallback` provides a helper method to retrieve the
    # model from a checkpoint.
    best_bst = TuneReportCheckpointCallback.get_model(best_result.checkpoint)

    accuracy = 1.0 - best_result.metrics["eval-error"]
    print(f"Best model parameters: {best_result.config}")
    print(f"Best model total accuracy: {accuracy:.4f}")
    return best_bst


def tune_xgboost(smoke_test=False):
    search_space = {
        # You can mix constants with search space objects.
        "objective": "binary:logistic",
        "eval_metric": ["logloss", "error"],
        "max_depth": tune.randint(1, 9),
        "min_child_weight": tune.choice([1, 2, 3]),
        "subsample": tune.uniform(0.5, 1.0),
        "eta": tune.loguniform(1e-4, 1e-1),
    }
    # This will enable aggressive early stopping of bad trials.
    scheduler = ASHAScheduler(
        max_t=10,  # 10 training iterations
        grace_period=1,
        reduction_factor=2,
    )

    tuner = tune.Tuner(
        train_breast_cancer,
        tune_config=tune.TuneConfig(
            metric="eval-logloss",
            mode="min",
            scheduler=scheduler,
            num_samples=1 if smoke_test else 4,
        ),
        param_space=search_space,
    )
    return tuner.fit()


results = tune_xgboost(smoke_test=False)

# Load the best model checkpoint.
best_bst = get_best_model_checkpoint(results)

assert len(results) == 4
assert not results.errors
best = results.get_best_result()
# xgb.train's 10 rounds, each reported with a checkpoint; ASHA stops some early.
assert all(1 <= r.metrics["training_iteration"] <= 10 for r in results)
assert all(r.checkpoint is not None for r in results)
assert {"eval-logloss", "eval-error"} <= set(best.metrics)
assert best.metrics["eval-logloss"] == min(r.metrics["eval-logloss"] for r in results)
assert best_bst.num_boosted_rounds() == best.metrics["training_iteration"]
data, labels = sklearn.datasets.load_breast_cancer(return_X_y=True)
predictions = best_bst.predict(xgb.DMatrix(data))
assert predictions.shape == (len(labels),)
assert ((predictions >= 0) & (predictions <= 1)).all()


# python/ray/tune/examples/xgboost_example.py, `--use-cv`.
def train_breast_cancer_cv(config: dict):
    # This is a simple training function to be passed into Tune
    # using xgboost's cross validation functionality

    # Load dataset
    data, labels = sklearn.datasets.load_breast_cancer(return_X_y=True)

    # For CV, we need to average over a list of results form folds
    def average_cv_folds(results_dict: dict[str, list[float]]) -> dict[str, float]:
        return {k: np.mean(v) for k, v in results_dict.items()}

    train_set = xgb.DMatrix(data, label=labels)

    # Run CV, using the Tune callback
    xgb.cv(
        config,
        train_set,
        verbose_eval=False,
        stratified=True,
        # Checkpointing is not supported for CV
        callbacks=[
            TuneReportCheckpointCallback(
                results_postprocessing_fn=average_cv_folds, checkpoint_at_end=False
            )
        ],
    )


analysis = tune.run(
    train_breast_cancer_cv,
    metric="test-logloss",
    mode="min",
    resources_per_trial={"cpu": 1},
    config={
        "objective": "binary:logistic",
        "eval_metric": ["logloss", "error"],
        "max_depth": tune.randint(1, 9),
        "eta": tune.loguniform(1e-4, 1e-1),
    },
    num_samples=1,
    scheduler=ASHAScheduler(max_t=10, grace_period=1, reduction_factor=2),
)

assert len(analysis.trials) == 1
assert all(trial.status == "TERMINATED" for trial in analysis.trials)
assert {"train-logloss", "test-logloss", "test-error"} <= set(analysis.best_result)
assert analysis.best_checkpoint is None
