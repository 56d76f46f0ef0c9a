"""User hooks into the experiment loop, and the loggers built on them.

The hooks are the ones Ray Tune users know (`on_trial_result`, ...), with
typed arguments: `iteration` counts loop steps, `trials` is every trial of
the experiment in creation order and `trial` the one the hook is about, all
as read-only `Trial` views in Ray's attribute names (`trial.trial_id`,
`trial.config`, `trial.status`, `str(trial)` its name; see `trial_view`):
a callback reads state, it cannot change it, only events do that.

A callback is user code and runs inside the loop, so `CallbackList` keeps
its failures from ever ending the experiment: it logs the exception with the
callback's class and the hook's name, once per (callback, hook, exception
type), so a broken `on_step_end` does not write a traceback every step, and
goes on with the next callback.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from tunecore.model import CheckpointRef, JsonValue
from tunecore.shell import tfevents
from tunecore.shell.storage.layout import ExperimentStorage
from tunecore.shell.trial_view import Trial, TrialWithObjects, as_recorded

logger = logging.getLogger(__name__)

_Hook = TypeVar("_Hook", bound=Callable[..., None])

_IGNORING_TRIALS: set[object] = set()
"""The hooks marked `ignores_trials`."""


def ignores_trials(hook: _Hook) -> _Hook:
    """Mark a hook of tunecore's own that never reads its `trials`: the
    loop keeps `trials` (a view of every trial, `shell.listed_trials`) only
    for a hook some callback's class defines unmarked (`reads_trials`), so
    a run whose callbacks are all tunecore's loggers holds no list, and no
    view of a finished trial (0.07 KB each, against issue 41's 2 KB a
    trial). Mark only a hook that ignores `trials` and calls nothing
    overridable with it."""
    _IGNORING_TRIALS.add(hook)
    return hook


def reads_trials(callback: object, hook: str) -> bool:
    """Whether `callback`'s `hook` may read its `trials`: not when the
    callback lacks the hook or its hook is marked `ignores_trials`; for a
    `CallbackList`, whether one of its callbacks' may."""
    if isinstance(callback, CallbackList):
        return any(reads_trials(each, hook) for each in callback.callbacks)
    method = getattr(callback, hook, None)
    if method is None:
        return False  # not called at all (`CallbackList` reports the error)
    return getattr(method, "__func__", method) not in _IGNORING_TRIALS


