"""A trial as user code sees it: Ray Tune's `Trial` attribute names over
tunecore's `TrialState`.

Callbacks, `trial_name_creator` and `trial_dirname_creator` are written
against Ray's `Trial`: `trial.trial_id`, `trial.trainable_name`,
`trial.config`, `trial.status == "RUNNING"`, `trial.last_result`,
`trial.local_path`, `str(trial)` for its name. The core's `TrialState`
spells these differently (`spec.config`, an enum status) and prints as the
whole struct, so user code gets a `Trial` instead: a read-only view, one
per state (states are immutable, so a view of one never goes stale), built
by `TrialViews`, which keeps the newest view of each trial: the loop calls
callbacks per result, and a view is made only when a trial's state changed.

A trial whose last result held values JSON cannot, or whose config names
objects of the param space (a model, a dataset: their placeholders are what
the log holds), is a `TrialWithObjects`, whose `last_result` shows the
objects reported (`shell.reported_objects`) and whose `config` shows the
param space's objects, as Ray's `Trial` does; the others, nearly all, carry
nothing more.

The name is the user's `trial_name_creator` output once it has been
called (once per trial, with a view that has no custom name yet, as Ray
calls it when the trial is created), else Ray's default
`<trainable>[_<env>]_<trial_id>`. The directory is looked up on first
read only: a callback that never reads it never creates it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tunecore.core.checkpoints import newest_with_state
from tunecore.core.naming import display_name, trial_name
from tunecore.core.results import last_n_average
from tunecore.model import JsonDict, JsonValue, TrialState, TrialStatus
from tunecore.shell.objects_shown import config_shown, last_result_shown, objects_shown
from tunecore.shell.reported_objects import ObjectsByTrial, ReportedObjects
from tunecore.shell.storage.layout import read_result_rows
from tunecore.shell.trainable.checkpoint import Checkpoint
from tunecore.shell.trainable.config_objects import ConfigObjects
from tunecore.shell.trainable.placement_group import PlacementGroupFactory
from tunecore.shell.trial_files import ERROR_FILE

DirOf = Callable[[TrialState], Path]


class Trial:
    """One trial, read-only, in Ray Tune's names (module docstring).
    `state` is tunecore's own `TrialState` underneath."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    TERMINATED = "TERMINATED"
    ERROR = "ERROR"

    __slots__ = ("_custom_name", "_dir", "_dir_of", "_shown_status", "state")

    def __init__(
        self,
        state: TrialState,
        *,
        custom_name: str | None = None,
        dir_of: DirOf | None = None,
    ) -> None:
        self.state = state
        self._custom_name = custom_name
        self._dir_of = dir_of
        self._dir: Path | None = None
        self._shown_status: TrialStatus | None = None  # `shown_as`

    @property
    def trial_id(self) -> str:
        return self.state.spec.trial_id

    @property
    def trainable_name(self) -> str:
        """As Ray names it: `train` for a function tunecore stores by its
        import path `pkg.module:train`."""
        return display_name(self.state.spec.trainable_name)

    @property
    def config(self) -> dict[str, Any]:
        """Typed `Any` as Ray's is: it may hold the param space's objects
        (`TrialWithObjects`)."""
        return self.state.spec.config

    @property
    def evaluated_params(self) -> JsonDict:
        return self.state.spec.evaluated_params

    @property
    def experiment_tag(self) -> str:
        return self.state.spec.experiment_tag

    @property
    def status(self) -> str:
        """ "PENDING", "RUNNING", "PAUSED", "TERMINATED" or "ERROR"."""
        return self._status().value

    def _status(self) -> TrialStatus:
        shown = self._shown_status
        return self.state.status if shown is None else shown

    @property
    def last_result(self) -> JsonDict:
        return self.state.last_result

    @property
    def placement_group_factory(self) -> PlacementGroupFactory:
        """What the trial asks for now, as Ray's `PlacementGroupFactory`
        (a `ResourceChangingScheduler` changes it)."""
        return PlacementGroupFactory.of(self.state.spec.resources)

    @property
    def metric_analysis(self) -> dict[str, dict[str, float]]:
        """Ray's `Trial.metric_analysis`, which scripts read as
        `best_trial.metric_analysis[metric][mode]`: for each numeric metric
        ('/'-joined when nested) its `"max"`, `"min"`, `"avg"` and `"last"`
        over the trial's results, and `"last-5-avg"` / `"last-10-avg"`, the
        mean of its last 5 and 10 values, read from the trial's result.json
        (a few milliseconds behind the results while the trial runs; the
        last value alone where the file has none)."""
        analysis = {
            metric: {"max": stats.max, "min": stats.min, "avg": stats.avg, "last": stats.last}
            for metric, stats in self.state.metric_analysis.items()
        }
        if not analysis:
            return analysis
        directory = self.directory
        rows = (None if directory is None else read_result_rows(directory)) or []
        for metric, stats in analysis.items():
            for window in (5, 10):
                average = last_n_average(rows, metric, window)
                stats[f"last-{window}-avg"] = stats["last"] if average is None else average
        return analysis

    @property
    def num_failures(self) -> int:
        return self.state.num_failures

    @property
    def error_msg(self) -> str | None:
        return self.state.error_message

    @property
    def custom_trial_name(self) -> str | None:
        """What `trial_name_creator` returned, None without one."""
        return self._custom_name

    @property
    def local_path(self) -> str | None:
        """The trial's directory (None where no directory is known: a
        name creator runs before the trial has one)."""
        directory = self.directory
        return None if directory is None else str(directory)

    @property
    def directory(self) -> Path | None:
        """`local_path` as the `Path` the experiment keeps (looked up once
        per view, which the loop hands every callback of an event). Not
        Ray's `local_dir`, which named the experiment's parent directory."""
        if self._dir is None and self._dir_of is not None:
            self._dir = self._dir_of(self.state)
        return self._dir

    @property
    def path(self) -> str | None:
        """The trial's directory: tunecore keeps trials on the driver's
        file system, so Ray's storage path and local path are the same."""
        return self.local_path

    @property
    def logdir(self) -> str | None:
        """Ray's older name for the trial's directory."""
        return self.local_path

    @property
    def experiment_dir_name(self) -> str | None:
        """The name of the experiment's directory, which holds the trial's."""
        directory = self.directory
        return None if directory is None else directory.parent.name

    @property
    def local_experiment_path(self) -> str | None:
        """The experiment's directory, which holds the trial's."""
        directory = self.directory
        return None if directory is None else str(directory.parent)

    @property
    def local_dir(self) -> str | None:
        """Ray 2.60's `Trial.local_dir`: `local_experiment_path`, the
        experiment's directory on the driver (Ray's is where its driver
        stages the experiment, under the Ray session's directory even for
        local storage; tunecore writes a local experiment in place). Ray
        before 2.7 meant the directory above the experiment's."""
        return self.local_experiment_path

    @property
    def relative_logdir(self) -> None:
        """Ray 2.60 keeps this attribute of older Rays and leaves it None."""
        return None

    @property
    def stopping_criterion(self) -> dict[str, float | bool]:
        """The run's `stop` thresholds as a dict (a copy; empty when `stop`
        is a stopper or a function), as Ray's trial keeps them; a whole
        number reads back as a float (10.0, equal to Ray's 10)."""
        return dict(self.state.spec.stopping_criterion)

    @property
    def checkpoint_freq(self) -> int:
        """`CheckpointConfig.checkpoint_frequency` of the trial (0: none)."""
        return self.state.spec.checkpoint_policy.frequency

    @property
    def remote_experiment_path(self) -> str | None:
        """The experiment's directory: the same as `local_experiment_path`,
        as the trial's `path` is its `local_path`."""
        return self.local_experiment_path

    @property
    def node_ip(self) -> str | None:
        """The address of the node the trial last reported from."""
        node_ip = self.state.last_result.get("node_ip")
        return node_ip if isinstance(node_ip, str) else None

    @property
    def error_file(self) -> str | None:
        """The trial's error.txt, once a failure has been written to it."""
        directory = self.directory
        if directory is None or not (directory / ERROR_FILE).is_file():
            return None
        return (directory / ERROR_FILE).as_posix()

    @property
    def checkpoint(self) -> Checkpoint | None:
        """The newest checkpoint the trial keeps on disk, None before its
        first one (or where its directory is gone; an empty one, a null
        checkpoint, is none, as on Ray). Kept checkpoints are named
        relative to the experiment's directory."""
        ref = newest_with_state(self.state.checkpoints)
        directory = self.directory
        if ref is None or directory is None:
            return None
        path = directory.parent / ref.path
        return Checkpoint.from_directory(str(path)) if path.is_dir() else None

    def has_checkpoint(self) -> bool:
        return self.checkpoint is not None

    def is_finished(self) -> bool:
        return self._status() in (TrialStatus.TERMINATED, TrialStatus.ERROR)

    def __str__(self) -> str:
        return self._custom_name or trial_name(self.state.spec)

    __repr__ = __str__  # as Ray's: the name, short enough for a log line

    def __hash__(self) -> int:
        return hash(self.trial_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trial):
            return NotImplemented
        return self.trial_id == other.trial_id


