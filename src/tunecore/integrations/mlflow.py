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
highest `training_iteration` it has) are skipped, and the results of the
trial's result.json it lacks are logged as it is found again
(`integrations._resumed`). The loop tells callbacks of a round's events
before it logs them, so a killed driver has given MLflow every result
the log holds; but a trial that ended while MLflow refused a result (the
callbacks go on without it), or before this callback was added, never
starts again: as a resumed experiment goes on, each such trial whose run
holds less than its result.json (or has none) gets it the same way, and
its run is ended (`_resumed.TrackerCallback`).
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
from tunecore.integrations._resumed import ResumedRuns, TrackerCallback
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.result import TIMESTEPS_TOTAL, TRAINING_ITERATION
from tunecore.shell.trainable import get_context
from tunecore.shell.trial_view import Trial, as_recorded

logger = logging.getLogger(__name__)

CALLBACK = "MLflowLoggerCallback"
SETUP = "setup_mlflow"


class MLflowLoggerCallback(TrackerCallback):
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
        self._resumed = ResumedRuns()
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
        if self._resumed.is_new(trial.trial_id, result):  # else logged before (docstring)
            _log_result(self._client, run_id, result)

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        run_id = self._run_of(trial)
        if self.should_save_artifact and trial.local_path is not None:
            self._client.log_artifacts(run_id, trial.local_path)
        if self.log_params_on_trial_end:
            runs.log_new_params(self._client, run_id, trial.config)
        self._client.set_terminated(run_id, status=runs.FAILED if failed else runs.FINISHED)
        self._runs.pop(trial.trial_id, None)
        self._resumed.forget(trial.trial_id)

    def held_upto(self, trial: Trial) -> int | None:
        found = self._found_run(trial)
        return None if found is None else runs.held_iteration(self._client, found.info.run_id)

    def _run_of(self, trial: Trial) -> str:
        """The trial's run: known, found again by its tags (a resumed
        driver: it gets the recorded results it lacks), or started now."""
        run_id = self._runs.get(trial.trial_id)
        if run_id is not None:
            return run_id
        found = self._found_run(trial)
        held_upto = 0
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
            held_upto = runs.held_iteration(self._client, run_id)
        self._runs[trial.trial_id] = run_id
        for row in self._resumed.opened(trial.trial_id, trial.directory, held_upto):
            _log_result(self._client, run_id, row)
        return run_id

    def _found_run(self, trial: Trial) -> Any:
        """The trial's run in MLflow, found by its tags, or None."""
        if self._client is None:
            reason = self._setup_error or "pass it in RunConfig(callbacks=[...])"
            raise RuntimeError(f"{CALLBACK} was not set up: {reason}")
        return runs.find_run(self._client, self._experiment_id, trial.trial_id, CALLBACK)


def _log_result(client: Any, run_id: str, result: Mapping[str, JsonValue]) -> None:
    """One result's metrics, at step `timesteps_total` when it has one,
    else `training_iteration` (as Ray Tune)."""
    step = int(result.get(TIMESTEPS_TOTAL) or result[TRAINING_ITERATION])  # type: ignore[arg-type]
    runs.log_metrics(client, run_id, runs.metrics_of(result), step)


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
