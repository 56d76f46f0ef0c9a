"""Ray's Weights & Biases integration (`ray.air.integrations.wandb`):
`WandbLoggerCallback` logs every trial from the driver, `setup_wandb`
opens a run inside a training function (`pip install 'tunecore[wandb]'`)::

    from tunecore.integrations.wandb import WandbLoggerCallback

    tuner = tune.Tuner(
        train,
        run_config=tune.RunConfig(callbacks=[WandbLoggerCallback(project="tune")]),
    )

The callback, as Ray Tune's: one W&B run per trial, its id the trial id,
its name the trial's name, its group `group` (else the experiment's
name), the trial's config as the run's config (with `trial_log_path`, the
trial's directory, where the run's files go too); each result's numbers
logged, except `done`, `should_checkpoint` and `excludes`, with
`AUTO_CONFIG_KEYS` (`trial_id`, `hostname`, ...) put in the config instead,
and the trial's config again with `log_config` (PBT changes it); each
checkpoint as a `model` artifact with `upload_checkpoints`; the run
finished with exit code 1 for a trial that errored. `project` (or
`WANDB_PROJECT_NAME`) is required; the key comes from `api_key`,
`api_key_file`, `WANDB_API_KEY` or `wandb login`. Other keyword
arguments go to `wandb.init`.

W&B is driven from one thread of the driver, away from the experiment's
loop (Ray Tune starts an actor per trial for the same reason: `wandb.init`
takes seconds); `on_experiment_end` waits up to `upload_timeout` seconds
for it to finish the runs.

A run is resumed, not made anew, when its trial starts again
(`resume="allow"` with the trial id as run id, as `setup_wandb` also
does), so a trial keeps one run across restarts and a resumed driver,
and each result is in it once (`integrations._resumed`): a run opened
for a trial that ran before gets the results of the trial's result.json
past the highest `training_iteration` W&B holds of it, and the results
the trial reports again up to there are skipped. Online, what W&B holds
is the resumed run's summary; offline, where W&B writes each process's
part of a run to a directory of its own (`wandb sync` uploads them in
order), it is what the run's earlier offline directories recorded
(`integrations._wandb_offline`): W&B loses what a SIGKILLed process had
buffered, and the run gets it again from result.json. A trial that ended
inside a killed driver never starts again: as a resumed experiment goes
on, each such trial whose run holds less than its result.json (or that
has no run: W&B had not opened it yet) has its run opened, caught up the
same way and finished (`integrations._resumed.TrackerCallback`); online,
how far a run got is read from W&B's API (`wandb.Api().run`), a call per
ended trial with results.

Where tunecore differs from Ray Tune 2.60: in offline or disabled mode no
API key is needed (Ray asks for one even then); Ray's `save_checkpoints`
(its old name for `upload_checkpoints`) is taken with a warning, as in
Ray; `video_kwargs` and `image_kwargs` are accepted and unused, since a
tunecore result holds only JSON values, never a video or an image.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tunecore.integrations._resumed import ResumedRuns, TrackerCallback
from tunecore.integrations._wandb_offline import history, offline_dirs
from tunecore.model import CheckpointRef, InvalidFieldError, JsonValue
from tunecore.result import TRAINING_ITERATION
from tunecore.shell.trainable import get_context
from tunecore.shell.trial_view import Trial, as_recorded
from tunecore.utils.dicts import flatten_dict

try:
    import wandb
except ImportError as error:  # the module's extra says what to install
    raise ImportError(
        "tunecore.integrations.wandb needs wandb: pip install 'tunecore[wandb]'"
    ) from error

logger = logging.getLogger(__name__)

WANDB_ENV_VAR = "WANDB_API_KEY"
WANDB_PROJECT_ENV_VAR = "WANDB_PROJECT_NAME"
WANDB_GROUP_ENV_VAR = "WANDB_GROUP_NAME"
_NO_KEY_MODES = ("offline", "disabled", "dryrun")
_OFFLINE_MODES = ("offline", "dryrun")


class WandbLoggerCallback(TrackerCallback):
    """Logs each trial as a W&B run from the driver (module docstring)."""

    AUTO_CONFIG_KEYS = (
        "trial_id",
        "experiment_tag",
        "node_ip",
        "experiment_id",
        "hostname",
        "pid",
        "date",
    )
    """Results that are saved with wandb.config instead of wandb.log."""

    _exclude_results = ("done", "should_checkpoint")

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        project: str | None = None,
        group: str | None = None,
        api_key_file: str | None = None,
        api_key: str | None = None,
        excludes: Sequence[str] | None = None,
        log_config: bool = False,
        upload_checkpoints: bool = False,
        save_checkpoints: bool = False,
        upload_timeout: int = 1800,
        video_kwargs: dict[str, Any] | None = None,
        image_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if save_checkpoints:
            warnings.warn(
                "`save_checkpoints` is deprecated. Use `upload_checkpoints` instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            upload_checkpoints = True
        if excludes is not None and (
            isinstance(excludes, str) or not all(isinstance(e, str) for e in excludes)
        ):
            raise InvalidFieldError("WandbLoggerCallback.excludes", excludes, "a list of keys")
        if isinstance(upload_timeout, bool) or not isinstance(upload_timeout, int | float):
            raise InvalidFieldError(
                "WandbLoggerCallback.upload_timeout", upload_timeout, "a number of seconds"
            )
        self.project = project
        self.group = group
        self.api_key_path = api_key_file
        self.api_key = api_key
        self.excludes = list(excludes or [])
        self.log_config = log_config
        self.upload_checkpoints = upload_checkpoints
        self.upload_timeout = upload_timeout
        self.video_kwargs = video_kwargs or {}
        self.image_kwargs = image_kwargs or {}
        self.kwargs = kwargs
        self._worker: _RunsThread | None = None

    def setup(
        self,
        stop: object = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: object,
    ) -> None:
        _set_api_key(self.api_key_path, self.api_key, self.kwargs.get("mode"))
        self.project = self.project or os.environ.get(WANDB_PROJECT_ENV_VAR)
        if not self.project:
            raise ValueError(
                "WandbLoggerCallback needs a project: pass project= or set the "
                f"{WANDB_PROJECT_ENV_VAR} environment variable"
            )
        self.group = self.group or os.environ.get(WANDB_GROUP_ENV_VAR)
        self._worker = _RunsThread(self._split)

    def log_trial_start(self, trial: Trial) -> None:
        directory = trial.local_path
        group = self.group or _experiment_name(trial)
        init = {
            "id": trial.trial_id,
            "name": str(trial),
            "resume": "allow",
            "reinit": "create_new",
            "allow_val_change": True,
            "group": group,
            "project": self.project,
            "config": {**trial.config, "trial_log_path": directory},
            "dir": directory,
            **self.kwargs,
        }
        self._runs().put(("start", trial.trial_id, (init, trial.directory)))

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        result = as_recorded(trial, result)  # what the log records, as before
        log, config = self._split(result)
        if self.log_config:
            config.update(trial.config)
        self._runs().put(("result", trial.trial_id, (log, config)))

    def on_checkpoint(
        self, iteration: int, trials: Sequence[Trial], trial: Trial, checkpoint: CheckpointRef
    ) -> None:
        if self.upload_checkpoints and os.path.isdir(checkpoint.path):
            self._runs().put(("checkpoint", trial.trial_id, (str(trial), checkpoint.path)))

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        self._runs().put(("end", trial.trial_id, failed))

    def held_upto(self, trial: Trial) -> int | None:
        """Offline, what the run's offline directories recorded; online,
        the run's summary on W&B's server (module docstring)."""
        mode = self.kwargs.get("mode") or os.environ.get("WANDB_MODE")
        if mode in _OFFLINE_MODES:
            directory = trial.directory
            dirs = [] if directory is None else offline_dirs(directory / "wandb", trial.trial_id)
            if not dirs:
                return None
            return _highest([row.get(TRAINING_ITERATION) for d in dirs for row in history(d)]) or 0
        if mode == "disabled":
            return None  # nothing is kept: a disabled run costs nothing
        api = wandb.Api()
        entity = self.kwargs.get("entity") or api.default_entity
        try:
            run = api.run(f"{entity}/{self.project}/{trial.trial_id}")
        except (wandb.errors.CommError, ValueError):  # no such run
            return None
        return _highest([dict(run.summary).get(TRAINING_ITERATION)])

    def on_experiment_end(self, trials: Sequence[Trial]) -> None:
        if self._worker is not None:
            self._worker.close(self.upload_timeout)
            self._worker = None

    def _runs(self) -> _RunsThread:
        if self._worker is None:
            raise RuntimeError(
                "WandbLoggerCallback was not set up: pass it in RunConfig(callbacks=[...])"
            )
        return self._worker

    def _split(self, result: Mapping[str, JsonValue]) -> tuple[dict[str, Any], dict[str, Any]]:
        """What of a result W&B logs, and what goes into the run's config."""
        excluded = (*self._exclude_results, *self.excludes)
        log: dict[str, Any] = {}
        config: dict[str, Any] = {}
        for key, value in flatten_dict(dict(result), delimiter="/").items():
            if _under(key, self.AUTO_CONFIG_KEYS):
                config[key] = value
            elif not _under(key, excluded) and isinstance(value, int | float):
                log[key] = value
        return log, config


