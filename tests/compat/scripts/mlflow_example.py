# mypy: ignore-errors
# requires: mlflow
# timeout: 180
"""MLflow through `ray.air.integrations.mlflow`: the logger callback and
`setup_mlflow` in the training function.

Follows Ray Tune's "Using MLflow with Tune" guide
(doc/source/tune/examples/tune-mlflow.ipynb: `tune_with_callback` with
`save_artifact=True`, `tune_with_setup` with the tracking URI passed in the
config), at a smoke-test size, with a SQLite store in the working
directory: MLflow 3 refuses the guide's `mlruns` directory store unless
`MLFLOW_ALLOW_FILE_STORE` is set.
"""

import os
import time

import mlflow
from mlflow.tracking import MlflowClient

import tunecore as tune
from tunecore.integrations.mlflow import MLflowLoggerCallback, setup_mlflow


def evaluation_fn(step, width, height):
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def train_function(config):
    width, height = config["width"], config["height"]

    for step in range(config.get("steps", 100)):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluation_fn(step, width, height)
        # Feed the score back to Tune.
        tune.report({"iterations": step, "mean_loss": intermediate_score})
        time.sleep(0.1)


def tune_with_callback(mlflow_tracking_uri, finish_fast=False):
    tuner = tune.Tuner(
        train_function,
        tune_config=tune.TuneConfig(num_samples=2),
        run_config=tune.RunConfig(
            name="mlflow",
            callbacks=[
                MLflowLoggerCallback(
                    tracking_uri=mlflow_tracking_uri,
                    experiment_name="mlflow_callback_example",
                    save_artifact=True,
                )
            ],
        ),
        param_space={
            "width": tune.randint(10, 100),
            "height": tune.randint(0, 100),
            "steps": 5 if finish_fast else 100,
        },
    )
    return tuner.fit()


def train_function_mlflow(config):
    tracking_uri = config.pop("tracking_uri", None)
    setup_mlflow(
        config,
        experiment_name="setup_mlflow_example",
        tracking_uri=tracking_uri,
    )

    # Hyperparameters
    width, height = config["width"], config["height"]

    for step in range(config.get("steps", 100)):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluation_fn(step, width, height)
        # Log the metrics to mlflow
        mlflow.log_metrics({"mean_loss": intermediate_score}, step=step)
        # Feed the score back to Tune.
        tune.report({"iterations": step, "mean_loss": intermediate_score})
        time.sleep(0.1)


def tune_with_setup(mlflow_tracking_uri, finish_fast=False):
    # Set the experiment, or create a new one if does not exist yet.
    mlflow.set_tracking_uri(mlflow_tracking_uri)
    mlflow.set_experiment(experiment_name="setup_mlflow_example")

    tuner = tune.Tuner(
        train_function_mlflow,
        tune_config=tune.TuneConfig(num_samples=2),
        run_config=tune.RunConfig(
            name="mlflow",
        ),
        param_space={
            "width": tune.randint(10, 100),
            "height": tune.randint(0, 100),
            "steps": 5 if finish_fast else 100,
            "tracking_uri": mlflow.get_tracking_uri(),
        },
    )
    return tuner.fit()


smoke_test = True
mlflow_tracking_uri = f"sqlite:///{os.path.abspath('mlflow.db')}"

results = tune_with_callback(mlflow_tracking_uri, finish_fast=smoke_test)
assert not results.errors
client = MlflowClient(mlflow_tracking_uri)
experiment = client.get_experiment_by_name("mlflow_callback_example")
df = mlflow.search_runs([experiment.experiment_id])
print(df)
assert len(df) == 2
runs = client.search_runs([experiment.experiment_id])
configs = sorted((r.config["width"], r.config["height"]) for r in results)
assert sorted((int(r.data.params["width"]), int(r.data.params["height"])) for r in runs) == configs
for run in runs:
    assert run.info.status == "FINISHED"
    assert run.data.params["steps"] == "5"
    history = client.get_metric_history(run.info.run_id, "mean_loss")
    assert sorted(m.step for m in history) == [1, 2, 3, 4, 5]
    width, height = int(run.data.params["width"]), int(run.data.params["height"])
    assert run.data.metrics["mean_loss"] == evaluation_fn(4, width, height)
    assert "result.json" in {a.path for a in client.list_artifacts(run.info.run_id)}

results = tune_with_setup(mlflow_tracking_uri, finish_fast=smoke_test)
assert not results.errors
experiment = client.get_experiment_by_name("setup_mlflow_example")
runs = client.search_runs([experiment.experiment_id])
assert len(runs) == 2
for run in runs:
    assert run.info.run_name == "setup_mlflow_example"
    assert "tracking_uri" not in run.data.params
    assert run.data.params["steps"] == "5"
    history = client.get_metric_history(run.info.run_id, "mean_loss")
    assert sorted(m.step for m in history) == [0, 1, 2, 3, 4]