class TrialWithObjects(Trial):
    """A trial whose last result held objects JSON cannot, or whose config
    names objects of the param space: `last_result` and `config` show them,
    as the trainable reported them and as the param space gave them (a new
    dict at each read)."""

    __slots__ = ("_config_objects", "_objects")

    def __init__(
        self,
        state: TrialState,
        objects: ReportedObjects | None,
        *,
        config_objects: ConfigObjects | None = None,
        custom_name: str | None = None,
        dir_of: DirOf | None = None,
    ) -> None:
        super().__init__(state, custom_name=custom_name, dir_of=dir_of)
        self._objects = objects
        self._config_objects = config_objects

    @property
    def last_result(self) -> JsonDict:
        return last_result_shown(self.state, self._objects)

    @property
    def config(self) -> dict[str, Any]:
        return config_shown(self.state, self._config_objects)


def as_recorded(trial: Trial, result: Mapping[str, JsonValue]) -> Mapping[str, JsonValue]:
    """`result`, as a callback got it for `trial`, in the JSON form the
    log records: what tunecore's own loggers write (a result file, an
    MLflow run), unchanged by objects the trial reported."""
    if not isinstance(trial, TrialWithObjects) or trial._objects is None:
        return result
    return trial._objects.recorded(result)  # type: ignore[return-value] # JSON again


