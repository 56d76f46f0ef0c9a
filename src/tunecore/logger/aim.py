"""Ray's Aim logger (`ray.tune.logger.aim`): `AimLoggerCallback` logs every
trial as one Aim run from the driver (`pip install 'tunecore[aim]'`)::

    from tunecore.logger.aim import AimLoggerCallback

    tuner = tune.Tuner(
        train,
        run_config=tune.RunConfig(callbacks=[AimLoggerCallback(experiment_name="tune")]),
    )

As Ray Tune's: a run per trial in the Aim repo `repo` (else one in the
experiment's directory), its experiment `experiment_name` (else the
experiment's name), holding `trial_id` and `trial_log_dir` (the trial's
directory) and the trial's searched parameters as `hparams` (flattened
with `/`; values of other types than str, bool, int, float, list and
None left out); each result's finite numbers, flattened, tracked as
`ray/tune/<name>` at step `timesteps_total` (else `training_iteration`),
with a reported `epoch` and `context` as Aim's own, and without `config`,
`pid`, `timestamp`, `time_total_s` and `training_iteration`; with
`metrics`, only those. Other keyword arguments go to `aim.Run`. The run
is closed as the trial ends.

Beyond Ray Tune, which closes a trial's run and opens a new one each time
the trial starts again: a trial keeps one run whatever happens to the
driver. Its run's hash is kept in the trial's directory (`aim_run.json`),
so a restarted trial, and a resumed driver, continue that run. Aim keeps
one value per metric and step, so a result the restarted trial reports
again replaces the one from before, and each result is in the run once.
Aim writes what it is given before `track` returns (to its database's
log), so a SIGKILLed driver loses nothing it tracked. Ray also records
the trial's node IP (`trial_ip`), which a tunecore trial does not know.

A resume catches runs up as the other trackers do
(`integrations._resumed`): the run keeps the highest
`training_iteration` it was given (the run parameter
`tunecore_held_upto`), and a run opened for a trial that ran before gets
the rows of the trial's result.json past it. So a trial that ended in a
driver that ran without this callback (or whose callback raised) has a
run with all its results once a driver with it resumes, though the trial
never starts again; and a trial restarted from a checkpoint has the
results before it. A run of a tunecore before this holds no such
parameter: it gets every row again, each at its step, which Aim keeps
once.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tunecore.integrations._resumed import ResumedRuns, TrackerCallback
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.result import TIME_TOTAL_S, TIMESTEPS_TOTAL, TRAINING_ITERATION
from tunecore.shell.trial_view import Trial, as_recorded
from tunecore.utils.dicts import flatten_dict

try:
    from aim.sdk import Repo, Run
except ImportError as error:  # the module's extra says what to install
    raise ImportError("tunecore.logger.aim needs aim: pip install 'tunecore[aim]'") from error

logger = logging.getLogger(__name__)

RUN_FILE = "aim_run.json"
"""In a trial's directory: the hash of the trial's Aim run."""

HELD_UPTO = "tunecore_held_upto"
"""A run's parameter: the highest `training_iteration` it was given."""

_PEEK: dict[str, Any] = {"system_tracking_interval": None, "capture_terminal_logs": False}
"""How a run is opened only to read how far it got: no tracking threads.
(Opened for writing: Aim reads what a killed process never closed only
so.)"""

_NOT_TRACKED = ("config", "pid", "timestamp", TIME_TOTAL_S, TRAINING_ITERATION)


