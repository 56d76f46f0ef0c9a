"""Ray's MLflow integration (`ray.air.integrations.mlflow`):
`MLflowLoggerCallback` logs every trial from the driver, `setup_mlflow`
opens a run inside a training function (`pip install 'tunecore[mlflow]'`)::

    from tunecore.integrations.mlflow import MLflowLoggerCallback, setup_mlflow

    tuner = tune.Tuner(
        train,
        run_config=tune.RunConfig(callbacks=[MLflowLoggerCallback(
            tracking_uri="sqlite:///mlflow.db", experiment_name="tune")]),
    )

The callback, as Ray Tune's: one MLflow run per trial, named after the
trial and tagged `trial_name` (and the user's `tags`), the trial's config
as its parameters (at the start, or at the end with
`log_params_on_trial_end`), each result's numeric values as metrics at
step `timesteps_total` (when the result has one) or `training_iteration`,
the trial's directory as artifacts at the end with `save_artifact`, and the
run FINISHED, or FAILED for a trial that errored. The experiment is
`experiment_name` (made if missing), else `MLFLOW_EXPERIMENT_ID` /
`MLFLOW_EXPERIMENT_NAME`; without any of them `setup` raises, as in Ray.

Where tunecore goes further, so that a driver killed and resumed leaves
the same record as a run never interrupted: each trial still has ONE run,
found again by its `trial_id` tag (see `_mlflow_runs`), and each result is
in it exactly once: a trial that restarts from its checkpoint reports the
results after it again, and those the run already holds (up to the
highest `training_iteration` step it has) are skipped. (A trial's end
needs nothing of the kind: the loop tells callbacks of a round's events
before it logs them, so a trial the log holds as ended has had its run
closed, and one whose end was lost with the driver runs its last step
again and ends again.)
`setup_mlflow` likewise continues the trial's run when the trial restarts
(Ray starts a new one); what the training function logs itself is its
own, and is logged again if the function runs again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from tunecore.integrations import _mlflow_runs as runs
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.result import TIMESTEPS_TOTAL, TRAINING_ITERATION
from tunecore.shell.callbacks import LoggerCallback
from tunecore.shell.trainable import get_context
from tunecore.shell.trial_view import Trial, as_recorded

logger = logging.getLogger(__name__)

CALLBACK = "MLflowLoggerCallback"
SETUP = "setup_mlflow"


class MLflowLoggerCallback(LoggerCallback):
    """Logs each trial as an MLflow run from the driver (module docstring)."""

    def __init__(
        self,
        tracking_uri: str | None = None,
        *,
        registry_uri: str | None = None,
        experiment_name: str | None = None,
        tags: dict[str, Any] | None = None,
        tracking_token: str | None = None,
        save_artifact: bool = False,
        log_params_on_trial_end: bool = False,
    ) -> None:
        for field, value in (
            ("tracking_uri", tracking_uri),
            ("registry_uri", registry_uri),
            ("experiment_name", experiment_name),
            ("tracking_token", tracking_token),
        ):
            if value is not None and not isinstance(value, str):
                raise InvalidFieldError(f"{CALLBACK}.{field}", value, "a string or None")
        if tags is not None and not isinstance(tags, Mapping):
            raise InvalidFieldError(f"{CALLBACK}.tags", tags, "a dict of tag names to values")
        self.tracking_uri = tracking_uri
        self.registry_uri = registry_uri
        self.experiment_name = experiment_name
        self.tags = dict(tags or {})
        self.tracking_token = tracking_token
        self.should_save_artifact = save_artifact
        self.log_params_on_trial_end = log_params_on_trial_end
        self._client: Any = None
        self._experiment_id = ""
        self._runs: dict[str, str] = {}
        self._logged_upto: dict[str, int] = {}
        """Per trial, the highest step its run held when this driver found
        it: results up to there were logged before, and are skipped."""
        self._setup_error: Exception | None = None

    def setup(
        self,
        stop: object = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: object,
    ) -> None:
        try:
            client = runs.connect(self.tracking_uri, self.registry_uri, self.tracking_token)
            self._experiment_id = runs.experiment_id_of(
                client, experiment_id=None, experiment_name=self.experiment_name, create=True
            )
        except Exception as error:
            self._setup_error = error  # each hook says why it cannot log
            raise
        self._client = client

    def log_trial_start(self, trial: Trial) -> None:
        run_id = self._run_of(trial)
        if not self.log_params_on_trial_end:
            runs.log_new_params(self._client, run_id, trial.config)

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        result = as_recorded(trial, result)  # what the log records, as before
        run_id = self._run_of(trial)
        step = int(result.get(TIMESTEPS_TOTAL) or result[TRAINING_ITERATION])  # type: ignore[arg-type]
        logged_upto = self._logged_upto.get(trial.trial_id)
        if logged_upto is not None:
            if step <= logged_upto:
                return  # logged before the driver stopped (module docstring)
            del self._logged_upto[trial.trial_id]
        runs.log_metrics(self._client, run_id, runs.metrics_of(result), step)

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        run_id = self._run_of(trial)
        if self.should_save_artifact and trial.local_path is not None:
            self._client.log_artifacts(run_id, trial.local_path)
        if self.log_params_on_trial_end:
            runs.log_new_params(self._client, run_id, trial.config)
        self._client.set_terminated(run_id, status=runs.FAILED if failed else runs.FINISHED)
        self._runs.pop(trial.trial_id, None)
        self._logged_upto.pop(trial.trial_id, None)

    def _run_of(self, trial: Trial) -> str:
        """The trial's run: known, found again by its tags (a resumed
        driver: it notes how far the run got), or started now."""
        if self._client is None:
            reason = self._setup_error or "pass it in RunConfig(callbacks=[...])"
            raise RuntimeError(f"{CALLBACK} was not set up: {reason}")
        run_id = self._runs.get(trial.trial_id)
        if run_id is not None:
            return run_id
        found = runs.find_run(self._client, self._experiment_id, trial.trial_id, CALLBACK)
        if found is None:
            tags = runs.run_tags(trial.trial_id, CALLBACK, {**self.tags, "trial_name": str(trial)})
            run_id = str(
                self._client.create_run(
                    self._experiment_id, run_name=str(trial), tags=tags
                ).info.run_id
            )
        else:
            run_id = str(found.info.run_id)
            if found.info.status != runs.RUNNING:
                self._client.update_run(run_id, status=runs.RUNNING)
            logged_upto = runs.last_logged_step(self._client, run_id)
            if logged_upto is not None:
                self._logged_upto[trial.trial_id] = logged_upto
        self._runs[trial.trial_id] = run_id
        return run_id


def setup_mlflow(  # noqa: PLR0917 - Ray's signature, positional as in Ray
    config: Mapping[str, Any] | None = None,
    tracking_uri: str | None = None,
    registry_uri: str | None = None,
    experiment_id: str | None = None,
    experiment_name: str | None = None,
    tracking_token: str | None = None,
    artifact_location: str | None = None,
    run_name: str | None = None,
    create_experiment_if_not_exists: bool = False,
    tags: dict[str, Any] | None = None,
    rank_zero_only: bool = True,  # noqa: ARG001 - a trial is rank 0 (docstring)
) -> ModuleType:
    """Open an MLflow run inside a training function and return the
    `mlflow` module, to log with as usual (`mlflow.log_metric(...)`).

    As Ray's: the experiment is `experiment_id`, else `experiment_name`
    (else the trial's name), which must exist unless
    `create_experiment_if_not_exists`; the run is named `run_name`, else
    the experiment name, and gets `config` as its parameters. Inside a
    trial, a run the trial opened before (it restarted) is continued
    (module docstring). A trial is one worker of rank 0, so
    `rank_zero_only` changes nothing."""
    try:
        context = get_context()
        trial_id: str | None = context.get_trial_id()
        trial_name: str | None = context.get_trial_name()
    except RuntimeError:  # called outside a trial
        trial_id = trial_name = None
    client = runs.connect(tracking_uri, registry_uri, tracking_token)
    chosen = runs.experiment_id_of(
        client,
        experiment_id=experiment_id,
        experiment_name=experiment_name or trial_name,
        artifact_location=artifact_location,
        create=create_experiment_if_not_exists,
    )
    _start_run(client, chosen, trial_id, run_name or experiment_name or trial_name, tags)
    active = runs.fluent().active_run()
    if active is not None and config:
        runs.log_new_params(client, active.info.run_id, config)
    return runs.fluent()


def _start_run(
    client: Any,
    experiment_id: str,
    trial_id: str | None,
    run_name: str | None,
    tags: dict[str, Any] | None,
) -> None:
    """Make the trial's run the active one: the one already active if it
    is the trial's, else its run from before a restart, else a new one."""
    mlflow = runs.fluent()
    active = mlflow.active_run()
    if active is not None:
        if trial_id is None or active.data.tags.get(runs.TRIAL_ID_TAG) == trial_id:
            return
        mlflow.end_run()  # another trial's, in a worker that hosted it before
    if trial_id is None:
        mlflow.start_run(experiment_id=experiment_id, run_name=run_name, tags=tags)
        return
    found = runs.find_run(client, experiment_id, trial_id, SETUP)
    if found is not None:
        # MLflow refuses to resume a run outside the process's active
        # experiment (set by whatever ran here before): make it the run's.
        mlflow.set_experiment(experiment_id=found.info.experiment_id)
        mlflow.start_run(run_id=found.info.run_id)
    else:
        mlflow.start_run(
            experiment_id=experiment_id,
            run_name=run_name,
            tags=runs.run_tags(trial_id, SETUP, tags),
        )


__all__ = ["MLflowLoggerCallback", "setup_mlflow"]
