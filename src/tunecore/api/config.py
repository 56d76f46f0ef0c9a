"""What users pass in, validated by pydantic, in the names Ray Tune users know.

A wrong type or value fails at construction with pydantic's message, which
names the field and the value (`num_samples: Input should be greater than or
equal to -1 [input_value=-3]`). These models only carry settings; turning
them into the core's `ExperimentConfig` is `tunecore.api.tuner`'s job.
"""

from __future__ import annotations

import datetime
import enum
import os
import posixpath
import sys
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tunecore._by_name import create_by_name
from tunecore.api.foreign_searcher import refuse_foreign_searcher
from tunecore.api.ray_dataclass_configs import from_ray_config
from tunecore.api.ray_style_scheduler import refuse_ray_style_scheduler
from tunecore.core.results import TRAINING_ITERATION
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.model import parse_export_formats
from tunecore.model.errors import TrainOnlyFieldError
from tunecore.search.registry import SEARCHERS
from tunecore.shell.callbacks import missing_hooks
from tunecore.shell.stoppers import plan_stop
from tunecore.shell.storage.resolve import (
    DEFAULT_ROOT,
    KNOWN_SCHEMES,
    resolve_storage,
    uri_scheme,
)
from tunecore.shell.storage.store import join_uri
from tunecore.shell.trainable.output_files import confined_name
from tunecore.shell.trainable.placement_group import PlacementGroupFactory, from_ray
from tunecore.shell.trainable.resources import as_resources
from tunecore.shell.trial_view import Trial


def _ray_train_callback(item: object) -> bool:
    """Whether `item` is a Ray Train callback; made only with Ray Train
    imported, so none is when its module is not loaded."""
    module = sys.modules.get("ray.train.v2.api.callback")
    return module is not None and isinstance(item, module.RayTrainCallback)


_FROZEN = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class _RayPositional(BaseModel):
    """A config that also takes its leading fields positionally, in the
    order Ray's dataclass of the same name declares them
    (`CheckpointConfig(1, "loss", "min")`, as Ray Tune scripts write it);
    pydantic alone takes keywords only."""

    _POSITIONAL: ClassVar[tuple[str, ...]] = ()

    def __init__(self, /, *args: Any, **fields: Any) -> None:
        name = type(self).__name__
        if len(args) > len(self._POSITIONAL):
            raise TypeError(
                f"{name}() takes at most {len(self._POSITIONAL)} positional arguments "
                f"({', '.join(self._POSITIONAL)}), {len(args)} were given"
            )
        for field, value in zip(self._POSITIONAL, args, strict=False):
            if field in fields:
                raise TypeError(f"{name}() got multiple values for argument {field!r}")
            fields[field] = value
        super().__init__(**fields)


class CheckpointConfig(_RayPositional):
    """When trials checkpoint and which checkpoints they keep."""

    model_config = _FROZEN
    _POSITIONAL = (
        "num_to_keep",
        "checkpoint_score_attribute",
        "checkpoint_score_order",
        "checkpoint_frequency",
        "checkpoint_at_end",
    )

    num_to_keep: Annotated[int, Field(ge=1)] | None = None
    checkpoint_score_attribute: str = TRAINING_ITERATION
    """The metric that ranks checkpoints, taken as written (Ray 2.60's
    CheckpointConfig reads no "min-" prefix: only `run`'s deprecated
    `checkpoint_score_attr` does)."""
    checkpoint_score_order: Literal["max", "min"] = "max"
    checkpoint_frequency: Annotated[int, Field(ge=0)] = 0
    checkpoint_at_end: bool | None = None
    """Save a checkpoint as each trial ends. None (Ray's default): yes for
    a `Trainable` class, no for a function, which reports its own."""


