"""The class API: `Trainable`, as Ray users know it, and `ClassTrainable`,
which drives a subclass of it as a `WorkerTrainable`.

    class MyTrainable(Trainable):
        def setup(self, config):
            self.model = build(config)

        def step(self):
            return {"loss": self.model.fit_one_epoch()}

        def save_checkpoint(self, checkpoint_dir):
            self.model.save(os.path.join(checkpoint_dir, "model"))
            # None: the directory itself is the checkpoint.

        def load_checkpoint(self, checkpoint):
            self.model.load(os.path.join(checkpoint, "model"))

`save_checkpoint(checkpoint_dir)` may return None (the directory holds the
state), the path of a file or directory inside `checkpoint_dir`, or a dict
of JSON values (written to `checkpoint_state.json` in the directory: state
is never pickled, so a checkpoint from elsewhere can never run code when
loaded). `load_checkpoint` then receives, respectively, the directory, that
path, or the dict. A directory tunecore did not save (no
`.tunecore_checkpoint.json`) is handed over as it is.

Memory checkpoints (`save_to_bytes`/`restore_from_bytes`) pass through a
temporary directory that is deleted as soon as `save_checkpoint` or
`load_checkpoint` returns, so `load_checkpoint` must read all it needs.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

import msgspec

from tunecore.core.checkpoints import checkpoint_dirname
from tunecore.model import ExportFormat, JsonDict
from tunecore.shell.storage.own_files import NotRegularFileError, read_bytes
from tunecore.shell.trainable.checkpoint import Checkpoint
from tunecore.shell.trainable.checkpoint_files import (
    STATE_FILE,
    CheckpointMeta,
    pack_checkpoint,
    read_meta,
    unpack_checkpoint,
    write_meta,
)
from tunecore.shell.trainable.config_objects import ConfigObjects
from tunecore.shell.trainable.exports import export_checkpoint
from tunecore.shell.trainable.placement_group import PlacementGroupFactory
from tunecore.shell.trainable.results import ResultClock, json_result, plain_json_dict
from tunecore.shell.trainable.worker import TrialContext

Config: TypeAlias = dict[str, Any]
"""A trial's config as a `Trainable` sees it: JSON values, and the param
space's objects where it holds them (`tunecore.shell.trainable.config_objects`)."""


