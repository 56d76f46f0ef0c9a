"""What `Tuner.fit()` returns: one `Result` per trial, and ways to pick the
best. `ResultGrid.from_path` builds the same from an experiment's directory or
URI (finished or still running), without Ray and without the user's code.

A `Result` holds what the event log knows (last result, config, status,
checkpoints, metric analysis); its whole history (`metrics_dataframe`, the
`last-5-avg` and `last-10-avg` scopes, `get_dataframe(filter_metric=...)`)
is read from the trial's result.json when first asked for.

Why one module of over 400 lines: `Result` and `ResultGrid` are Ray's two
classes, read together, and the private helpers below build both from the
same trial state (checkpoints, errors, scores); split, the scoring that
`get_best_result` and `best_checkpoints` share would sit apart from both.

`Result(metrics=..., checkpoint=..., error=..., path=...)`, Ray's public
dataclass constructor, makes a `DirectResult`, which answers with what it
was given; tunecore's own results are made by `Result.of_trial`.
"""

from __future__ import annotations

import math
import os
import posixpath
import sys
import urllib.parse
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar

from tunecore.api.errors import NoBestResultError, TuneError, trial_error
from tunecore.api.history import as_dataframe, pandas_module
from tunecore.api.loader import load_experiment
from tunecore.core.checkpoints import newest_with_state, score_key
from tunecore.core.experiment import ExperimentState, trials_in_order
from tunecore.core.experiment.snapshot import BUILTIN, SnapshotKind
from tunecore.core.results import AUTOFILLED, DEFAULT_METRIC, as_heard, flatten, last_n_average
from tunecore.model import CheckpointRef, JsonDict, JsonValue, MetricStats, TrialState, TrialStatus
from tunecore.model.numbers import is_number
from tunecore.shell.collector import collector_paused
from tunecore.shell.mirror.remote import StoredExperiment
from tunecore.shell.objects_shown import config_shown, last_result_shown, objects_shown
from tunecore.shell.reported_objects import ObjectsByTrial, ReportedObjects
from tunecore.shell.storage.layout import read_result_rows
from tunecore.shell.storage.resolve import filesystem_of
from tunecore.shell.storage.store import Store
from tunecore.shell.trainable import Checkpoint
from tunecore.shell.trainable.config_objects import ConfigObjects
from tunecore.shell.trial_view import Trial, trial_view

if TYPE_CHECKING:
    import pandas
    from pyarrow.fs import FileSystem

    from tunecore.api.analysis import ExperimentAnalysis

Scope = Literal["last", "all", "avg", "last-5-avg", "last-10-avg"]
SCOPES: tuple[Scope, ...] = ("last", "all", "avg", "last-5-avg", "last-10-avg")
_WINDOWS = {"last-5-avg": 5, "last-10-avg": 10}
T = TypeVar("T")


class PathStr(str):
    """A directory as Ray's results give it, a `str` (`path.startswith(...)`,
    `os.path.join(path, ...)`), that also answers as a `Path` (`path /
    "result.json"`, `path.name`, `path.is_dir()`) where `str` has no such
    attribute: tunecore gave `Path`s before it gave Ray's type."""

    __slots__ = ()

    def __truediv__(self, other: str | os.PathLike[str]) -> Path:
        return Path(self) / other

    def __getattr__(self, name: str) -> Any:
        return getattr(Path(self), name)


_NOT_PRINTED = AUTOFILLED | {
    "config",
    "checkpoint_dir_name",
    "episodes_total",
    "timesteps_total",
    "timesteps_since_restore",
    "_report_on",
}
"""The keys Ray's `Result.__repr__` leaves out of the metrics it prints:
the ones Ray Tune fills in, and those its progress output hides."""

_UNREAD: Any = object()
"""`Result._history` before result.json was read (None is a reading)."""