class FailureConfig(_RayPositional):
    """How failures are handled: `max_failures` retries per trial (-1:
    forever), and `fail_fast` ends the whole experiment on the first error."""

    model_config = _FROZEN
    _POSITIONAL = (
        "max_failures",
        "fail_fast",
    )

    max_failures: Annotated[int, Field(ge=-1)] = 0
    fail_fast: bool | Literal["raise"] = False
    """True: the first trial in ERROR stops the others and ends the
    experiment. "raise" (Ray's): the same, then `fit()` raises `TuneError`
    with that trial's error instead of returning."""
    controller_failure_limit: Annotated[int, Field(ge=-1)] = -1
    max_preemption_failures: Annotated[int, Field(ge=-1)] = -1
    relax_collectives_on_preemption: bool = False
    preemption_grace_s: Annotated[float, Field(ge=0)] = 0.0

    TRAIN_ONLY: ClassVar[tuple[str, ...]] = (
        "controller_failure_limit",
        "max_preemption_failures",
        "relax_collectives_on_preemption",
        "preemption_grace_s",
    )
    """Ray Train V2's fields (with its defaults above): for a config given
    to a Ray Train trainer; a Tuner refuses them (`refuse_train_only`)."""


class SyncConfig(_RayPositional):
    """Ray's `SyncConfig`: how an experiment with a URI `storage_path` is
    kept in the storage (see docs/storage.md).

    Ray re-uploads the whole experiment state each sync, so it syncs every
    300 s by default; tunecore ships the event log in increments, so its
    default period is 5 s, the most the stored log lags behind the driver.
    `sync_timeout` bounds the final flush as `fit()` ends while the storage
    fails (Ray: one sync). With `sync_artifacts`, every file a trial writes
    in its directory (`get_context().get_trial_dir()`) is uploaded as it
    leaves its worker, and with each checkpoint unless
    `sync_artifacts_on_checkpoint=False`; without it only `log_to_file`
    output, exports and checkpoints are."""

    model_config = _FROZEN
    _POSITIONAL = (
        "sync_period",
        "sync_timeout",
        "sync_artifacts",
        "sync_artifacts_on_checkpoint",
    )

    sync_period: Annotated[float, Field(gt=0)] = 5.0
    sync_timeout: Annotated[float, Field(gt=0)] = 60.0
    sync_artifacts: bool = False
    sync_artifacts_on_checkpoint: bool = True


class ResumeType(enum.Enum):
    """What a resume does with the trials of one status (Ray's names)."""

    RESUME = "resume"
    """Go on from the trial's newest checkpoint."""
    RESTART = "restart"
    """Start the trial over, without a checkpoint."""
    SKIP = "skip"
    """Leave the trial as it ended (an unfinished one ends)."""


_Kind = ResumeType  # the fields' type, under a name the class does not shadow


class ResumeConfig(_RayPositional):
    """Ray's `ResumeConfig`: how `tunecore.run(..., resume_config=...)`
    goes on with an experiment's finished, unfinished and errored trials.
    Its defaults are `resume=True`'s. `Tuner.restore` takes the same
    choices as flags; what it cannot do (finished trials run again,
    unfinished ones restarted) is an error naming the field."""

    model_config = _FROZEN
    _POSITIONAL = (
        "finished",
        "unfinished",
        "errored",
    )

    ResumeType: ClassVar[type[_Kind]] = _Kind  # Ray's spelling: ResumeConfig.ResumeType

    finished: _Kind = _Kind.SKIP
    unfinished: _Kind = _Kind.RESUME
    errored: _Kind = _Kind.SKIP

    @model_validator(mode="after")
    def _supported(self) -> ResumeConfig:
        if self.finished is not _Kind.SKIP:
            raise ValueError(
                f"finished={self.finished.value!r}: finished trials are never run again "
                "(only 'skip')"
            )
        if self.unfinished is _Kind.RESTART:
            raise ValueError(
                "unfinished='restart': unfinished trials go on from their newest checkpoint "
                "('resume') or end ('skip')"
            )
        return self