class Trainable:
    """Subclass it and override `step` (and `setup`, and the checkpoint
    methods to support pausing, PBT and recovery). Override `setup`, not
    `__init__`: tunecore constructs the class itself.

    Built directly (`MyTrainable({"lr": 0.1})`, handy in a unit test)
    without a context, it gets a fresh temporary directory as its trial
    directory, and `train`, `save`, `restore` and `stop` drive it as a trial
    would be driven (`tunecore.utils.validate_save_restore` does)."""

    def __init__(
        self, config: Mapping[str, object] | None = None, *, context: TrialContext | None = None
    ) -> None:
        # Built by hand, the instance belongs to no trial: it has a
        # directory to write in, but no resources were given to it.
        self._in_trial = context is not None
        if context is None:
            directory = tempfile.mkdtemp(prefix="tunecore_trainable_")
            context = TrialContext(
                trial_id="default",
                trial_name="default",
                trial_dir=directory,
                experiment_dir=directory,
            )
        self._context = context
        self._iteration = 0
        self.config: Config = _own_config(config)
        self.setup(copy.deepcopy(self.config))

    # -- what subclasses override -------------------------------------------------------------

    def setup(self, config: Config) -> None:
        """Build what training needs from `config` (a copy of `self.config`)."""

    def step(self) -> Mapping[str, object]:
        """One training iteration; returns its metrics as a dict of JSON values."""
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    def save_checkpoint(self, checkpoint_dir: str) -> str | Mapping[str, object] | None:
        """Write the state into `checkpoint_dir` (see the module doc for what to return)."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot be checkpointed: it does not implement save_checkpoint()"
        )

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        """Take back the state `save_checkpoint` saved."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot be restored: it does not implement load_checkpoint()"
        )

    @classmethod
    def default_resource_request(cls, config: JsonDict) -> object:
        """What each trial of this class asks for, given its config: a dict
        (`{"cpu": 4}`), a `PlacementGroupFactory`, or None for one CPU.
        Overriding it and also setting `resources_per_trial` is an error, as
        in Ray."""
        del config  # the base class asks for nothing of its own
        return None

    def reset_config(self, new_config: Config) -> bool:
        """Take `new_config` in place, for a new trial, and return True; False
        (the default) means it cannot, and a new instance is built instead."""
        return False

    def cleanup(self) -> None:
        """Release what `setup` acquired; called once, when the trial stops."""

    def log_result(self, result: JsonDict) -> None:
        """Called in the trial's process with each result, the automatic
        fields filled in, as Ray's `Trainable.log_result`: override it to
        log to a library of one's own (a copy: changing it changes nothing)."""

    def export_model(self, export_formats: list[str], export_dir: str) -> dict[str, str]:
        """Write the model in each of `export_formats` it supports (`model`,
        `h5`, ...) into `export_dir`; return format -> path. By default
        nothing but `checkpoint`, which tunecore handles itself."""
        return {}

    # -- what tunecore maintains --------------------------------------------------------------

    def get_config(self) -> Config:
        """The config this instance was built (or last reset) with."""
        return self.config

    @property
    def trial_id(self) -> str:
        return self._context.trial_id

    @property
    def trial_name(self) -> str:
        return self._context.trial_name

    @property
    def trial_dir(self) -> str:
        return self._context.trial_dir

    @property
    def logdir(self) -> str:
        """Ray's name for `trial_dir`."""
        return self._context.trial_dir

    @property
    def trial_resources(self) -> PlacementGroupFactory | None:
        """The trial's resources on this run (a `ResourceChangingScheduler`
        may restart it with others), as Ray's `PlacementGroupFactory`; None
        for an instance built by hand, outside any trial, as in Ray."""
        return self._context.get_trial_resources() if self._in_trial else None

    @property
    def iteration(self) -> int:
        """Training iterations completed (0 while the first `step` runs);
        continues from a restored checkpoint's count."""
        return self._iteration

    @property
    def training_iteration(self) -> int:
        """Ray's other name for `iteration`."""
        return self._iteration

    # -- driving it directly, outside an experiment -------------------------------------------

    def train(self) -> JsonDict:
        """Run one `step` and return its result with the keys a trial's
        result gets (`training_iteration`, `time_total_s`, ...)."""
        return self._driven().train()

    def save(self, checkpoint_dir: str | os.PathLike[str] | None = None) -> str:
        """Save a checkpoint as a trial saves one, into `checkpoint_dir`
        (default: `checkpoint_<iteration>` in `logdir`); returns the
        directory, which `restore` takes."""
        directory = checkpoint_dir or os.path.join(self.logdir, checkpoint_dirname(self._iteration))
        return self._driven().save(os.fspath(directory))

    def restore(self, checkpoint: str | os.PathLike[str] | Checkpoint) -> None:
        """Load a checkpoint that `save` or a trial wrote, given as its path
        or as a `Checkpoint` (one in storage is downloaded first, so
        `load_checkpoint` must read all it needs); training goes on from
        the checkpoint's iteration."""
        if not isinstance(checkpoint, Checkpoint):
            checkpoint = Checkpoint.from_directory(checkpoint)
        with checkpoint.as_directory() as directory:
            self._driven().restore(directory)

    def stop(self) -> None:
        """End this instance: `cleanup`, as when a trial stops."""
        self._driven().stop()

    def _driven(self) -> ClassTrainable:
        """The `ClassTrainable` that `train`, `save` and `restore` go through
        (made at the first of them), so a trainable used directly counts
        its iterations and writes its checkpoints as in an experiment."""
        # A name of tunecore's own: a subclass may well have a `_driver`.
        driver: ClassTrainable | None = getattr(self, "_tunecore_driver", None)
        if driver is None:
            driver = ClassTrainable(type(self), self.config, self._context, built=self)
            self._tunecore_driver = driver
        return driver

    def _reset(self, config: Config, context: TrialContext) -> bool:
        """Become the trainable of another trial, if `reset_config` agrees.
        On False the instance is in between and must be discarded."""
        self.config = _own_config(config)
        self._context = context
        self._in_trial = True
        self._iteration = 0
        return bool(self.reset_config(copy.deepcopy(config)))