def trial_view(
    state: TrialState,
    objects: ReportedObjects | None,
    *,
    config_objects: ConfigObjects | None = None,
    custom_name: str | None = None,
    dir_of: DirOf | None = None,
) -> Trial:
    """The view of `state`, showing `objects` (its last result's, if any)
    and the param space's `config_objects` its config names."""
    shown = objects_shown(state, objects, config_objects)
    if shown is None:
        return Trial(state, custom_name=custom_name, dir_of=dir_of)
    return TrialWithObjects(
        state,
        shown.objects,
        config_objects=shown.config_objects,
        custom_name=custom_name,
        dir_of=dir_of,
    )


NameCreator = Callable[[Trial], str]


class TrialViews:
    """The view of each trial's newest state, and each trial's name.

    `name_creator` (the user's `trial_name_creator`) is called once per
    trial. One instance serves the loop (views for callbacks) and the
    progress output (names), so the creator is never asked twice.
    `objects` are the objects the trials' last results held (the loop
    records them), and `config_objects` the param space's objects, which
    the views show."""

    def __init__(
        self,
        name_creator: NameCreator | None = None,
        config_objects: ConfigObjects | None = None,
    ) -> None:
        self._name_creator = name_creator
        self.config_objects = config_objects
        self.objects = ObjectsByTrial()
        self._views: dict[str, Trial] = {}
        self._names: dict[str, str] = {}

    def of(self, state: TrialState, dir_of: DirOf | None = None) -> Trial:
        """The view of `state`: the one made before if the state is the
        same object, else a new one; `dir_of` gives the trial's directory
        when the view's path is read. A finished trial's view is not kept
        (a new one, equal to it, each time): kept, the views of finished
        trials, with their directories, grew the driver's memory by some
        0.4 KB per trial for as long as the run lasted (issue 41)."""
        view = self._views.get(state.trial_id)
        if view is None or view.state is not state:
            objects = self.objects.get(state.trial_id) if self.objects else None
            view = trial_view(
                state,
                objects,
                config_objects=self.config_objects,
                custom_name=self.custom_name(state),
                dir_of=dir_of,
            )
            if state.is_finished:
                self._views.pop(state.trial_id, None)
            else:
                self._views[state.trial_id] = view
        return view

    def hearing(
        self, before: TrialState, objects: ReportedObjects, dir_of: DirOf | None = None
    ) -> Trial:
        """The view the callbacks get of a trial as they hear a result that
        carried `objects`: the trial as it was `before` the result (as Ray
        shows it in `on_trial_result`), carrying the result's objects, so
        that `as_recorded` turns the result they are given back into the
        JSON the log records (the result files, the trackers). Not kept:
        the trial's next view is of its state after the result."""
        return trial_view(
            before,
            objects,
            config_objects=self.config_objects,
            custom_name=self.custom_name(before),
            dir_of=dir_of,
        )

    def custom_name(self, state: TrialState) -> str | None:
        """The name creator's name for the trial (asked once), or None."""
        if self._name_creator is None:
            return None
        known = self._names.get(state.trial_id)
        if known is None:
            known = str(self._name_creator(Trial(state)))
            self._names[state.trial_id] = known
        return known

    def name(self, state: TrialState) -> str:
        """The trial's name on screen and in its context: the custom one,
        else Ray's default."""
        return self.custom_name(state) or trial_name(state.spec)


def dirname_of(creator: NameCreator | None) -> Callable[[TrialState], str] | None:
    """The user's `trial_dirname_creator` as the shell calls it: with a
    state, which it sees as a view (no directory yet: it is being named)."""
    if creator is None:
        return None

    def dirname(state: TrialState) -> str:
        return str(creator(Trial(state)))

    return dirname


@contextlib.contextmanager
def shown_as(view: Trial, status: TrialStatus) -> Iterator[Trial]:
    """`view` showing `status` (its `status`, `is_finished()`) instead of
    its state's, until the block ends: the status Ray Tune shows the
    callback hooks it calls before it sets the new one (`shell.loop`: a
    starting trial PENDING, a completing one RUNNING). The view itself
    rather than a new one of a copied state: one of those per start and
    per completion took 1.5 KB a trial of the driver's RSS that a
    100,000-trial run kept (issue 41: freed, but left scattered)."""
    view._shown_status = status
    try:
        yield view
    finally:
        view._shown_status = None
