"""The MLflow side of `tunecore.integrations.mlflow`: the experiment to log
into, a trial's run found again after a restart, and a result written
as one batch.

Why a run is found by its tags: a driver killed and resumed, or a trial
restarted on another worker, has lost the run id it held in memory, and
a new run per restart would split a trial's history (Ray Tune starts a
new one each time). Each run tunecore starts carries the tags `trial_id`
and `tunecore_logger` (which of the two loggers made it, so the callback's
run and `setup_mlflow`'s are never mistaken for each other), and is found
again by them in the experiment.

Why a result is one `log_batch`: a batch is written in one transaction by
MLflow's database stores, so a result is in the run whole or not at all;
where a store splits a batch (more than MLflow's 1000 metrics, or the
file store), `training_iteration` goes last, so its presence still means
the whole result is there. What the run holds of `training_iteration` is
how a resumed logger knows which results it already wrote.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from tunecore.core.results import TRAINING_ITERATION
from tunecore.utils.dicts import flatten_dict

try:
    import mlflow
    from mlflow.entities import Metric, Param, RunStatus
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient
except ImportError as error:  # the module's extra says what to install
    raise ImportError(
        "tunecore.integrations.mlflow needs mlflow: pip install 'tunecore[mlflow]'"
    ) from error

logger = logging.getLogger(__name__)

TRIAL_ID_TAG = "trial_id"
LOGGER_TAG = "tunecore_logger"
MAX_METRICS_PER_BATCH = 1000  # MLflow's limit for one log_batch
MAX_PARAMS_PER_BATCH = 100


def fluent() -> ModuleType:
    """The `mlflow` module itself: MLflow's API around an active run,
    which `setup_mlflow` starts and returns."""
    return mlflow


def connect(tracking_uri: str | None, registry_uri: str | None, token: str | None) -> MlflowClient:
    """A client of the tracking server, set as the process's MLflow
    default too (as Ray Tune does, so `mlflow.search_runs()` after
    `fit()` reads the same store)."""
    if token:
        os.environ["MLFLOW_TRACKING_TOKEN"] = token
    if tracking_uri is not None:
        mlflow.set_tracking_uri(tracking_uri)
    if registry_uri is not None:
        mlflow.set_registry_uri(registry_uri)
    return MlflowClient(tracking_uri=tracking_uri, registry_uri=registry_uri)


def experiment_id_of(
    client: MlflowClient,
    *,
    experiment_id: str | None,
    experiment_name: str | None,
    artifact_location: str | None = None,
    create: bool,
) -> str:
    """The experiment to log into, as Ray Tune chooses it: the id given (or
    `MLFLOW_EXPERIMENT_ID`) if it exists, else the name given (or
    `MLFLOW_EXPERIMENT_NAME`), made when `create` allows; a ValueError
    naming both when there is neither."""
    wanted_id = (
        experiment_id if experiment_id is not None else os.environ.get("MLFLOW_EXPERIMENT_ID")
    )
    if wanted_id is not None:
        try:
            return str(client.get_experiment(wanted_id).experiment_id)
        except MlflowException:
            pass
    name = (
        experiment_name if experiment_name is not None else os.environ.get("MLFLOW_EXPERIMENT_NAME")
    )
    if name is not None:
        found = client.get_experiment_by_name(name)
        if found is not None:
            return str(found.experiment_id)
        if create:
            return str(client.create_experiment(name, artifact_location=artifact_location))
    raise ValueError(
        f"MLflow has no experiment with experiment_id={wanted_id!r} or "
        f"experiment_name={name!r}: "
        + (
            "pass experiment_name= (it is made if missing)"
            if create
            else "make it first, or pass create_experiment_if_not_exists=True"
        )
    )


def find_run(client: MlflowClient, experiment_id: str, trial_id: str, made_by: str) -> Any:
    """The run `made_by` started for the trial, or None."""
    runs = client.search_runs(
        [experiment_id],
        filter_string=f"tags.{TRIAL_ID_TAG} = '{trial_id}' and tags.{LOGGER_TAG} = '{made_by}'",
        max_results=1,
        order_by=["attributes.start_time ASC"],
    )
    return runs[0] if runs else None


def run_tags(trial_id: str, made_by: str, tags: Mapping[str, Any] | None) -> dict[str, str]:
    """The user's tags and the two that find the run again."""
    return {
        **{k: str(v) for k, v in (tags or {}).items()},
        TRIAL_ID_TAG: trial_id,
        LOGGER_TAG: made_by,
    }


def held_iteration(client: MlflowClient, run_id: str) -> int:
    """The highest `training_iteration` of a whole result in the run
    (module docstring), 0 if it holds none."""
    history = client.get_metric_history(run_id, TRAINING_ITERATION)
    return max((int(metric.value) for metric in history), default=0)


def log_new_params(client: MlflowClient, run_id: str, config: Mapping[str, Any]) -> None:
    """The flattened config as the run's parameters, those it lacks: MLflow
    keeps a parameter's first value and refuses another (a restarted run
    logs its config again; PBT changes it)."""
    known = client.get_run(run_id).data.params
    params = [
        Param(str(key), str(value))
        for key, value in flatten_dict(dict(config)).items()
        if str(key) not in known
    ]
    for start in range(0, len(params), MAX_PARAMS_PER_BATCH):
        client.log_batch(
            run_id, params=params[start : start + MAX_PARAMS_PER_BATCH], synchronous=True
        )


def metrics_of(result: Mapping[str, Any]) -> dict[str, float]:
    """The result's numbers (and booleans) as MLflow metrics, flattened
    (`a/b`); the rest (strings, lists) are left out. Ray Tune also logs a
    string that `float()` reads, so a `trial_id` of digits, `"12345_00000"`,
    became the metric 1234500000.0; tunecore logs no string."""
    return {
        str(key): float(value)
        for key, value in flatten_dict(dict(result)).items()
        if isinstance(value, int | float)
    }


def log_metrics(client: MlflowClient, run_id: str, metrics: Mapping[str, float], step: int) -> None:
    """Write one result at `step`, `training_iteration` last (module
    docstring)."""
    now = int(time.time() * 1000)
    ordered = sorted(metrics.items(), key=lambda item: item[0] == TRAINING_ITERATION)
    entries = [Metric(key, value, now, step) for key, value in ordered]
    for start in range(0, len(entries), MAX_METRICS_PER_BATCH):
        client.log_batch(
            run_id, metrics=entries[start : start + MAX_METRICS_PER_BATCH], synchronous=True
        )


FINISHED = RunStatus.to_string(RunStatus.FINISHED)
FAILED = RunStatus.to_string(RunStatus.FAILED)
RUNNING = RunStatus.to_string(RunStatus.RUNNING)
