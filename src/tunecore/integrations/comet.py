"""Ray's Comet integration (`ray.air.integrations.comet`, also
`ray.tune.logger.comet`): `CometLoggerCallback` logs every trial as one
Comet experiment from the driver (`pip install 'tunecore[comet]'`)::

    from tunecore.integrations.comet import CometLoggerCallback

    tuner = tune.Tuner(
        train,
        run_config=tune.RunConfig(
            callbacks=[CometLoggerCallback(project_name="tune", online=False)]
        ),
    )

As Ray Tune's: an `Experiment` per trial (an `OfflineExperiment` with
`online=False`, archived under Comet's offline directory when the trial
ends), named after the trial, tagged `tags`, with the other `Created
from: Ray`; the trial's config (without `callbacks`) as parameters, again
at each result's step (PBT changes it); each result at step
`training_iteration`: `node_ip`, `hostname`, `pid` and `date` as system
info, `trial_id`, `experiment_id` and `experiment_tag` as others, RLlib's
episode histograms as curves, `done` and `should_checkpoint` left out, the
rest as metrics; each checkpoint's files as a `model` artifact with
`save_checkpoints`; the experiment ended as the trial ends. Other keyword
arguments go to the experiment (Comet's auto-logging of output, git and
CPU/GPU is off unless asked for, as in Ray, and `COMET_DISABLE_AUTO_LOGGING`
is set unless it is).

Beyond Ray Tune: each trial keeps one Comet experiment whatever happens to
the driver. Its key is made from the trial's id and the experiment's
directory name, so a resumed driver continues it (`ExistingExperiment`,
or an `ExistingOfflineExperiment` whose archive `comet upload` appends to
the same experiment), and logs each result once: it asks Comet which
`training_iteration` the experiment holds (online, Comet's REST API;
offline, the archives of that key in the offline directory), logs the
results from before the trial's checkpoint that Comet lost (an offline
experiment a SIGKILL stopped is never archived) from the trial's
result.json, and skips the results it reports again up to there
(`integrations._resumed`). A trial that ended inside a killed driver
never starts again: as a resumed experiment goes on, each such trial
whose experiment holds less than its result.json (or has none) gets it
the same way, and its experiment is ended (`_resumed.TrackerCallback`).
Comet logs an error for an empty tag list, so
no tags are added without `tags`.
"""

from __future__ import annotations

import json
import os
import uuid
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tunecore.integrations._resumed import ResumedRuns, TrackerCallback
from tunecore.model import CheckpointRef, InvalidFieldError, JsonValue
from tunecore.result import TRAINING_ITERATION
from tunecore.shell.trial_view import Trial, as_recorded
from tunecore.utils.dicts import flatten_dict

os.environ.setdefault("COMET_DISABLE_AUTO_LOGGING", "1")  # as Ray: before comet_ml loads
try:
    import comet_ml
    from comet_ml.config import config_api
except ImportError as error:  # the module's extra says what to install
    raise ImportError(
        "tunecore.integrations.comet needs comet_ml: pip install 'tunecore[comet]'"
    ) from error

MESSAGES = "messages.json"  # what an offline archive logged, one message a line
_KEY_NAMESPACE = uuid.UUID("6b9e2d4c-3f1a-4b7e-9c55-2a0f8d1e7c31")