class Result:
    """One trial's outcome: its last result, config, directory, newest
    persistent checkpoint and, if it failed, its error. `best_checkpoints`
    are the persistent checkpoints the trial kept, each with the metrics
    of the result it was taken at, as Ray orders them: worst first by the
    checkpoint score (`CheckpointConfig.checkpoint_score_attribute`,
    default the iteration, so oldest first).

    Of an experiment in storage, `path` and the checkpoints' paths are
    URIs (local paths for `file://`), and `files` is the local copy of the
    trial directory the history is read from (None for a local experiment:
    `path` is that directory).

    Read-only, compared as the dataclass it was (its trial id, metrics,
    config, path, checkpoints, error and status), printed as Ray prints it. What
    the trial's state tells (`trial_id`, `metrics`, `config`, `status`,
    the metric analysis) is read from `state` rather than kept, `path` is
    kept as a plain string and the checkpoints as a tuple, empty for
    most trials: a `ResultGrid` holds one per trial for as long as it
    lives, and a dict, a list and a `str` subclass each were a third of a
    finished trial's driver memory (issue 41). Of the path, each result
    keeps only its last part (`_path`), its directory being one string
    shared by every result of the experiment (`_parent`, see `path`)."""

    __slots__ = (
        "_best",
        "_history",
        "_parent",
        "_path",
        "checkpoint",
        "error",
        "files",
        "state",
        "storage",
    )
    state: TrialState
    """The trial's state the result was read from."""
    checkpoint: Checkpoint | None
    error: TuneError | None
    files: Path | None
    storage: Store | None
    """The storage the experiment is in (rooted at it), None for a local
    experiment: what `filesystem` answers from."""
    _path: str
    _parent: str
    """`path` is `_parent + _path`: `_parent` the directory, ending with
    its separator, interned (`sys.intern`), or "" (`_path` is all of it)."""
    _best: tuple[tuple[Checkpoint, JsonDict], ...]
    _history: list[JsonDict] | None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:  # noqa: ARG004 - __init__'s
        """`Result(metrics=..., checkpoint=..., error=..., path=...)`, Ray's
        public constructor, makes a `DirectResult`; tunecore makes the
        results of trials with `of_trial`, which does not come here."""
        return object.__new__(DirectResult if cls is Result else cls)

    def __init__(  # noqa: PLR0917 - Ray's dataclass, positional as in Ray
        self,
        metrics: dict[str, Any] | None,
        checkpoint: Checkpoint | None,
        error: BaseException | None,
        path: str | os.PathLike[str],
        metrics_dataframe: pandas.DataFrame | None = None,
        best_checkpoints: list[tuple[Checkpoint, dict[str, Any]]] | None = None,
        _storage_filesystem: FileSystem | None = None,
    ) -> None:
        """Ray's public dataclass constructor (its fields, in its order):
        the result of a run tunecore did not make, a `DirectResult` (see
        there). tunecore's own results come from `of_trial`."""
        fields: dict[str, Any] = {
            "_metrics": metrics,
            "checkpoint": checkpoint,
            "error": error,
            "_path": os.fspath(path),
            "_parent": "",
            "_frame": metrics_dataframe,
            "_given_best": best_checkpoints,
            "_best": tuple(best_checkpoints or ()),
            "_filesystem": _storage_filesystem,
            "files": None,
            "storage": None,
            "_history": _UNREAD,
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of_trial(
        cls,
        state: TrialState,
        path: str | os.PathLike[str],
        *,
        checkpoint: Checkpoint | None = None,
        error: TuneError | None = None,
        best_checkpoints: Iterable[tuple[Checkpoint, JsonDict]] = (),
        files: Path | None = None,
        storage: Store | None = None,
    ) -> Self:
        """The result of a trial of tunecore's, read from its `state`."""
        self = object.__new__(cls)
        parent, separator, name = os.fspath(path).rpartition(os.sep)
        fields = {
            "state": state,
            "_path": name,
            "_parent": sys.intern(parent + separator),
            "checkpoint": checkpoint,
            "error": error,
            "_best": tuple(best_checkpoints),
            "files": files,
            "storage": storage,
            "_history": _UNREAD,
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Result is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Result is read-only: cannot delete {name!r}")

    def __reduce__(self) -> tuple[object, ...]:
        """What a pickle carries (a grid a Tuner in a Ray task returns): the
        class and its fields, less the history, which the copy reads again
        if asked. Made without `__new__`, which would make a `DirectResult`."""
        fields = {
            name: getattr(self, name)
            for kind in type(self).__mro__
            for name in getattr(kind, "__slots__", ())
            if name != "_history" and hasattr(self, name)  # a DirectResult has no `state`
        }
        return (_blank, (type(self),), fields)

    def __setstate__(self, state: dict[str, object]) -> None:
        # A result pickled before `_parent` was kept has its whole path.
        for name, value in ({"_parent": ""} | state | {"_history": _UNREAD}).items():
            object.__setattr__(self, name, value)

    @property
    def trial_id(self) -> str:
        return self.state.trial_id

    @property
    def metrics(self) -> JsonDict:
        """The trial's last result (empty if it never reported), as its
        JSON form is recorded (`ResultWithObjects` shows the objects)."""
        return self.state.last_result

    @property
    def config(self) -> dict[str, Any]:
        """The trial's config; typed `Any` as Ray's is: in the driver that
        ran the trial it may hold the param space's objects
        (`ResultWithObjects`). Of a finished trial (kept packed,
        `model.trial.packed_spec`), a new dict on every read."""
        return self.state.spec.config

    @property
    def status(self) -> TrialStatus:
        return self.state.status

    @property
    def path(self) -> PathStr:
        """The trial's directory (a URI in storage)."""
        return PathStr(self._parent + self._path)

    @property
    def best_checkpoints(self) -> list[tuple[Checkpoint, JsonDict]]:
        return list(self._best)

    def _compared(self) -> tuple[object, ...]:
        return (
            self.trial_id,
            self.metrics,
            self.config,
            self._parent + self._path,
            self.checkpoint,
            self.error,
            self.status,
            self._best,
            self.files,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result) or type(other) is not type(self):
            return NotImplemented
        return self._compared() == other._compared()

    __hash__ = None  # type: ignore[assignment] # its metrics are a dict

    def __repr__(self) -> str:
        """As Ray prints a result (`print(results[0])` in its docs): its
        error's type if it failed, the metrics it reported without the keys
        Ray fills in, its path, its filesystem's name and its checkpoint,
        one to a line."""
        shown: dict[str, object] = {"error": type(self.error).__name__} if self.error else {}
        metrics = self.metrics
        shown["metrics"] = (
            {key: value for key, value in metrics.items() if key not in _NOT_PRINTED}
            if metrics
            else metrics
        )
        shown |= {
            "path": self.path,
            "filesystem": self._filesystem_name(),
            "checkpoint": self.checkpoint,
        }
        fields = ",\n".join(f"  {name}={value!r}" for name, value in shown.items())
        return f"Result(\n{fields}\n)"

    def _filesystem_name(self) -> str:
        """`filesystem.type_name` ("local" for a local experiment, with no
        need of pyarrow)."""
        return "local" if self.storage is None else self.filesystem.type_name

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], storage_filesystem: object = None) -> Result:
        """The result of the trial whose directory is `path` (`~` expanded;
        a URI, or a path in `storage_filesystem`, for one in storage), read
        from the event log of its experiment: the directory above it."""
        parent, name = _parent_and_name(os.fspath(path), storage_filesystem)
        grid = ResultGrid.from_path(parent, storage_filesystem=storage_filesystem)
        names = [_parent_and_name(result.path, storage_filesystem)[1] for result in grid]
        if name in names:
            return grid[names.index(name)]
        raise ValueError(
            f"Result.from_path({os.fspath(path)!r}): the experiment in {parent!r} has no trial "
            f"with that directory (its trials: {', '.join(names) or 'none'})"
        )

    @property
    def metric_analysis(self) -> dict[str, MetricStats]:
        """Each numeric metric's max/min/avg/last over the trial's results."""
        return self.state.metric_analysis

    @property
    def filesystem(self) -> FileSystem:
        """The `pyarrow.fs.FileSystem` the trial's files are on, as in Ray
        (a `LocalFileSystem` for a local directory or `file://`). Needs
        pyarrow (`tunecore[storage]`)."""
        return filesystem_of(self.storage)

    @property
    def log_dir(self) -> Path:
        """The trial's directory as a `Path` (Ray 2.0-2.6's `log_dir`)."""
        return Path(self.path)

    @property
    def history(self) -> list[JsonDict] | None:
        """Every result the trial reported, in order, as result.json holds
        them; None if the trial directory has no result.json. Read once."""
        if self._history is _UNREAD:
            object.__setattr__(self, "_history", read_result_rows(self.files or Path(self.path)))
        history: list[JsonDict] | None = self._history
        return history

    @property
    def metrics_dataframe(self) -> pandas.DataFrame | None:
        """Every result of the trial, one row each (nested keys '/'-joined):
        empty for a trial that never reported (it has no result.json), as
        in Ray; None when its results have no result.json (a simulated
        run's, without `write_results`). Needs pandas."""
        if self.history is None:
            return as_dataframe([]) if not self.state.last_result else None
        return as_dataframe(self.history)

    def get_best_checkpoint(self, metric: str, mode: Literal["min", "max"]) -> Checkpoint | None:
        """The kept checkpoint whose result has the best `metric` by `mode`
        (checkpoints without a number for it are passed over)."""
        if not self._best:
            raise RuntimeError(f"trial {self.trial_id} kept no persistent checkpoint")
        best = best_checkpoint(self._best, metric, _checked_mode(mode))
        if best is None:
            raise ValueError(f"no checkpoint of trial {self.trial_id} has a number for {metric!r}")
        return best


