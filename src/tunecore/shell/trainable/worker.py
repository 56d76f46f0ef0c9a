"""What an executor drives inside a worker: one `WorkerTrainable` per trial.

The executor (a Ray actor, or a thread of the in-process executor) builds a
worker trainable from the user's function or class and then calls, one at a
time and never concurrently:

- `train()`: run until the trainable produces its next result, and return
  it with the fields tunecore fills in (`training_iteration`,
  `time_this_iter_s`, `time_total_s`, `timestamp`, `pid`, `hostname`,
  `done` when it ended, `should_checkpoint` when it reported a checkpoint);
- `save(checkpoint_dir)`: write a persistent checkpoint into that (empty,
  existing) directory and return the path to restore from;
- `save_to_bytes()`: a memory checkpoint, as bytes (pause/resume);
- `restore(path)` and `restore_from_bytes(data)`;
- `reset(config, context)`: take a new config in place, True if supported;
- `export(formats, export_dir)`: at a normal end, the model in the
  requested export formats (`checkpoint` is a checkpoint copy);
- `stop()`: end it and release what it holds.

Errors raised by the user's code propagate out of these calls with their
traceback; the executor turns them into `TrialFailed` events. (A function
trainable's user code runs in another thread: its errors arrive as a
`TrainableError` whose message holds that thread's formatted traceback.)

`restore`/`restore_from_bytes` are called before the first `train()` of a
restored trial. A function that returns ends with an *end marker* instead
of a result: `{"done": True, "__duplicate__": True}` (`RESULT_DUPLICATE`,
Ray's key). It only tells the driver the trial is done: the core ends the
trial on its last result and counts, checks and logs nothing for it.

Implementations: `FunctionTrainable` and `ClassTrainable`, built with
`make_worker_trainable` (see `tunecore.shell.trainable`).
"""

from __future__ import annotations

import os
from typing import Protocol

import msgspec

from tunecore.model import JsonDict, Resources
from tunecore.shell.storage.store import Store
from tunecore.shell.trainable.placement_group import PlacementGroupFactory
from tunecore.shell.trainable.trial_storage import TrialStorage


class TrialContext(msgspec.Struct, frozen=True, kw_only=True):
    """Where a trial runs: its id and name, and the directories it may write.

    `stdout_file`/`stderr_file` (names inside the trial dir) capture the
    trainable's output when set, and `chdir` runs it inside its trial dir;
    both change the whole worker process, so the host applies them (they
    suit the Ray executor, where a worker process hosts one trial).

    `store` is set when the experiment is mirrored to storage (a URI):
    then `experiment_dir` and `trial_dir` are the driver's, which need not
    exist on the worker's node, and the host hands the trainable a context
    whose directories are node-local scratch instead, and persists what
    must outlive the node through the store (`shell.trainable.persist`).
    The store travels with the context (Ray pickles it; it is never
    written to the event log: it may hold credentials).
    """

    trial_id: str
    trial_name: str
    trial_dir: str
    experiment_dir: str
    stdout_file: str | None = None
    stderr_file: str | None = None
    chdir: bool = False
    storage_token: str = ""
    """The driver run's token in `experiment_dir` (`shell.storage.shared_storage`):
    the host checks it before it takes the trial; empty: no check. With a
    `store` nothing is checked (no shared path is needed) and the token
    names the run's scratch directory on each node."""
    store: Store | None = None
    """The experiment's storage when mirrored (rooted at the experiment:
    `<trial dirname>/checkpoint_000003` is a checkpoint), else None."""
    lease_generation: int = 0
    """With a `store`: the generation of the driver's lease on it
    (`shell.mirror.lease`). Before the worker deletes or writes anything
    there (a checkpoint, exports, its output), it checks that no driver of
    a later generation claimed the experiment: a driver paused past its
    lease (SIGSTOP, a VM pause) keeps its workers, which must not replace
    what the new driver's workers store. 0: nothing is checked."""
    sync_artifacts: bool = False
    """With a `store`: upload every file the trial writes in its directory
    (Ray's `SyncConfig(sync_artifacts=True)`), not only its `log_to_file`
    output, as the trial leaves the worker..."""
    sync_artifacts_on_checkpoint: bool = True
    """...and with each checkpoint it saves."""
    stopping_criterion: dict[str, float | bool] = {}
    """The trial's own stopping criterion (the core's `check_stop`): a
    worker that trains ahead of the driver's answers ends its batch of
    results where it says stop (`TrialHost.train_many`)."""
    until: tuple[str, float] | None = None
    """How far the first batch may run ahead (the core's `run_ahead_until`,
    see `Executor.train`); None: the first result waits for its answer."""
    resources: Resources = Resources()
    """What the trial holds on this run: a `ResourceChangingScheduler`
    restarts it with other resources (`get_trial_resources()`)."""

    # Ray Tune's `TuneContext` methods, for code written against `ray.tune.get_context()`.

    def get_trial_id(self) -> str:
        return self.trial_id

    def get_trial_name(self) -> str:
        return self.trial_name

    def get_trial_dir(self) -> str:
        return self.trial_dir

    def get_trial_resources(self) -> PlacementGroupFactory:
        """The trial's resources on this run, as Ray's `PlacementGroupFactory`."""
        return PlacementGroupFactory.of(self.resources)

    def get_experiment_name(self) -> str:
        return os.path.basename(self.experiment_dir)

    def get_storage(self) -> TrialStorage:
        """Where the trial's files are kept (Ray's `StorageContext`, read-only:
        `storage_filesystem`, `trial_fs_path`, ...)."""
        return TrialStorage.of(self.experiment_dir, self.trial_dir, self.store)

    def get_world_rank(self) -> int:
        """A Tune trial is one process: rank 0 of 1 (Ray's answer too)."""
        return 0

    def get_world_size(self) -> int:
        return 1

    def get_local_rank(self) -> int:
        return 0

    def get_local_world_size(self) -> int:
        return 1

    def get_node_rank(self) -> int:
        return 0


TuneContext = TrialContext
"""Ray Tune's name for what `get_context()` returns (`tune.TuneContext`)."""


class WorkerTrainable(Protocol):
    def train(self) -> JsonDict: ...

    def train_within(self, timeout: float) -> JsonDict | None:
        """The next result if it comes within `timeout` seconds; else None,
        and training goes on: the next `train` or `train_within` returns
        that result. A trainable that cannot train on unwatched (a class's
        `step` runs in the caller) returns None at once and starts nothing:
        the caller then ends its batch (`TrialHost.train_many`)."""
        ...

    def may_run_ahead(self, results: int, until: tuple[str, float] | None) -> None:
        """Up to `results` results after the next one may be produced
        without waiting for the caller's next call, none at or past `until`
        (`FunctionTrainable`); the caller still takes them one call at a
        time. A trainable that cannot (a class's `step`) ignores it."""
        ...

    def save(self, checkpoint_dir: str) -> str: ...

    def save_to_bytes(self) -> bytes: ...

    def restore(self, path: str) -> None: ...

    def restore_from_bytes(self, data: bytes) -> None: ...

    def reset(self, config: JsonDict, context: TrialContext) -> bool: ...

    def export(self, formats: list[str], export_dir: str) -> dict[str, str]:
        """Export the model in each format it supports into `export_dir`;
        returns format -> path for those it wrote."""
        ...

    def stop(self) -> None: ...