class RunConfig(_RayPositional):
    """Where and how the experiment runs."""

    model_config = _FROZEN
    _POSITIONAL = (
        "name",
        "storage_path",
        "storage_filesystem",
        "failure_config",
        "checkpoint_config",
        "sync_config",
        "verbose",
        "stop",
        "callbacks",
        "progress_reporter",
        "log_to_file",
        "local_dir",
    )

    name: str | None = None
    storage_path: str | None = None
    """Where experiments go (`~/tunecore_results` if None): a local path
    (`str` or `os.PathLike`), every node of a cluster reaching it (a shared
    mount, checked: a node that does not share it fails its trials saying
    so), or a URI `pyarrow.fs` knows (`file://`, `s3://`, `gs://`,
    `hdfs://`, ...): then the driver works in a local staging directory and
    ships the experiment's state there, and workers upload their own
    checkpoints (`tunecore[storage]` for anything but `file://`). An
    unknown scheme is an error naming it, never a local directory."""
    storage_filesystem: Any = None
    """A `pyarrow.fs.FileSystem` to reach `storage_path` with (an endpoint,
    credentials, a mounted fsspec filesystem), as in Ray: `storage_path` is
    then the directory inside it."""
    stop: Any = None
    """Ray Tune's `stop`: a dict of thresholds (`{"training_iteration": 10,
    "done": True}`: a trial stops once a metric reaches one), a
    `tunecore.stopper.Stopper`, a function `(trial_id, result) -> bool`, or
    a list of stoppers; see `tunecore.shell.stoppers`."""
    checkpoint_config: CheckpointConfig = CheckpointConfig()
    failure_config: FailureConfig = FailureConfig()
    sync_config: SyncConfig = SyncConfig()
    callbacks: list[Any] = []
    verbose: Annotated[int, Field(ge=0, le=3)] = 1
    log_to_file: bool | str | tuple[str, str] = False
    """Ray's: True for `stdout` and `stderr` files in each trial directory, a
    name for both streams in one file, or a pair of names. A name is a path
    relative to the trial directory that stays inside it: an absolute path
    or `..` (which Ray would follow) is refused."""
    address: str | None = None
    executor: Literal["ray", "in_process"] = "ray"
    fsync_interval_ms: Annotated[int, Field(ge=0)] = 1000
    """How often the event log is synced to disk: every record with 0, else
    at most every N ms. Each record reaches the OS before it is applied
    either way, so this only matters if the machine, not the driver, dies."""
    progress_reporter: Any = None
    """A `tunecore.CLIReporter`: the status's columns, rows and frequency."""
    export_formats: list[str] = []
    """Formats to export each trial's model in when it ends normally
    (`checkpoint`, `model`, `h5`), into `<trial dir>/export/`."""
    worker_runtime_env: Any = None
    """Ray Train V2's runtime environment of its workers (a dict or a
    `ray.runtime_env.RuntimeEnv`), for a config given to a Ray Train
    trainer; a Tuner refuses it (`refuse_train_only`)."""
    logging_config: Any = None
    """Ray Train V2's `ray.train.LoggingConfig` (`tunecore.LoggingConfig`),
    for a config given to a Ray Train trainer; a Tuner refuses it."""

    TRAIN_ONLY: ClassVar[tuple[str, ...]] = ("worker_runtime_env", "logging_config")
    """The fields only Ray Train's trainers read."""

    @model_validator(mode="before")
    @classmethod
    def _local_path_absolute(cls, data: object) -> object:
        """A nested `name` first becomes its last part under the storage
        path (`_name_parents_in_storage_path`). Then a local path becomes
        the absolute directory it names, unless it is a path inside
        `storage_filesystem` (`bucket/runs`, as Ray users write it), which
        stays as given. Ray's removed `local_dir` is refused as Ray 2.60
        refuses it."""
        if isinstance(data, dict) and "local_dir" in data:
            data = _without_local_dir(data)
        data = _name_parents_in_storage_path(data)
        if not isinstance(data, dict) or data.get("storage_filesystem") is not None:
            return data
        storage_path = data.get("storage_path")
        try:
            if storage_path is None or uri_scheme(storage_path) is not None:
                return data
        except (TypeError, ValueError):
            return data  # the field's validator names the problem
        _, store = resolve_storage(storage_path)
        root = store.local_path("")
        assert root is not None  # a plain path resolves to a local directory
        return {**data, "storage_path": root}

    @field_validator("storage_path", mode="before")
    @classmethod
    def _storage_location(cls, storage_path: object) -> object:
        """A URI is checked for a scheme pyarrow knows, but not opened here
        (opening an `s3://` filesystem may ask the network for the bucket's
        region)."""
        if storage_path is None:
            return None
        try:
            scheme = uri_scheme(storage_path)
        except TypeError as error:
            raise ValueError(str(error)) from None
        assert isinstance(storage_path, str | os.PathLike)  # uri_scheme took it
        if scheme is None:
            return os.fspath(storage_path)
        if scheme.lower() == "file":
            spec, _ = resolve_storage(storage_path)
            return spec.uri
        if scheme.lower() not in KNOWN_SCHEMES:
            raise ValueError(
                f"storage_path {storage_path!r}: unknown scheme {scheme!r} "
                f"(known: {', '.join(KNOWN_SCHEMES)})"
            )
        return os.fspath(storage_path)

    @field_validator("checkpoint_config", "failure_config", "sync_config", mode="before")
    @classmethod
    def _unset_config_is_the_default(cls, value: object, info: ValidationInfo) -> object:
        """Ray's rule: a config given as None or False (any value that is
        false, as scripts pass `checkpoint_config=None` or `=False` from
        their own settings) is the default one. Ray's own config of the
        field is read as tunecore's (`from_ray_config`)."""
        field = cls.model_fields[info.field_name or ""]
        if not value:
            return field.get_default(call_default_factory=True)
        assert isinstance(field.annotation, type)  # one of the config classes above
        return from_ray_config(value, field.annotation)

    @field_validator("callbacks", mode="before")
    @classmethod
    def _unset_callbacks_are_none(cls, value: object) -> object:
        """`callbacks=None` is no callbacks, Ray's default (libraries built
        on Ray Tune pass their optional list on as it is)."""
        return [] if value is None else value

    @field_validator("verbose", mode="before")
    @classmethod
    def _unset_verbose_is_the_default(cls, value: object) -> object:
        """`verbose=None` is the default level, as in Ray (whose
        `get_air_verbosity` returns None for scripts to pass on)."""
        return 1 if value is None else value

    @model_validator(mode="after")
    def _filesystem_with_a_path(self) -> RunConfig:
        if self.storage_filesystem is not None:
            try:
                resolve_storage(self.storage_path, self.storage_filesystem)
            except TypeError as error:
                raise ValueError(str(error)) from None
        return self

    @field_validator("log_to_file")
    @classmethod
    def _inside_the_trial_dir(
        cls, log_to_file: bool | str | tuple[str, str]
    ) -> bool | str | tuple[str, str]:
        if isinstance(log_to_file, str):
            confined_name("log_to_file", log_to_file)
        elif isinstance(log_to_file, tuple):
            for name in log_to_file:
                confined_name("log_to_file", name)
        return log_to_file

    @field_validator("stop")
    @classmethod
    def _known_stop(cls, stop: object) -> object:
        """Criteria are flattened: say so, rather than "not a number"; a
        `stop` of another kind must be one `plan_stop` knows."""
        if isinstance(stop, dict):
            for metric, threshold in stop.items():
                if isinstance(threshold, dict):
                    example = next(iter(threshold), "key")
                    raise ValueError(
                        f"stop[{metric!r}]={threshold!r} is nested; criteria are flattened, "
                        f"so join the keys with '/', e.g. stop={{'{metric}/{example}': ...}}"
                    )
                if not isinstance(metric, str) or not isinstance(threshold, int | float):
                    raise ValueError(
                        f"stop[{metric!r}]={threshold!r} is invalid: expected a metric name "
                        "and a number or a boolean"
                    )
        plan_stop(stop)
        return stop

    @field_validator("callbacks")
    @classmethod
    def _only_callbacks(cls, callbacks: list[Any]) -> list[Any]:
        """An item that is no callback would fail each hook, and the loop
        keeps a callback's failures from ending the run: refuse it here. A
        Ray Train callback (`ray.train.UserCallback`) is one too: this
        RunConfig is also the one a Ray Train trainer is given."""
        for index, item in enumerate(callbacks):
            missing = missing_hooks(item)
            if missing and not _ray_train_callback(item):
                raise ValueError(
                    f"callbacks[{index}]={item!r} is not a callback: expected a "
                    "tunecore.Callback (a logger, or a subclass of yours) or an object with "
                    f"Ray's Callback hooks (it has no {', '.join(missing)})"
                )
        return callbacks

    @field_validator("progress_reporter")
    @classmethod
    def _known_reporter(cls, reporter: object) -> object:
        from tunecore.api.reporters import ProgressReporter  # noqa: PLC0415 - a cycle otherwise

        if reporter is not None and not isinstance(reporter, ProgressReporter):
            raise ValueError(
                f"progress_reporter={reporter!r} is not a tunecore.ProgressReporter (a "
                "CLIReporter, a JupyterNotebookReporter, or a subclass of yours)"
            )
        return reporter

    @field_validator("export_formats")
    @classmethod
    def _known_formats(cls, formats: list[str]) -> list[str]:
        return [f.value for f in parse_export_formats(formats)]

    @field_validator("name")
    @classmethod
    def _safe_name(cls, name: str | None) -> str | None:
        if name is not None and (not name.strip() or "/" in name or name in (".", "..")):
            raise ValueError(f"name={name!r} must be a non-empty directory name without '/'")
        return name