def _blank(kind: type[Result]) -> Result:
    """An instance of `kind` with no fields yet, for unpickling."""
    blank: Result = object.__new__(kind)
    return blank


class ResultWithObjects(Result):
    """The result of a trial of this driver's run that held values JSON
    cannot, shown as Ray shows them: `metrics` the objects its last result
    held, as the trainable reported them (`shell.reported_objects`), and
    `config` the objects of the param space its config names (a model, a
    dataset, a `ray.put` ref: `tunecore.api.config_objects`) where the log
    holds their placeholders. Each read is a new dict. Only such trials'
    results carry these two more slots; a grid read back from storage has
    the placeholders (nothing stored is an object)."""

    __slots__ = ("_config_objects", "_objects")
    _objects: ReportedObjects | None
    _config_objects: ConfigObjects | None

    @classmethod
    def with_objects(
        cls,
        objects: ReportedObjects | None,
        state: TrialState,
        path: str | os.PathLike[str],
        *,
        config_objects: ConfigObjects | None = None,
        **fields: Any,
    ) -> Self:
        self = cls.of_trial(state, path, **fields)
        object.__setattr__(self, "_objects", objects)
        object.__setattr__(self, "_config_objects", config_objects)
        return self

    @property
    def metrics(self) -> JsonDict:
        return last_result_shown(self.state, self._objects)

    @property
    def config(self) -> dict[str, Any]:
        return config_shown(self.state, self._config_objects)