class CometLoggerCallback(TrackerCallback):
    """Logs each trial as a Comet experiment (module docstring)."""

    # Do not enable these auto log options unless overridden
    _exclude_autolog = (
        "auto_output_logging",
        "log_git_metadata",
        "log_git_patch",
        "log_env_cpu",
        "log_env_gpu",
    )
    _exclude_results = ("done", "should_checkpoint")
    _system_results = ("node_ip", "hostname", "pid", "date")
    _other_results = ("trial_id", "experiment_id", "experiment_tag")
    _episode_results = ("hist_stats/episode_reward", "hist_stats/episode_lengths")

    def __init__(
        self,
        online: bool = True,
        tags: Sequence[str] | None = None,
        save_checkpoints: bool = False,
        **experiment_kwargs: Any,
    ) -> None:
        if tags is not None and (
            isinstance(tags, str) or not all(isinstance(tag, str) for tag in tags)
        ):
            raise InvalidFieldError("CometLoggerCallback.tags", tags, "a list of strings")
        if "experiment_key" in experiment_kwargs:
            raise InvalidFieldError(
                "CometLoggerCallback.experiment_key",
                experiment_kwargs["experiment_key"],
                "nothing: each trial gets a key of its own",
            )
        self.online = online
        self.tags = list(tags or [])
        self.save_checkpoints = save_checkpoints
        self.experiment_kwargs = dict(experiment_kwargs)
        for option in self._exclude_autolog:
            if not self.experiment_kwargs.get(option):
                self.experiment_kwargs[option] = False
        self._trial_experiments: dict[str, Any] = {}
        self._resumed = ResumedRuns()

    def log_trial_start(self, trial: Trial) -> None:
        experiment = self._trial_experiments.get(trial.trial_id)
        missing: list[Mapping[str, JsonValue]] = []
        if experiment is None:
            experiment, missing = self._open(trial)
            self._trial_experiments[trial.trial_id] = experiment
            # Several experiments at once: none is the process's global one.
            config_api.set_global_experiment(None)  # type: ignore[no-untyped-call]
        experiment.set_name(str(trial))
        if self.tags:  # Comet logs an error for no tags
            experiment.add_tags(self.tags)
        experiment.log_other("Created from", "Ray")
        config = dict(trial.config)
        config.pop("callbacks", None)
        experiment.log_parameters(config)
        for result in missing:
            self._log_result(experiment, result)

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        result = as_recorded(trial, result)  # what the log records, as before
        if trial.trial_id not in self._trial_experiments:
            self.log_trial_start(trial)
        if self._resumed.is_new(trial.trial_id, result):
            self._log_result(self._trial_experiments[trial.trial_id], result)

    def on_checkpoint(
        self, iteration: int, trials: Sequence[Trial], trial: Trial, checkpoint: CheckpointRef
    ) -> None:
        experiment = self._trial_experiments.get(trial.trial_id)
        if not self.save_checkpoints or experiment is None or not os.path.isdir(checkpoint.path):
            return
        artifact = comet_ml.Artifact(name=f"checkpoint_{trial}", artifact_type="model")
        root = Path(checkpoint.path)
        for file in sorted(root.rglob("*")):
            if file.is_file():
                artifact.add(str(file), logical_path=file.relative_to(root).as_posix())
        experiment.log_artifact(artifact)

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        experiment = self._trial_experiments.pop(trial.trial_id, None)
        self._resumed.forget(trial.trial_id)
        if experiment is not None:
            experiment.end()

    def on_experiment_end(self, trials: Sequence[Trial]) -> None:
        """Ends (and, offline, archives) the experiments still open: Ray
        does so when the callback is garbage-collected."""
        for trial_id in list(self._trial_experiments):
            self._trial_experiments.pop(trial_id).end()

    def _open(self, trial: Trial) -> tuple[Any, list[Mapping[str, JsonValue]]]:
        """The trial's experiment, continued when Comet holds it (a
        resumed driver) else new, and the trial's recorded results it
        lacks (module docstring): none for a trial that starts now."""
        held_upto = self.held_upto(trial)
        missing = self._resumed.opened(trial.trial_id, trial.directory, held_upto or 0)
        kind: Any
        if held_upto is None:
            kind = comet_ml.Experiment if self.online else comet_ml.OfflineExperiment
        else:
            kind = (
                comet_ml.ExistingExperiment if self.online else comet_ml.ExistingOfflineExperiment
            )
        return kind(experiment_key=experiment_key(trial), **self.experiment_kwargs), missing

    def held_upto(self, trial: Trial) -> int | None:
        """Online, what Comet's server holds of the trial's experiment;
        offline, its completed archives (module docstring)."""
        key = experiment_key(trial)
        if self.online:
            return self._held_online(key)
        return _held_offline(key, self.experiment_kwargs.get("offline_directory"))

    def _held_online(self, key: str) -> int | None:
        """The highest `training_iteration` Comet's server holds for the
        experiment `key`; 0 when it holds none, None when there is no
        such experiment."""
        api: Any = comet_ml.API(api_key=self.experiment_kwargs.get("api_key"))  # type: ignore[no-untyped-call]
        found = api.get_experiment_by_key(key)
        if found is None:
            return None
        steps = [m.get("step") for m in found.get_metrics(TRAINING_ITERATION)]
        return max((int(s) for s in steps if isinstance(s, int | float)), default=0)

    def _log_result(self, experiment: Any, result: Mapping[str, JsonValue]) -> None:
        step = result[TRAINING_ITERATION]
        config = result.get("config")
        if isinstance(config, Mapping):
            update = {k: v for k, v in config.items() if k != "callbacks"}
            for key, value in update.items():
                if isinstance(value, Mapping):
                    experiment.log_parameters(flatten_dict({key: value}, "/"), step=step)
                else:
                    experiment.log_parameter(key, value, step=step)
        others: dict[str, Any] = {}
        metrics: dict[str, Any] = {}
        system: dict[str, Any] = {}
        episodes: dict[str, Any] = {}
        for key, value in flatten_dict(dict(result), delimiter="/").items():
            if key == "config" or key.startswith("config/") or _under(key, self._exclude_results):
                continue
            if _under(key, self._other_results):
                others[key] = value
            elif _under(key, self._system_results):
                system[key] = value
            elif _under(key, self._episode_results):
                episodes[key] = value
            else:
                metrics[key] = value
        # `training_iteration` last: where it is, the whole result is.
        metrics[TRAINING_ITERATION] = metrics.pop(TRAINING_ITERATION, step)
        experiment.log_others(others)
        experiment.log_metrics(metrics, step=step)
        for key, value in system.items():
            experiment.log_system_info(key, value)
        for key, value in episodes.items():
            if isinstance(value, list):
                experiment.log_curve(key, x=list(range(len(value))), y=value, step=step)