class _RunsThread:
    """The thread that owns the W&B runs: it takes the callback's items in
    order, so a trial's start, results and end reach W&B as they happened."""

    def __init__(
        self, split: Callable[[Mapping[str, JsonValue]], tuple[dict[str, Any], dict[str, Any]]]
    ) -> None:
        self._split = split
        self._items: queue.SimpleQueue[tuple[str, str, Any] | None] = queue.SimpleQueue()
        self._runs: dict[str, Any] = {}
        self._resumed = ResumedRuns()
        self._thread = threading.Thread(target=self._serve, name="wandb-runs", daemon=True)
        self._thread.start()

    def put(self, item: tuple[str, str, Any]) -> None:
        self._items.put(item)

    def close(self, timeout: float) -> None:
        """Finish every run (waiting at most `timeout` seconds)."""
        self._items.put(None)
        self._thread.join(timeout)
        if self._thread.is_alive():
            logger.warning("W&B did not finish its runs within %s s; leaving them", timeout)

    def _serve(self) -> None:
        while (item := self._items.get()) is not None:
            kind, trial_id, content = item
            try:
                getattr(self, f"_{kind}")(trial_id, content)
            except Exception:
                logger.exception("W&B could not take the %s of trial %s", kind, trial_id)
        for trial_id in list(self._runs):
            self._end(trial_id, False)

    def _start(self, trial_id: str, content: tuple[dict[str, Any], Path | None]) -> None:
        init, trial_dir = content
        if trial_id in self._runs:
            return  # a restart within this driver: the run goes on
        run = wandb.init(**init)
        self._runs[trial_id] = run
        for row in self._resumed.opened(trial_id, trial_dir, _held_upto(run)):
            self._log(trial_id, *self._split(row))

    def _result(self, trial_id: str, content: tuple[dict[str, Any], dict[str, Any]]) -> None:
        if self._resumed.is_new(trial_id, content[0]):
            self._log(trial_id, *content)

    def _log(self, trial_id: str, log: dict[str, Any], config: dict[str, Any]) -> None:
        run = self._runs[trial_id]
        if config:
            run.config.update(config, allow_val_change=True)
        run.log(log)

    def _checkpoint(self, trial_id: str, content: tuple[str, str]) -> None:
        name, path = content
        artifact = wandb.Artifact(name=f"checkpoint_{name}", type="model")
        artifact.add_dir(path)
        self._runs[trial_id].log_artifact(artifact)

    def _end(self, trial_id: str, failed: bool) -> None:
        run = self._runs.pop(trial_id, None)
        self._resumed.forget(trial_id)
        if run is not None:
            run.finish(exit_code=1 if failed else 0)