class DirectResult(Result):
    """A result built with Ray's public constructor, `Result(metrics=...,
    checkpoint=..., error=..., path=..., metrics_dataframe=...,
    best_checkpoints=...)` (a script's own result, a test's fixture): it
    answers with what it was given, as Ray's dataclass does. `metrics`,
    `metrics_dataframe` and `best_checkpoints` are the objects given (None
    where not given), `config` is the metrics' `"config"`, `filesystem` the
    `_storage_filesystem` given or a local one, and `status` is ERROR with
    an error, else TERMINATED. It has no trial `state`, and, like every
    tunecore result, it is read-only (Ray's dataclass is not)."""

    __slots__ = ("_filesystem", "_frame", "_given_best", "_metrics")
    _metrics: dict[str, Any] | None
    _frame: pandas.DataFrame | None
    _given_best: list[tuple[Checkpoint, dict[str, Any]]] | None
    _filesystem: FileSystem | None

    @property
    def trial_id(self) -> str:
        """The metrics' `trial_id`, if they name one, else ""."""
        trial_id = (self._metrics or {}).get("trial_id")
        return trial_id if isinstance(trial_id, str) else ""

    @property
    def metrics(self) -> Any:
        return self._metrics

    @property
    def config(self) -> Any:
        """As Ray's: the metrics' `"config"`, None without metrics."""
        return self._metrics.get("config") if self._metrics else None

    @property
    def status(self) -> TrialStatus:
        return TrialStatus.ERROR if self.error is not None else TrialStatus.TERMINATED

    @property
    def best_checkpoints(self) -> Any:
        return self._given_best

    @property
    def metric_analysis(self) -> dict[str, MetricStats]:
        """Nothing: no trial's statistics stand behind a result built by hand."""
        return {}

    @property
    def filesystem(self) -> FileSystem:
        if self._filesystem is not None:
            return self._filesystem
        from pyarrow.fs import LocalFileSystem  # noqa: PLC0415 - optional, as Ray's default

        return LocalFileSystem()

    @property
    def history(self) -> list[JsonDict] | None:
        """The rows of the `metrics_dataframe` given, None without one."""
        if self._frame is None:
            return None
        rows: list[JsonDict] = self._frame.to_dict("records")  # type: ignore[assignment]
        return rows

    @property
    def metrics_dataframe(self) -> pandas.DataFrame | None:
        return self._frame

    def _compared(self) -> tuple[object, ...]:
        """Ray's dataclass fields, compared as its `==` compares them."""
        return (
            self._metrics,
            self.checkpoint,
            self.error,
            self._path,
            self._frame,
            self._given_best,
            self._filesystem,
        )

    def _filesystem_name(self) -> str:
        return "local" if self._filesystem is None else self._filesystem.type_name