def experiment_key(trial: Trial) -> str:
    """The trial's Comet experiment key (32 hex digits, as Comet wants):
    the same in every driver that runs the trial."""
    directory = trial.directory
    experiment = directory.parent.name if directory is not None else ""
    return uuid.uuid5(_KEY_NAMESPACE, f"{experiment}/{trial.trial_id}").hex


def offline_archives(key: str, offline_directory: str | None) -> list[Path]:
    """The archives `OfflineExperiment`s of experiment `key` completed in
    the offline directory (`<key>.zip`, then `<key>-<suffix>.zip` for each
    continuation). An experiment makes its archive empty as it starts and
    fills it as it ends: one a SIGKILL stopped stays empty, and is not one."""
    directory = Path(offline_directory or str(config_api.get_config("comet.offline_directory")))
    if not directory.is_dir():
        return []
    return sorted(
        path
        for path in directory.iterdir()
        if path.suffix == ".zip"
        and (path.stem == key or path.stem.startswith(f"{key}-"))
        and _is_complete(path)
    )


def _is_complete(archive: Path) -> bool:
    try:
        with zipfile.ZipFile(archive) as opened:
            return MESSAGES in opened.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def archived_metrics(archive: Path) -> Iterator[dict[str, Any]]:
    """The metrics an offline archive holds (its `messages.json`, one
    message per line, as `comet upload` reads it): `metricName`,
    `metricValue`, `step`."""
    with zipfile.ZipFile(archive) as opened, opened.open(MESSAGES) as messages:
        for line in messages:
            message = json.loads(line)
            if message.get("type") == "metric_msg":
                yield message["payload"]["metric"]


def _held_offline(key: str, offline_directory: str | None) -> int | None:
    archives = offline_archives(key, offline_directory)
    if not archives:
        return None
    steps = [
        int(metric["step"])
        for archive in archives
        for metric in archived_metrics(archive)
        if metric.get("metricName") == TRAINING_ITERATION and metric.get("step") is not None
    ]
    return max(steps, default=0)


def _under(key: str, names: Sequence[str]) -> bool:
    return any(key == name or key.startswith(f"{name}/") for name in names)


__all__ = ["CometLoggerCallback"]