def refuse_train_only(run: RunConfig) -> None:
    """Refuse a run config given to a Tuner that sets a field only Ray
    Train's trainers read (`TRAIN_ONLY`: Ray Train V2's, which tunecore's
    configs take because a script's rewritten `ray.train.RunConfig(...)`
    makes one of them), naming the fields and their values."""
    for config in (run, run.failure_config):
        given = {name: getattr(config, name) for name in config.TRAIN_ONLY}
        fields = {name: value for name, value in given.items() if name in config.model_fields_set}
        if fields:
            raise TrainOnlyFieldError(type(config).__name__, fields)


def _without_local_dir(data: dict[str, Any]) -> dict[str, Any]:
    """Ray's removed `RunConfig(local_dir=...)`, a field Ray 2.60 still
    declares (last, positionally) and refuses in `__post_init__` with this
    `DeprecationWarning`, raised, word for word, so a script catching it
    sees what it sees on Ray; `local_dir=None` is the field's default."""
    if data["local_dir"] is not None:
        raise DeprecationWarning(
            "The `RunConfig(local_dir)` argument is deprecated. "
            "You should set the `RunConfig(storage_path)` instead."
            "See the docs: https://docs.ray.io/en/latest/train/user-guides/"
            "persistent-storage.html#setting-the-local-staging-directory"
        )
    return {key: value for key, value in data.items() if key != "local_dir"}