class ResultGrid(Sequence[Result]):
    """The results of every trial, in the order the trials were created."""

    _results: list[Result]
    _storage: Store | None
    experiment_path: PathStr
    experiment_error: str | None

    def __init__(
        self,
        results: Sequence[Result] | ExperimentAnalysis,
        *,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
        experiment_path: str | os.PathLike[str] = "",
        error: str | None = None,
        trials: Sequence[Trial] | Callable[[], list[Trial]] = (),
        storage: Store | None = None,
    ) -> None:
        """`trials` may be a function that makes them, called on the first
        read of `trials` (a fit's grid is seldom asked for them).

        `ResultGrid(analysis)`, Ray's constructor, is the grid of an
        `ExperimentAnalysis`: its results, trials and experiment, with the
        analysis's default metric and mode as the grid's, as Ray's
        `get_best_result` takes them from the analysis. A mode without a
        metric ranks by Ray's anonymous metric `_metric` (what a function's
        returned number is reported as), as Ray's analysis does."""
        if not isinstance(results, Sequence):
            analysis, grid = results, results._grid
            results, metric, mode = grid._results, analysis.default_metric, analysis.default_mode
            experiment_path, error = grid.experiment_path, grid.experiment_error
            trials, storage = analysis.trials, grid._storage
        self._results = list(results)
        self._storage = storage
        self._metric = anonymous_default(metric, mode)
        self._mode = mode
        self._trials = trials if callable(trials) else list(trials)
        self.experiment_path = PathStr(os.fspath(experiment_path))
        self.experiment_error = error

    @classmethod
    def from_state(
        cls,
        state: ExperimentState,
        dirs: Mapping[str, str | os.PathLike[str]],
        experiment_path: Path,
        *,
        stored: StoredExperiment | None = None,
        objects: ObjectsByTrial | None = None,
        config_objects: ConfigObjects | None = None,
    ) -> ResultGrid:
        """The results of `state`'s trials, with the experiment's metric and
        mode as defaults; `dirs` gives each trial's directory. With
        `stored`, the experiment is in storage (`experiment_path` being its
        local copy, or the staging directory): the results name its
        directories there, and their checkpoints are read from there.
        `objects`, of the run that just ended in this driver, are the
        objects its trials' last results held (`shell.reported_objects`),
        and `config_objects` the param space's objects its configs name."""
        trials = trials_in_order(state)
        mode = state.config.mode
        kept = objects or None
        results = [
            _result(
                t,
                dirs[t.trial_id],
                experiment_path,
                stored,
                None if kept is None else kept.of(t.trial_id),
                config_objects=config_objects,
            )
            for t in trials
        ]
        # Each trial's directory as a string, made a Path when asked for: a
        # Path per trial would stay alive as long as the grid (0.3 KB each).
        # The views are made on the first read of `trials`.
        local: dict[str, str] = (
            {}
            if stored is None
            else {trial_id: os.fspath(directory) for trial_id, directory in dirs.items()}
        )

        def views() -> list[Trial]:
            if stored is None:
                local.update((result.trial_id, result.path) for result in results)
            return [
                trial_view(
                    result.state,
                    _objects_of(result),
                    config_objects=config_objects,
                    dir_of=dir_of,
                )
                for result in results
            ]

        def dir_of(trial: TrialState) -> Path:
            return Path(local[trial.trial_id])

        return cls(
            results,
            metric=state.config.metric,
            mode=None if mode is None else mode.value,
            experiment_path=experiment_path if stored is None else stored.location(),
            error=state.error,
            trials=views,
            storage=None if stored is None else stored.store,
        )

    @classmethod
    def from_path(
        cls,
        path: str | os.PathLike[str],
        *,
        snapshot_kind: SnapshotKind = BUILTIN,
        storage_filesystem: object = None,
    ) -> ResultGrid:
        """The results of the experiment in `path` (`~` expanded), finished
        or still running, read from its event log and trial directories.
        `path` may be the experiment's URI (`s3://bucket/runs/exp`, or its
        path in `storage_filesystem`, a `pyarrow.fs.FileSystem`): its state
        is fetched into a temporary local copy, its checkpoints stay there.
        `snapshot_kind` names a scheduler or searcher type of your own, as
        for `tunecore.replay`."""
        with collector_paused():
            loaded = load_experiment(path, snapshot_kind, storage_filesystem)
            return cls.from_state(loaded.state, loaded.dirs, loaded.path, stored=loaded.stored)

    def __len__(self) -> int:
        return len(self._results)

    def __getitem__(self, index: int) -> Result:  # type: ignore[override]
        return self._results[index]

    def __iter__(self) -> Iterator[Result]:
        return iter(self._results)

    @property
    def metric(self) -> str | None:
        """The experiment's metric (`TuneConfig.metric`), the default of
        `get_best_result`."""
        return self._metric

    @property
    def mode(self) -> Literal["min", "max"] | None:
        """The experiment's mode (`TuneConfig.mode`)."""
        return self._mode

    @property
    def filesystem(self) -> FileSystem:
        """The `pyarrow.fs.FileSystem` the experiment is on, as in Ray (a
        `LocalFileSystem` for a local directory or `file://`). Needs
        pyarrow (`tunecore[storage]`)."""
        return filesystem_of(self._storage)

    @property
    def trials(self) -> list[Trial]:
        """Each result's trial as Ray's `Trial` names it (`trial_id`,
        `config`, `last_result`, `status`, `path`, ...), in the same order;
        `ExperimentAnalysis.trials` are these."""
        if callable(self._trials):
            self._trials = self._trials()
        return list(self._trials)

    @property
    def errors(self) -> list[TuneError]:
        """The errors of the trials that failed (see `TrialError`)."""
        return [r.error for r in self._results if r.error is not None]

    @property
    def num_errors(self) -> int:
        return sum(1 for r in self._results if r.status is TrialStatus.ERROR)

    @property
    def num_terminated(self) -> int:
        return sum(1 for r in self._results if r.status is TrialStatus.TERMINATED)

    def get_best_result(
        self,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
        scope: Scope = "last",
        filter_nan_and_inf: bool = True,
    ) -> Result:
        """The trial whose `metric` is best by `mode` (the experiment's by
        default). `scope="last"` compares last results, `"all"` each trial's
        best ever, `"avg"` its running average, `"last-5-avg"` and
        `"last-10-avg"` the mean of its last 5 or 10 values (read from its
        result.json). Trials that never reported the metric are passed
        over, and so are NaN and infinite scores unless
        `filter_nan_and_inf=False`. Ties go to the earlier trial. An
        experiment of one trial returns that trial, whatever it reported
        and whatever the arguments say, as in Ray."""
        if len(self._results) == 1:
            return self._results[0]
        best = self.find_best(metric, mode, scope, filter_nan_and_inf)
        if best is None and scope in _WINDOWS and all(r.history is None for r in self._results):
            raise ValueError(
                f"scope={scope!r} reads each trial's result.json, and no trial has one "
                "(tunecore.simulate writes them with write_results=True)"
            )
        if best is None:
            raise NoBestResultError(
                f"no trial reported a number for metric {metric or self._metric!r}"
                + (" (NaN and infinite values are passed over)" if filter_nan_and_inf else "")
            )
        return best

    def find_best(
        self,
        metric: str | None,
        mode: Literal["min", "max"] | None,
        scope: Scope,
        filter_nan_and_inf: bool,
    ) -> Result | None:
        """`get_best_result`'s choice, or None when no trial has a score."""
        metric = metric or self._metric
        mode = mode or self._mode
        if metric is None or mode is None:
            raise ValueError(
                "get_best_result needs metric and mode: pass them, or set them in TuneConfig"
            )
        mode = _checked_mode(mode)
        if scope not in SCOPES:
            raise ValueError(f"scope={scope!r} is not supported; use one of {', '.join(SCOPES)}")

        def score(result: Result) -> float | None:
            value = _score(result, metric, mode, scope)
            return None if value is None or (filter_nan_and_inf and math.isinf(value)) else value

        return best_of(self._results, score, mode, skip_nan=filter_nan_and_inf)

    def get_dataframe(
        self,
        filter_metric: str | None = None,
        filter_mode: Literal["min", "max"] | None = None,
    ) -> pandas.DataFrame:
        """One row per trial with `config/...` columns and `logdir`: its last
        result, or with `filter_metric` and `filter_mode` the result
        (read from its result.json) where that metric was best; a trial
        that never reported a number for it has no row. A trial that never
        reported at all has no row either, as in Ray (whose frame has a row
        per trial with results): a row of nothing but its config would
        give it a NaN `trial_id` and turn every integer column into floats.
        `logdir` holds the trial's id, as Ray 2.60's does (its frame is keyed
        by trial id under that name, and scripts build directory names from
        it); the trial's directory is `Result.path`. `checkpoint_dir_name`
        is always a column, as in Ray: the checkpoint reported with the
        row's result, None without one (`_checkpoint_dir_name`). Needs pandas."""
        if filter_mode is not None:
            _checked_mode(filter_mode)
            if filter_metric is None:
                raise ValueError(
                    f"get_dataframe(filter_mode={filter_mode!r}) needs filter_metric too"
                )
        rows = []
        for result in self._results:
            if not result.state.last_result:
                continue
            # The JSON form, as Ray's frame, read from the result files, has it
            # (so without `experiment_tag`, which Ray's files lack: `as_heard`).
            row: dict[str, JsonValue] | None = flatten(as_heard(result.state.last_result))
            if filter_metric is not None and filter_mode is not None:
                row = best_of(
                    (flatten(r) for r in result.history or []),
                    lambda flat: _number(flat.get(filter_metric)),
                    filter_mode,
                )
            if row is None:
                continue
            row = dict(row)
            row.setdefault(CHECKPOINT_DIR_NAME, _checkpoint_dir_name(result.state, row))
            row.update({f"config/{k}": v for k, v in flatten(result.config).items()})
            row["logdir"] = result.trial_id
            rows.append(row)
        frame: pandas.DataFrame = pandas_module().DataFrame(rows)
        return frame