class AimLoggerCallback(TrackerCallback):
    """Logs each trial as an Aim run (module docstring)."""

    VALID_HPARAMS = (str, bool, int, float, list, type(None))

    def __init__(
        self,
        repo: str | Repo | None = None,
        experiment_name: str | None = None,
        metrics: Sequence[str] | None = None,
        **aim_run_kwargs: Any,
    ) -> None:
        if metrics is not None and (
            isinstance(metrics, str)
            or not metrics
            or not all(isinstance(name, str) for name in metrics)
        ):
            raise InvalidFieldError(
                "AimLoggerCallback.metrics",
                metrics,
                "None (every metric) or a non-empty list of metric names",
            )
        self._repo_path = repo
        self._experiment_name = experiment_name
        self._metrics = list(metrics) if metrics is not None else None
        self._aim_run_kwargs = aim_run_kwargs
        self._trial_to_run: dict[str, Run] = {}
        self._resumed = ResumedRuns()

    def log_trial_start(self, trial: Trial) -> None:
        if trial.trial_id in self._trial_to_run:
            return  # a restart within this driver: the run goes on
        run, held_upto = self._open_run(trial)
        self._trial_to_run[trial.trial_id] = run
        if trial.evaluated_params:
            run["hparams"] = self._hparams(trial)
        for row in self._resumed.opened(trial.trial_id, trial.directory, held_upto):
            self._track(run, row)

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        result = as_recorded(trial, result)  # what the log records, as before
        if trial.trial_id not in self._trial_to_run:
            self.log_trial_start(trial)
        if self._resumed.is_new(trial.trial_id, result):
            self._track(self._trial_to_run[trial.trial_id], result)

    def held_upto(self, trial: Trial) -> int | None:
        """How far the trial's run got (`HELD_UPTO`; 0 for a run that does
        not say), None if it has none: its directory names no run of the
        repo. The run is opened to read it, and closed."""
        repo, _ = self._places(trial)
        known = _recorded_hash(trial.directory)
        if known is None or not _repo_of(repo).run_exists(known):
            return None
        run = Run(run_hash=known, repo=repo, **_PEEK)
        try:
            return _held(run)
        finally:
            run.close()

    def _track(self, run: Run, result: Mapping[str, JsonValue]) -> None:
        """Track one result in the run, then note how far the run got."""
        step = result.get(TIMESTEPS_TOTAL) or result[TRAINING_ITERATION]
        values = {k: v for k, v in result.items() if k not in _NOT_TRACKED}
        # `context` and `epoch` are special keys users can report, which
        # are Aim's own context and epoch.
        context = values.pop("context", None)
        epoch = values.pop("epoch", None)
        for name, value in flatten_dict(values, delimiter="/").items():
            if self._metrics and name not in self._metrics:
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                run.track(
                    value=value, name=f"ray/tune/{name}", epoch=epoch, step=step, context=context
                )
        iteration = result.get(TRAINING_ITERATION)
        if isinstance(iteration, int) and not isinstance(iteration, bool):
            run[HELD_UPTO] = iteration

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        self._resumed.forget(trial.trial_id)
        run = self._trial_to_run.pop(trial.trial_id, None)
        if run is not None:
            run.close()

    def on_experiment_end(self, trials: Sequence[Trial]) -> None:
        for trial_id in list(self._trial_to_run):
            self._trial_to_run.pop(trial_id).close()

    def _places(self, trial: Trial) -> tuple[str | Repo | None, str | None]:
        """The repo and the experiment of the trial's run."""
        directory = trial.directory
        repo = self._repo_path or (str(directory.parent) if directory is not None else None)
        experiment = self._experiment_name or (
            directory.parent.name if directory is not None else None
        )
        return repo, experiment

    def _open_run(self, trial: Trial) -> tuple[Run, int]:
        """The trial's run: the one its directory names (it ran before),
        else a new one, whose hash the directory keeps from now on; and
        how far it got (`held_upto`, 0 for a new one)."""
        directory = trial.directory
        repo, experiment = self._places(trial)
        known = _recorded_hash(directory)
        held_upto = 0
        if known is not None and _repo_of(repo).run_exists(known):
            run = Run(run_hash=known, repo=repo, experiment=experiment, **self._aim_run_kwargs)
            held_upto = _held(run)
        else:
            run = Run(repo=repo, experiment=experiment, **self._aim_run_kwargs)
            if directory is not None:
                _record_hash(directory, run.hash)
        run["trial_id"] = trial.trial_id
        run["trial_log_dir"] = trial.path
        return run, held_upto

    def _hparams(self, trial: Trial) -> dict[str, Any]:
        params = flatten_dict(dict(trial.evaluated_params), delimiter="/")
        kept = {k: v for k, v in params.items() if isinstance(v, self.VALID_HPARAMS)}
        removed = {k: v for k, v in params.items() if k not in kept}
        if removed:
            logger.info(
                "Removed the following hyperparameter values when logging to aim: %s", removed
            )
        return kept


def _repo_of(repo: str | Repo | None) -> Repo:
    """The repo `aim.Run(repo=...)` logs into (Aim's default one for None)."""
    if isinstance(repo, Repo):
        return repo
    return Repo.from_path(repo, init=True) if repo is not None else Repo.default_repo(init=True)


def _held(run: Run) -> int:
    """The run's `HELD_UPTO` (0 if it has none, as a run of a tunecore
    before it: its rows are given again, and Aim keeps each step once)."""
    held = run.get(HELD_UPTO)
    return held if isinstance(held, int) and not isinstance(held, bool) else 0


def _recorded_hash(directory: Path | None) -> str | None:
    if directory is None:
        return None
    try:
        found = json.loads((directory / RUN_FILE).read_text()).get("run_hash")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def _record_hash(directory: Path, run_hash: str) -> None:
    """Written whole or not at all (a rename), so a kill never leaves half."""
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".{RUN_FILE}.partial"
    partial.write_text(json.dumps({"run_hash": run_hash}))
    os.replace(partial, directory / RUN_FILE)


__all__ = ["AimLoggerCallback"]