def _name_parents_in_storage_path(data: object) -> object:
    """Ray 2.60 takes `RunConfig(name="project/128/run-1")` as nested
    directories under `storage_path`. Everything in tunecore names an
    experiment by one directory, so the name's parents move into the
    storage path (`storage_path/project/128`, name `run-1`): the experiment
    lands where Ray puts it and is restored from there. An absolute name, or
    one with `.` or `..` parts, is refused: it would leave the storage."""
    if not isinstance(data, dict) or not isinstance(name := data.get("name"), str):
        return data
    if "/" not in name:
        return data
    path = PurePosixPath(name)
    if path.is_absolute() or any(part in (".", "..") for part in name.split("/")):
        raise ValueError(
            f"name={name!r} must be a directory name, or a relative path of them "
            "inside the storage path (no leading '/', no '.' or '..' parts)"
        )
    if len(path.parts) < 2:
        return {**data, "name": path.name}
    parents = "/".join(path.parts[:-1])
    storage_path = data.get("storage_path")
    if storage_path is None:
        storage_path = DEFAULT_ROOT
    try:
        is_uri = uri_scheme(storage_path) is not None
    except (TypeError, ValueError):
        return data  # the field's validator names the problem
    assert isinstance(storage_path, str | os.PathLike)  # uri_scheme took it
    if is_uri:
        nested = join_uri(os.fspath(storage_path), parents)
    elif data.get("storage_filesystem") is not None:
        nested = posixpath.join(os.fspath(storage_path), parents)
    else:
        nested = os.path.join(os.fspath(storage_path), *path.parts[:-1])
    return {**data, "name": path.name, "storage_path": nested}


def budget_seconds(budget: float | datetime.timedelta | None) -> float | None:
    """A time budget in seconds: Ray takes a `datetime.timedelta` too."""
    return budget.total_seconds() if isinstance(budget, datetime.timedelta) else budget