def _held_upto(run: Any) -> int:
    """The highest `training_iteration` W&B holds of `run` from before
    this process opened it (0: none). Online, its summary says (a run
    resumed from W&B's server); offline, its earlier offline directories
    do (`_wandb_offline`)."""
    if run.offline:
        current = Path(run.dir).parent
        held = [
            row.get(TRAINING_ITERATION)
            for earlier in offline_dirs(current.parent, run.id)
            if earlier != current
            for row in history(earlier)
        ]
    else:
        held = [dict(run.summary).get(TRAINING_ITERATION)] if run.resumed else []
    return _highest(held) or 0


def _highest(iterations: Sequence[object]) -> int | None:
    """The highest of the `training_iteration`s a run holds, None for none."""
    return max((int(i) for i in iterations if isinstance(i, int | float)), default=None)


def setup_wandb(
    config: Mapping[str, Any] | None = None,
    api_key: str | None = None,
    api_key_file: str | None = None,
    rank_zero_only: bool = True,  # noqa: ARG001 - a trial is rank 0 (docstring)
    **kwargs: Any,
) -> Any:
    """Open a W&B run inside a training function and return it (`run.log`,
    or `wandb.log`). As Ray's: its id is the trial id, its name the
    trial's, its group the experiment's name, its config `config`, and
    `kwargs` go to `wandb.init` over these (`trial_id` and `trial_name`
    as the run's id and name); a trial that runs again
    resumes the same run. A trial is one worker of rank 0, so
    `rank_zero_only` changes nothing."""
    try:
        context = get_context()
        defaults: dict[str, Any] = {
            "id": context.get_trial_id(),
            "name": context.get_trial_name(),
            "group": context.get_experiment_name(),
        }
    except RuntimeError:  # called outside a trial
        defaults = {}
    # Ray's names for the run's id and name (a class trainable passes its own).
    for ray_name, wandb_name in (("trial_id", "id"), ("trial_name", "name")):
        given = kwargs.pop(ray_name, None)
        if given:
            defaults[wandb_name] = given
    _set_api_key(api_key_file, api_key, kwargs.get("mode"))
    settings = dict(config or {})
    settings.pop("wandb", None)
    init = {
        **defaults,
        "project": os.environ.get(WANDB_PROJECT_ENV_VAR),
        "resume": "allow",
        "reinit": "finish_previous",
        "allow_val_change": True,
        "config": settings,
        **kwargs,
    }
    if os.environ.get(WANDB_GROUP_ENV_VAR) and "group" not in kwargs:
        init["group"] = os.environ[WANDB_GROUP_ENV_VAR]
    return wandb.init(**init)