CHECKPOINT_DIR_NAME = "checkpoint_dir_name"
"""The key Ray Tune 2.60 puts in every result: the name of the checkpoint
directory reported with it, None where there is none."""


def _checkpoint_dir_name(trial: TrialState, row: Mapping[str, JsonValue]) -> str | None:
    """Ray's `checkpoint_dir_name` of the result `row`, read from what the
    trial holds (tunecore's results do not carry it): the name of the
    persistent checkpoint the trial reported with that result, found by
    its training iteration among those it keeps (the newest always, so a
    last result's is always found); None where it reported none, or where
    the checkpoint was deleted since (Ray's row still names it)."""
    iteration = row.get("training_iteration")
    for ref in trial.checkpoints.persistent:
        if ref.training_iteration == iteration and ref.of_its_result:
            return posixpath.basename(ref.path.rstrip("/"))
    return None


def best_checkpoint(
    checkpoints: Sequence[tuple[Checkpoint, JsonDict]], metric: str, mode: Literal["min", "max"]
) -> Checkpoint | None:
    """The checkpoint whose metrics hold the best `metric` by `mode`
    ('/'-joined for nested keys); NaN and non-numbers never win."""
    best = best_of(checkpoints, lambda pair: _number(flatten(pair[1]).get(metric)), mode)
    return None if best is None else best[0]