class TuneConfig(_RayPositional):
    """What to optimise and how to search."""

    model_config = _FROZEN
    _POSITIONAL = (
        "mode",
        "metric",
        "search_alg",
        "scheduler",
        "num_samples",
        "max_concurrent_trials",
        "time_budget_s",
        "reuse_actors",
        "trial_name_creator",
        "trial_dirname_creator",
        "chdir_to_trial_dir",
    )

    metric: str | None = None
    mode: Literal["min", "max"] | None = None
    num_samples: Annotated[int, Field(ge=-1)] = 1
    scheduler: Any = None
    search_alg: Any = None
    max_concurrent_trials: Annotated[int, Field(ge=1)] | None = None
    seed: int | None = None
    time_budget_s: Annotated[float, Field(gt=0)] | None = None
    reuse_actors: bool = True
    resources_per_trial: dict[str, Any] | PlacementGroupFactory | None = None
    """What each trial asks for: `{"cpu": 2, "gpu": 0, "memory": bytes,
    "object_store_memory": bytes, <custom>: n}` or a PlacementGroupFactory;
    None is one CPU, or what the trainable asks itself (`with_resources`,
    `default_resource_request`)."""
    trial_name_creator: Callable[[Trial], str] | None = None
    trial_dirname_creator: Callable[[Trial], str] | None = None
    chdir_to_trial_dir: bool | None = None
    """Run each trial in its trial directory (its working directory, so
    files it writes with relative paths stay with the trial). None: Ray's
    default, on with Ray workers unless `RAY_CHDIR_TO_TRIAL_DIR=0` (Ray's
    switch), off with the in-process executor, where a directory change
    would move the whole driver."""
    max_pending_trials: Annotated[int, Field(ge=1)] | None = None
    result_buffer_length: Annotated[int, Field(ge=1)] = 1
    """Opt-in (Ray executor): a worker produces up to this many results per
    round trip. Faster for trainables that report very often, but the core's
    decisions land up to N-1 results late: results a trial produced past a
    stop are dropped, a pause or a frequency checkpoint captures the state a
    few results on. Checkpointed results and the end are never batched over.
    Where the run-ahead applies (FIFO, ASHA between milestones: no decision
    can land late), its larger batches are used instead, with or without
    this option."""

    @field_validator("scheduler", mode="before")
    @classmethod
    def _scheduler_by_name(cls, scheduler: object) -> object:
        """A scheduler given by its name (`"asha"`), built as Ray's
        `tune.run`, which its `Tuner` calls, builds it (`create_scheduler`)."""
        if isinstance(scheduler, str):
            return create_by_name("scheduler", SCHEDULERS, scheduler, {}, "as in Ray Tune")
        return scheduler

    @field_validator("search_alg", mode="before")
    @classmethod
    def _searcher_by_name(cls, search_alg: object) -> object:
        """A searcher given by its name (`"optuna"`), built as Ray's
        `tune.run` builds it (`create_searcher`); a missing package is an
        `ImportError` naming the extra."""
        if isinstance(search_alg, str):
            return create_by_name("search_alg", SEARCHERS, search_alg, {}, "as in Ray Tune")
        return search_alg

    @field_validator("scheduler")
    @classmethod
    def _not_ray_style(cls, scheduler: object) -> object:
        return refuse_ray_style_scheduler(scheduler)

    @field_validator("search_alg")
    @classmethod
    def _searcher_tunecore_drives(cls, search_alg: object) -> object:
        return refuse_foreign_searcher(search_alg)

    @field_validator("time_budget_s", mode="before")
    @classmethod
    def _budget_in_seconds(cls, budget: Any) -> Any:
        return budget_seconds(budget)

    @field_validator("metric")
    @classmethod
    def _a_key(cls, metric: str | None) -> str | None:
        if metric is not None and not metric.strip():
            raise ValueError(f"metric={metric!r} names no result key; name the one to optimise")
        return metric

    @field_validator("num_samples")
    @classmethod
    def _not_zero(cls, num_samples: int) -> int:
        if num_samples == 0:
            raise ValueError("num_samples=0 would run nothing; use a positive number or -1")
        return num_samples

    @field_validator("resources_per_trial", mode="before")
    @classmethod
    def _ray_request(cls, resources: object) -> object:
        """Ray's own `PlacementGroupFactory` (a library's) as tunecore's."""
        return from_ray(resources)

    @field_validator("resources_per_trial")
    @classmethod
    def _known_resources(
        cls, resources: dict[str, Any] | PlacementGroupFactory | None
    ) -> dict[str, Any] | PlacementGroupFactory | None:
        if resources is not None:
            as_resources(resources, "resources_per_trial")
        return resources