def _set_api_key(api_key_file: str | None, api_key: str | None, mode: object) -> None:
    """Ray's key lookup: `api_key`, else the file's first line, else
    `WANDB_API_KEY`, else `wandb login`'s; a ValueError when none is there
    and W&B is online (module docstring)."""
    if api_key_file:
        if api_key:
            raise ValueError("Both WandB `api_key_file` and `api_key` set.")
        with open(os.path.expanduser(api_key_file)) as file:
            api_key = file.readline().strip()
    if api_key:
        os.environ[WANDB_ENV_VAR] = api_key
        return
    if os.environ.get(WANDB_ENV_VAR) or (mode or os.environ.get("WANDB_MODE")) in _NO_KEY_MODES:
        return
    try:
        if wandb.Api().api_key:  # `wandb login`
            return
    except wandb.errors.UsageError:
        pass
    raise ValueError(
        f"No WandB API key found. Either set the {WANDB_ENV_VAR} environment variable, pass "
        "`api_key` or `api_key_file` to the `WandbLoggerCallback` class as arguments, or run "
        "`wandb login` from the command line"
    )


def _under(key: str, prefixes: Sequence[str]) -> bool:
    return any(key == prefix or key.startswith(f"{prefix}/") for prefix in prefixes)


def _experiment_name(trial: Trial) -> str | None:
    """The experiment's directory name, Ray's default group."""
    directory = trial.directory
    return None if directory is None else directory.parent.name


__all__ = ["WandbLoggerCallback", "setup_wandb"]