def best_of(
    items: Iterable[T], score: Callable[[T], float | None], mode: str, *, skip_nan: bool = True
) -> T | None:
    """The first of `items` with the best score by `mode`, as Ray compares:
    an item scored None is passed over, and so is a NaN score with
    `skip_nan` (else a NaN that comes first stays best, as in Ray)."""
    best: T | None = None
    best_score = math.nan
    for item in items:
        number = score(item)
        if number is None or (skip_nan and math.isnan(number)):
            continue
        if best is None or (number > best_score if mode == "max" else number < best_score):
            best, best_score = item, number
    return best


def _number(value: object) -> float | None:
    return float(value) if is_number(value) else None


def _checked_mode(mode: str) -> Literal["min", "max"]:
    if mode == "min":
        return "min"
    if mode == "max":
        return "max"
    raise ValueError(f"mode={mode!r} is invalid: expected 'min' or 'max'")


def _score(result: Result, metric: str, mode: str, scope: Scope) -> float | None:
    window = _WINDOWS.get(scope)
    if window is not None:
        return last_n_average(result.history or [], metric, window)
    if scope == "last":
        return _number(flatten(result.state.last_result).get(metric))
    stats = result.state.metric_stats(metric)
    if stats is None:
        return None
    return stats.avg if scope == "avg" else (stats.max if mode == "max" else stats.min)


# A kept checkpoint and what reading it found (None: its directory is gone).
_Found = tuple[CheckpointRef, Checkpoint | None]


def _best_of(ranked: list[_Found], num_to_keep: int | None) -> list[_Found]:
    """The best `num_to_keep` of the kept checkpoints, ranked worst first, as
    Ray's `best_checkpoints` lists them: the newest, kept besides them as the
    restore point (`record_checkpoint`), is among them only if it ranks
    there."""
    return ranked if num_to_keep is None else ranked[max(0, len(ranked) - num_to_keep) :]