class Callback:
    """Base class: every hook does nothing, override the ones you need.

    The hooks take what Ray Tune's do (`trials: List[Trial]`, `result:
    Dict`), so an override written with Ray's documented signature, `**info`
    and all, type-checks: an override may widen a parameter (`Sequence`,
    `Mapping`), never narrow it. `trials` is every trial in creation order:
    one list, kept across the calls as Ray's controller hands its own
    `_trials` to each, brought up to date before each hook that may read it
    (`reads_trials`) by the trials changed since (`shell.listed_trials`);
    `result` is a fresh dict of JSON values."""

    def setup(
        self,
        stop: object = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: object,
    ) -> None:
        """Once, as the experiment starts (Ray's `Callback.setup`): the run's
        stopping condition as given, `num_samples`, and how many trials the
        search will make in all (None when that is not known in advance)."""

    @ignores_trials
    def on_step_begin(self, iteration: int, trials: list[Trial]) -> None:
        """A loop step starts: `iteration` is the number of steps done (0
        first). Every trial hook of a running experiment comes within a
        step, with that step's number; each step ends with `on_step_end`.
        A step is a round of events (Ray Tune's handles at most one), so
        how many there are differs from Ray's and depends on timing."""

    @ignores_trials
    def on_step_end(self, iteration: int, trials: list[Trial]) -> None:
        """The step's events are handled and their commands carried out:
        `iteration` counts this step too (`on_step_begin`'s plus one)."""

    @ignores_trials
    def on_trial_start(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        """A trial's worker was started (also on a restart after a failure)."""

    @ignores_trials
    def on_trial_restore(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        """Never called during a run, as in Ray Tune 2.60, whose controller
        calls it nowhere: a trial restarted after a failure, a resumed
        pause and a PBT exploit restore from a checkpoint without it (a
        retry is `on_trial_recover`, then `on_trial_start`). Kept so that
        a callback defining it, or calling it, runs as on Ray."""

    @ignores_trials
    def on_trial_save(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        """A trial finished saving a checkpoint."""

    @ignores_trials
    def on_trial_result(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        result: dict[str, Any],
    ) -> None:
        """A trial reported a result."""

    @ignores_trials
    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        """A trial ended without error (TERMINATED)."""

    @ignores_trials
    def on_trial_error(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        """A trial failed for good: it is in ERROR (no retry left)."""

    @ignores_trials
    def on_trial_recover(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        """A trial failed and will be retried (it waits to start again)."""

    @ignores_trials
    def on_checkpoint(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        checkpoint: CheckpointRef,
    ) -> None:
        """A checkpoint of a trial now exists."""

    @ignores_trials
    def on_experiment_restore(self, trials: list[Trial]) -> None:
        """Once, as a resumed experiment (`Tuner.restore`, `tunecore
        resume`) goes on: after `setup`, before any trial starts again,
        with every trial's files back in line with the log
        (`shell.resume`); `trials` as the log left them. A trial restored
        as ended (TERMINATED or ERROR) never starts again, so this is where
        a callback that keeps results elsewhere (a tracker) gets what the
        killed driver had not handed over of such a trial. Beyond Ray Tune,
        whose callbacks hear nothing of a restore."""

    @ignores_trials
    def on_experiment_end(self, trials: list[Trial]) -> None:
        """The experiment is over; release what the callback holds."""

    def get_state(self) -> dict[str, object] | None:
        """What a restore should hand back to this callback (a dict of JSON
        values), or None (the default) for nothing: see
        `tunecore.api.callback_states`."""
        return None

    def set_state(self, state: dict[str, object]) -> None:
        """Take back what `get_state` returned when the experiment last ran."""


RAY_HOOKS = (
    "setup",
    "on_step_begin",
    "on_step_end",
    "on_trial_start",
    "on_trial_restore",
    "on_trial_save",
    "on_trial_result",
    "on_trial_complete",
    "on_trial_recover",
    "on_trial_error",
    "on_checkpoint",
    "on_experiment_end",
)
"""The hooks Ray Tune 2.60's `CallbackList` calls on every callback, without
checking its class: an object that has them all runs there as a callback."""


def missing_hooks(candidate: object) -> list[str]:
    """What keeps `candidate` from being a callback: none for a `Callback`,
    else the `RAY_HOOKS` it lacks (Ray takes a duck-typed callback too)."""
    if isinstance(candidate, Callback):
        return []
    return [hook for hook in RAY_HOOKS if not callable(getattr(candidate, hook, None))]


class CallbackList(Callback):
    """Calls every callback in order; a callback that raises is reported
    (once per callback, hook and exception type) and skipped, never fatal."""

    def __init__(self, callbacks: Iterable[Callback] = ()) -> None:
        self.callbacks: list[Callback] = list(callbacks)
        self._reported: set[tuple[int, str, type[BaseException]]] = set()

    def _each(self, hook: str, /, *args: object, **kwargs: object) -> None:
        """Call `hook` with `args` and `kwargs` on every callback: the typed
        methods below are the contract, this the one way each is forwarded."""
        for position, callback in enumerate(self.callbacks):
            try:
                getattr(callback, hook)(*args, **kwargs)
            except Exception as error:
                key = (position, hook, type(error))
                if key in self._reported:
                    logger.debug(
                        "Callback %s raised %s in %s again",
                        type(callback).__qualname__,
                        type(error).__name__,
                        hook,
                    )
                    continue
                self._reported.add(key)
                logger.exception(
                    "Callback %s raised in %s; the experiment goes on without it for this "
                    "call (further %s errors from this hook are not shown again).",
                    type(callback).__qualname__,
                    hook,
                    type(error).__name__,
                )

    def setup(
        self,
        stop: object = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: object,
    ) -> None:
        self._each(
            "setup",
            stop=stop,
            num_samples=num_samples,
            total_num_samples=total_num_samples,
            **info,
        )

    def on_step_begin(self, iteration: int, trials: list[Trial]) -> None:
        self._each("on_step_begin", iteration, trials)

    def on_step_end(self, iteration: int, trials: list[Trial]) -> None:
        self._each("on_step_end", iteration, trials)

    def on_trial_start(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self._each("on_trial_start", iteration, trials, trial)

    def on_trial_restore(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self._each("on_trial_restore", iteration, trials, trial)

    def on_trial_save(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self._each("on_trial_save", iteration, trials, trial)

    def on_trial_result(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        result: dict[str, Any],
    ) -> None:
        self._each("on_trial_result", iteration, trials, trial, result)

    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self._each("on_trial_complete", iteration, trials, trial)

    def on_trial_error(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self._each("on_trial_error", iteration, trials, trial)

    def on_trial_recover(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self._each("on_trial_recover", iteration, trials, trial)

    def on_checkpoint(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        checkpoint: CheckpointRef,
    ) -> None:
        self._each("on_checkpoint", iteration, trials, trial, checkpoint)

    def on_experiment_restore(self, trials: list[Trial]) -> None:
        self._each("on_experiment_restore", trials)

    def on_experiment_end(self, trials: list[Trial]) -> None:
        self._each("on_experiment_end", trials)


TrialDirOf = Callable[[Trial], Path]
"""Where a trial's files go; the default is the trial's own directory
(`trial.local_path`, which applies the user's `trial_dirname_creator`)."""


class LoggerCallback(Callback):
    """Ray Tune's base for loggers: override the `log_trial_*` methods, the
    hooks call them (`log_trial_end` with `failed=True` on an error)."""

    def attach(self, storage: ExperimentStorage) -> None:
        """`fit()` calls this as it starts, with the experiment's storage;
        the built-in file loggers write there."""

    def log_trial_start(self, trial: Trial) -> None:
        """The trial's worker started."""

    def log_trial_restore(self, trial: Trial) -> None:
        """The trial restored a checkpoint."""

    def log_trial_save(self, trial: Trial) -> None:
        """The trial saved a checkpoint."""

    def log_trial_result(self, iteration: int, trial: Trial, result: dict[str, Any]) -> None:
        """The trial reported `result`."""

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        """The trial ended; `failed` when it ended in ERROR."""

    @ignores_trials
    def on_trial_start(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self.log_trial_start(trial)

    @ignores_trials
    def on_trial_restore(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self.log_trial_restore(trial)

    @ignores_trials
    def on_trial_save(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self.log_trial_save(trial)

    @ignores_trials
    def on_trial_result(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        result: dict[str, Any],
    ) -> None:
        self.log_trial_result(iteration, trial, result)

    @ignores_trials
    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self.log_trial_end(trial, failed=False)

    @ignores_trials
    def on_trial_error(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        self.log_trial_end(trial, failed=True)


class _TrialFilesCallback(LoggerCallback):
    """What the file loggers share: the storage and a trial's directory.

    Made without a storage (`JsonLoggerCallback()`, as Ray Tune scripts
    write it), a logger is attached to the experiment's storage when
    `fit()` starts (`attach`).

    Its state has class-level defaults and its dicts are made on first use:
    Ray Tune users subclass a logger with an `__init__` that skips
    `super().__init__()` (a do-nothing `TBXLoggerCallback` that turns the
    default TensorBoard files off), and the hooks such a subclass leaves as
    they are still run, as on Ray."""

    _storage: ExperimentStorage | None = None
    _dir_of: TrialDirOf | None = None

    def __init__(
        self, storage: ExperimentStorage | None = None, dir_of: TrialDirOf | None = None
    ) -> None:
        self._storage = storage
        self._dir_of = dir_of

    @property
    def _dirs(self) -> dict[str, Path]:
        """Each running trial's directory, by trial id."""
        return cast("dict[str, Path]", self.__dict__.setdefault("_trial_dirs", {}))

    def attach(self, storage: ExperimentStorage) -> None:
        """Write into `storage`, unless the logger was made with one."""
        if self._storage is None:
            self._storage = storage

    @property
    def storage(self) -> ExperimentStorage:
        if self._storage is None:
            raise RuntimeError(
                f"{type(self).__name__} has no experiment to write into: pass it to "
                "RunConfig(callbacks=[...]) or make it with a storage"
            )
        return self._storage

    def dir_of(self, trial: Trial) -> Path:
        """The trial's directory: the `dir_of` given, else the trial's own,
        looked up once per trial while it runs (a directory never moves)."""
        if self._dir_of is not None:
            return self._dir_of(trial)
        known = self._dirs.get(trial.trial_id)
        if known is None:
            known = trial.directory or self.storage.trial_dir(trial.state.spec)
            self._dirs[trial.trial_id] = known
        return known

    @ignores_trials
    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        super().on_trial_complete(iteration, trials, trial)
        self._dirs.pop(trial.trial_id, None)

    @ignores_trials
    def on_trial_error(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        super().on_trial_error(iteration, trials, trial)
        self._dirs.pop(trial.trial_id, None)


class ResultFiles(_TrialFilesCallback):
    """Each result in the trial's result.json (`json`: one line, as it was
    reported), progress.csv (`csv`: one row over the flattened result,
    header policy: see storage) and TensorBoard events (`tensorboard`:
    numeric results as scalars, one event file per trial run in its
    directory, so a restarted trial starts a new file as a new
    `SummaryWriter` would; stepped by `training_iteration`, tagged
    `ray/tune/<flattened key>`; `tfevents` encodes them, tensorboardX is
    not needed), those of them asked for, written by one job of the
    storage's writer: what `fit()` adds by default is one of these (the
    loggers below are each one file of it): a logger per file cost the
    loop three callbacks and the writer three hand-overs per result.
    (params.json is the loop's: it belongs to the trial's storage, and
    changes when PBT resets a config.)"""

    _json = False  # a subclass that skips `__init__` writes nothing
    _csv = False
    _tensorboard = False

    def __init__(
        self,
        storage: ExperimentStorage | None = None,
        dir_of: TrialDirOf | None = None,
        *,
        json: bool = True,
        csv: bool = True,
        tensorboard: bool = False,
    ) -> None:
        super().__init__(storage, dir_of)
        self._json = json
        self._csv = csv
        self._tensorboard = tensorboard

    @property
    def _event_files(self) -> dict[str, Path]:
        """Each running trial's open TensorBoard file, by trial id."""
        return cast("dict[str, Path]", self.__dict__.setdefault("_trial_event_files", {}))

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        if isinstance(trial, TrialWithObjects):  # the files hold the JSON form
            result = as_recorded(trial, result)
        directory = self.dir_of(trial)
        events = None
        if self._tensorboard:
            now = time.time()
            path = self._event_files.get(trial.trial_id)
            first = path is None
            if path is None:
                path = self._event_files[trial.trial_id] = directory / tfevents.new_file_name()
            events = (path, now, first)
        self.storage.append_result(
            directory, result, json=self._json, csv=self._csv, tensorboard=events
        )

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        if self._csv:
            self.storage.flush_progress(self.dir_of(trial))
        path = self._event_files.pop(trial.trial_id, None)
        if path is not None:
            self.storage.close_file(path)

    def on_experiment_end(self, trials: list[Trial]) -> None:
        for path in self._event_files.values():
            self.storage.close_file(path)
        self._event_files.clear()


class JsonLoggerCallback(ResultFiles):
    """One result.json line per result (see `ResultFiles`)."""

    def __init__(
        self, storage: ExperimentStorage | None = None, dir_of: TrialDirOf | None = None
    ) -> None:
        super().__init__(storage, dir_of, json=True, csv=False)


class CSVLoggerCallback(ResultFiles):
    """One progress.csv row per result (see `ResultFiles`)."""

    def __init__(
        self, storage: ExperimentStorage | None = None, dir_of: TrialDirOf | None = None
    ) -> None:
        super().__init__(storage, dir_of, json=False, csv=True)


class TensorBoardCallback(ResultFiles):
    """Numeric results as TensorBoard scalars (see `ResultFiles`). `fit()`
    writes them by default when tensorboardX is installed, as Ray Tune
    does."""

    def __init__(
        self, storage: ExperimentStorage | None = None, dir_of: TrialDirOf | None = None
    ) -> None:
        super().__init__(storage, dir_of, json=False, csv=False, tensorboard=True)