def _own_config(config: Mapping[str, object] | None) -> Config:
    """The config as a trainable keeps it: a dict of its own with string
    keys, whose values may be the param space's objects (as in Ray, whose
    Trainable takes any config)."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise TypeError(f"the config must be a dict with string keys, got {type(config).__name__}")
    for key in config:
        if not isinstance(key, str):
            raise TypeError(
                f"the config: the key {key!r} is of type {type(key).__name__}; keys are strings"
            )
    return dict(config)


class ClassTrainable:
    """A `WorkerTrainable` driving an instance of a `Trainable` subclass."""

    def __init__(
        self,
        cls: type[Trainable],
        config: JsonDict,
        context: TrialContext,
        *,
        built: Trainable | None = None,
        objects: ConfigObjects | None = None,
    ) -> None:
        """Build `cls(config)` for the trial in `context`, or drive `built`,
        an instance of `cls` made elsewhere (`Trainable.train` and the other
        methods for direct use). `objects` replace their placeholders in
        each config it is given (`setup`, `reset_config`, `self.config`)."""
        candidate: object = cls  # checked at run time too: callers may be untyped
        if not (isinstance(candidate, type) and issubclass(candidate, Trainable)):
            raise TypeError(f"{cls!r} is not a subclass of tunecore's Trainable")
        self._name = cls.__qualname__
        self._clock = ResultClock()
        self._objects = objects or ConfigObjects()
        self._trainable = (
            cls(self._objects.resolve(config), context=context) if built is None else built
        )

    def train_within(self, timeout: float) -> JsonDict | None:
        """A step runs in the caller and cannot be left running: never ahead."""
        return None

    def may_run_ahead(self, results: int, until: tuple[str, float] | None) -> None:
        """A step runs in the caller: never ahead."""

    def train(self) -> JsonDict:
        started = time.monotonic()
        returned = self._trainable.step()
        measured = time.monotonic() - started
        result = self._clock.fill(json_result(f"{self._name}.step()", returned), measured)
        self._trainable._iteration = self._clock.iteration
        self._trainable.log_result(copy.deepcopy(result))
        return result

    def save(self, checkpoint_dir: str) -> str:
        self._save_into(checkpoint_dir)
        return checkpoint_dir

    def save_to_bytes(self) -> bytes:
        with tempfile.TemporaryDirectory(prefix="tunecore_checkpoint_") as directory:
            return pack_checkpoint(directory, self._save_into(directory))

    def export(self, formats: list[str], export_dir: str) -> dict[str, str]:
        exported = export_checkpoint(self, formats, export_dir)
        others = [f for f in formats if f != ExportFormat.CHECKPOINT]
        if others:
            written: dict[str, str] = self._trainable.export_model(others, export_dir)
            exported.update(written)
        return exported

    def restore(self, path: str) -> None:
        meta = read_meta(path)
        self._clock.restored(meta)
        self._trainable._iteration = self._clock.iteration
        self._trainable.load_checkpoint(self._saved_state(path, meta))

    def restore_from_bytes(self, data: bytes) -> None:
        with tempfile.TemporaryDirectory(prefix="tunecore_checkpoint_") as directory:
            unpack_checkpoint(data, directory)
            self.restore(directory)

    def reset(self, config: JsonDict, context: TrialContext) -> bool:
        if not self._trainable._reset(self._objects.resolve(config), context):
            return False
        self._clock = ResultClock()
        return True

    @property
    def reusable(self) -> bool:
        """Whether the class has its own `reset_config`: then a released
        instance is kept for the next trial on its worker, which it takes
        in place (Ray's actor reuse: no new `setup`)."""
        return type(self._trainable).reset_config is not Trainable.reset_config

    def stop(self) -> None:
        self._trainable.cleanup()

    # -- checkpoints --------------------------------------------------------------------------

    def _save_into(self, directory: str) -> CheckpointMeta:
        os.makedirs(directory, exist_ok=True)
        returned = self._trainable.save_checkpoint(directory)
        where = f"{self._name}.save_checkpoint()"
        meta = self._clock.meta()
        if isinstance(returned, Mapping):
            state = plain_json_dict(where, returned)
            with open(os.path.join(directory, STATE_FILE), "w", encoding="utf-8") as file:
                json.dump(state, file)
            meta = msgspec.structs.replace(meta, saved_as="dict")
        elif isinstance(returned, str):
            relative = os.path.relpath(os.path.abspath(returned), os.path.abspath(directory))
            if _escapes(relative) or not os.path.exists(returned):
                raise ValueError(
                    f"{where} returned {returned!r}, which is not an existing path inside the "
                    f"checkpoint directory {directory!r}; return a path inside it, a dict or None"
                )
            if relative != os.curdir:
                meta = msgspec.structs.replace(meta, saved_as="file", file=relative)
        elif returned is not None:
            raise TypeError(
                f"{where} returned a value of type {type(returned).__name__}; return None, "
                "a path inside the checkpoint directory, or a dict of JSON values"
            )
        write_meta(directory, meta)
        return meta

    def _saved_state(self, path: str, meta: CheckpointMeta | None) -> str | JsonDict:
        """What `load_checkpoint` gets for the checkpoint in `path`."""
        if meta is None or meta.saved_as == "directory":
            return path
        if meta.saved_as == "file":
            if _escapes(os.path.normpath(meta.file)):
                raise ValueError(
                    f"the checkpoint in {path!r} names a file outside it: {meta.file!r}"
                )
            return os.path.join(path, meta.file)
        state_file = os.path.join(path, STATE_FILE)
        try:  # never a FIFO (it blocked the restore forever) nor /dev/zero
            state = json.loads(read_bytes(Path(state_file)))
        except NotRegularFileError as error:
            why = error.strerror
            raise ValueError(f"the checkpoint state {state_file!r} is refused: {why}") from None
        return plain_json_dict(f"the state in {path!r}", state)


def _escapes(relative: str) -> bool:
    """Whether a relative path leads out of its directory."""
    return (
        os.path.isabs(relative) or relative == os.pardir or relative.startswith(os.pardir + os.sep)
    )