def _by_score(trial: TrialState) -> list[CheckpointRef]:
    """The trial's kept persistent checkpoints as Ray lists them: by the
    score its checkpoint config ranks them with, worst first; of equal
    scores, the older first."""
    kept, policy = trial.checkpoints.persistent, trial.spec.checkpoint_policy
    if len(kept) < 2:  # most trials of a large experiment: nothing to sort
        return list(kept)
    order = sorted(range(len(kept)), key=lambda i: (score_key(kept[i], policy), i))
    return [kept[i] for i in order]


def _objects_of(result: Result) -> ReportedObjects | None:
    return result._objects if isinstance(result, ResultWithObjects) else None


def _result(
    trial: TrialState,
    path: str | os.PathLike[str],
    experiment_path: Path,
    stored: StoredExperiment | None,
    objects: ReportedObjects | None = None,
    *,
    config_objects: ConfigObjects | None = None,
) -> Result:
    """A trial's result; checkpoint paths in the state are relative to the
    experiment directory (absolute in logs from before that). A kept
    checkpoint whose directory is gone (deleted by hand, a lost disk) is
    left out with a warning: the results stay readable. In storage, the log
    is trusted instead (it names a checkpoint only once it is stored
    whole): looking would cost a request per checkpoint. An empty one (a
    null checkpoint) is no checkpoint, as on Ray."""
    newest = newest_with_state(trial.checkpoints)  # one of the kept ones
    kept = [
        (
            ref,
            _existing(trial, ref, experiment_path)
            if stored is None
            else _stored_checkpoint(trial, ref, stored),
        )
        for ref in _by_score(trial)
        if ref.holds_state
    ]
    shown, files = path, None  # a local one's files are at `path` itself
    if stored is not None:
        files = Path(path)
        shown = stored.location(files.relative_to(experiment_path).as_posix())
    fields: dict[str, Any] = {
        "checkpoint": next((found for ref, found in kept if ref is newest), None),
        "error": _error_of(trial),
        # Ray's are the results its callbacks heard: no `experiment_tag`.
        "best_checkpoints": [
            (found, as_heard(ref.metrics))
            for ref, found in _best_of(kept, trial.spec.checkpoint_policy.num_to_keep)
            if found is not None
        ],
        "files": files,
        "storage": None if stored is None else stored.store,
    }
    carried = objects_shown(trial, objects, config_objects)
    if carried is None:
        return Result.of_trial(trial, shown, **fields)
    return ResultWithObjects.with_objects(
        carried.objects, trial, shown, config_objects=carried.config_objects, **fields
    )


def _existing(trial: TrialState, ref: CheckpointRef, experiment_path: Path) -> Checkpoint | None:
    """The checkpoint `ref` names, or None with a warning naming its path
    when its directory no longer exists."""
    directory = experiment_path / ref.path
    if directory.is_dir():
        return Checkpoint.from_directory(str(directory))
    warnings.warn(
        f"trial {trial.trial_id}: the checkpoint directory {directory} is gone, "
        "so the results leave it out",
        stacklevel=2,
    )
    return None


def _stored_checkpoint(
    trial: TrialState, ref: CheckpointRef, stored: StoredExperiment
) -> Checkpoint | None:
    """The stored checkpoint `ref` names, or None with a warning naming it
    when storage refuses it (a symbolic link on its way, on `file://`)."""
    try:
        return stored.checkpoint(ref.path)
    except OSError as error:
        warnings.warn(
            f"trial {trial.trial_id}: the checkpoint {ref.path} cannot be used ({error}), "
            "so the results leave it out",
            stacklevel=2,
        )
        return None


def _parent_and_name(path: str, storage_filesystem: object) -> tuple[str, str]:
    """A trial directory's experiment directory (a URI keeps its query, the
    storage's options) and the trial directory's own name."""
    if "://" in path:
        parts = urllib.parse.urlsplit(path)
        head, name = posixpath.split(parts.path.rstrip("/"))
        return urllib.parse.urlunsplit(parts._replace(path=head)), name
    if storage_filesystem is not None:  # a path inside that file system
        return posixpath.split(path.rstrip("/"))
    return os.path.split(os.path.realpath(os.path.expanduser(path)))


def _error_of(trial: TrialState) -> TuneError | None:
    """A failed trial's error; None for any other."""
    if trial.status is not TrialStatus.ERROR:
        return None
    return trial_error(trial.error_message or "the trial failed; no error text was recorded")


def anonymous_default(metric: str | None, mode: str | None) -> str | None:
    """The metric results are ranked by by default: `metric`, or Ray's
    anonymous `_metric` when only a mode was given (Ray's
    `ExperimentAnalysis` takes it so, as its schedulers do)."""
    return DEFAULT_METRIC if metric is None and mode is not None else metric
