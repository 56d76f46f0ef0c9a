"""What every executor does: run operations on trial workers, in order, and
report each completion as an event for the core.

The core relies on one guarantee: for each trial, operations complete and
are reported in the order they were issued (a save asked before a result
is reported before it). `OrderedOperations` keeps that guarantee for any
executor: each trial has a FIFO of operations, and only the head of each
FIFO is ever waited on. An operation that fails reports `TrialFailed` and
drops the trial's remaining operations: its worker is discarded.
"""

from __future__ import annotations

import enum
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from tunecore.model import (
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ExperimentEvent,
    JsonDict,
    Location,
    Resources,
    ResultReported,
    TrialFailed,
    TrialRestored,
    TrialStarted,
)
from tunecore.shell.trainable.errors import user_frames_first
from tunecore.shell.trainable.worker import TrialContext


class Operation(enum.Enum):
    ASSIGN = "assign"
    RESET = "reset"
    RESTORE = "restore"
    TRAIN = "train"
    TRAIN_MANY = "train_many"
    SAVE = "save"
    SAVE_TO_MEMORY = "save_to_memory"
    EXPORT = "export"


H = TypeVar("H")


@dataclass
class Pending(Generic[H]):
    """An operation issued to a trial's worker; `handle` is how the executor
    waits for it (a Ray object ref, a future)."""

    operation: Operation
    handle: H
    iteration: int = 0
    metrics: JsonDict = field(default_factory=dict)
    memory_key: str = ""


class OrderedOperations(Generic[H]):
    """Per-trial FIFOs of pending operations."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[Pending[H]]] = {}

    def push(self, trial_id: str, pending: Pending[H]) -> None:
        self._queues.setdefault(trial_id, deque()).append(pending)

    def heads(self) -> Iterator[tuple[str, Pending[H]]]:
        for trial_id, queue in self._queues.items():
            if queue:
                yield trial_id, queue[0]

    def pop(self, trial_id: str) -> Pending[H]:
        queue = self._queues[trial_id]
        pending = queue.popleft()
        if not queue:
            del self._queues[trial_id]
        return pending

    def drop(self, trial_id: str) -> list[Pending[H]]:
        return list(self._queues.pop(trial_id, ()))

    def busy(self, trial_id: str) -> bool:
        return trial_id in self._queues

    def __bool__(self) -> bool:
        return bool(self._queues)


def completion_event(
    trial_id: str, pending: Pending[H], value: object, at: float
) -> ExperimentEvent | None:
    """The event an operation's successful completion becomes (None for
    bookkeeping operations the core does not hear about)."""
    operation = pending.operation
    if operation is Operation.TRAIN:
        assert isinstance(value, dict)
        return ResultReported(trial_id=trial_id, at=at, result=value)
    if operation is Operation.ASSIGN:
        assert isinstance(value, tuple)
        hostname, pid = value
        return TrialStarted(trial_id=trial_id, at=at, location=Location(hostname=hostname, pid=pid))
    if operation is Operation.RESTORE:
        return TrialRestored(trial_id=trial_id, at=at)
    if operation is Operation.SAVE:
        assert isinstance(value, str)
        checkpoint = CheckpointRef(
            storage=CheckpointStorage.PERSISTENT,
            path=value,
            training_iteration=pending.iteration,
            metrics=pending.metrics,
        )
        return CheckpointSaved(trial_id=trial_id, at=at, checkpoint=checkpoint)
    if operation is Operation.SAVE_TO_MEMORY:
        checkpoint = CheckpointRef(
            storage=CheckpointStorage.MEMORY,
            path=pending.memory_key,
            training_iteration=pending.iteration,
            metrics=pending.metrics,
        )
        return CheckpointSaved(trial_id=trial_id, at=at, checkpoint=checkpoint)
    return None


def failure_event(trial_id: str, error: str) -> TrialFailed:
    """A trial's failure, its text as users read it: the user's frames
    first, no colour codes (`user_frames_first`)."""
    return TrialFailed(trial_id=trial_id, at=time.time(), error=user_frames_first(error))


class Executor(Protocol):
    """Runs trials on workers. Every method returns at once; completions
    come back from `next_events`."""

    def cluster_resources(self) -> Resources: ...

    def start(
        self,
        trial_id: str,
        resources: Resources,
        config: JsonDict,
        context: TrialContext,
        restore: CheckpointRef | None,
    ) -> None:
        """Get a worker (a new one or an idle one), restore, then train."""
        ...

    def train(self, trial_id: str) -> None: ...

    def save(
        self, trial_id: str, checkpoint_dir: str, iteration: int, metrics: JsonDict
    ) -> None: ...

    def save_to_memory(self, trial_id: str, iteration: int, metrics: JsonDict) -> None: ...

    def reset(
        self, trial_id: str, config: JsonDict, context: TrialContext, restore: CheckpointRef | None
    ) -> None: ...

    def export(self, trial_id: str, formats: list[str], export_dir: str) -> None:
        """Export the trial's model (`export_formats`) before it is released."""
        ...

    def release(self, trial_id: str) -> None:
        """The trial is done with its worker (paused or stopped): once its
        pending operations complete, the worker is freed for reuse."""
        ...

    def forget(self, checkpoint: CheckpointRef) -> None:
        """A memory checkpoint is no longer needed."""
        ...

    def next_events(self, timeout: float) -> list[ExperimentEvent]:
        """Completions so far, waiting up to `timeout` seconds for one."""
        ...

    def drain(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) for the operations still running,
        such as exports after the last trial ended, dropping their events:
        the experiment is over."""
        ...

    def shutdown(self) -> None:
        """End every worker. Safe to call twice, and after a Ctrl-C."""
        ...
