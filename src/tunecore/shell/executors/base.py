"""What every executor does: run operations on trial workers, in order, and
report each completion as an event for the core.

The core relies on one guarantee: for each trial, operations complete and
are reported in the order they were issued (a save asked before a result
is reported before it). `OrderedOperations` keeps that guarantee for any
executor: each trial has a FIFO of operations, and only the head of each
FIFO is ever waited on. An operation that fails reports `TrialFailed` and
drops the trial's remaining operations: its worker is discarded. The
implementation the executors share is `executors.queued`.
"""

from __future__ import annotations

import enum
import functools
import logging
import math
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from tunecore.model import (
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ExperimentEvent,
    Horizon,
    JsonDict,
    Location,
    Resources,
    ResultReported,
    TrialFailed,
    TrialRestored,
    TrialStarted,
)
from tunecore.shell.trainable.checkpoint_files import SavedCheckpoint
from tunecore.shell.trainable.errors import user_frames_first
from tunecore.shell.trainable.worker import TrialContext

logger = logging.getLogger(__name__)


class Operation(enum.Enum):
    ASSIGN = "assign"
    ASSIGN_AND_TRAIN = "assign_and_train"
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

    def head(self, trial_id: str) -> Pending[H] | None:
        queue = self._queues.get(trial_id)
        return queue[0] if queue else None

    def saving(self, trial_id: str) -> bool:
        """Whether a save of the trial's is still pending."""
        return any(p.operation in _SAVES for p in self._queues.get(trial_id, ()))

    def __bool__(self) -> bool:
        return bool(self._queues)


STOP_GRACE_S = 5.0
"""How long a stopped (or paused) trial's worker may take to come back
from the step or `report()` it is in before it is given up: a Ray actor is
killed, an in-process thread abandoned. Ray Tune, too, waits a few seconds
for the trials it stops at the end of an experiment, then kills their
actors."""

_SAVES = (Operation.SAVE, Operation.SAVE_TO_MEMORY)
_TRAINING = (
    Operation.TRAIN,
    Operation.TRAIN_MANY,
    Operation.ASSIGN_AND_TRAIN,
)


def in_training(ops: OrderedOperations[H], trial_id: str) -> bool:
    """Whether the trial's worker is in a `train` call (in the user's code)."""
    head = ops.head(trial_id)
    return head is not None and head.operation in _TRAINING


class StopGrace:
    """Finds the released trials whose worker is stuck in user code.

    A trial released (stopped or paused) while a `train` is in flight
    waits for that call to return, and its result is unwanted: the core
    has finished the trial. A trainable that never comes back to
    `report()` (it blocks, or sleeps for an hour) would hold its worker,
    and the queued save, export and release, forever. A `train` at the
    head of a released trial's queue is given `grace_s` seconds (from when
    it is first seen there); then the executor gives the worker up."""

    def __init__(self, grace_s: float = STOP_GRACE_S) -> None:
        self._grace = grace_s
        self._since: dict[str, float] = {}

    def overdue(
        self, ops: OrderedOperations[H], released: Iterable[str], now: float
    ) -> tuple[list[str], float]:
        """The released trials to give up now, and how long until the next
        one would be (`math.inf` if none is waiting): a wait for completions
        must not outlast it."""
        since = {t: self._since.get(t, now) for t in released if in_training(ops, t)}
        self._since = since
        due = sorted(t for t, start in since.items() if now - start >= self._grace)
        waits = [start + self._grace - now for t, start in since.items() if t not in due]
        return due, min(waits, default=math.inf)

    def given_up(
        self, trial_id: str, dropped: Iterable[Pending[H]], what: str
    ) -> list[ExperimentEvent]:
        """Warn that a released trial's worker was given up (`what` says
        how) and say what the core must hear: nothing, unless saves were
        queued behind the stuck call; each of those fails, so the core does
        not wait for them (a TERMINATED trial keeps its results and ends
        without that checkpoint, a PAUSED one fails)."""
        reason = (
            f"Trial {trial_id} did not return from its step or report() within "
            f"{self._grace:g} s of being stopped: its worker was {what}"
        )
        logger.warning("%s", reason)
        return [failure_event(trial_id, reason) for p in dropped if p.operation in _SAVES]


@functools.lru_cache(maxsize=1024)
def worker_location(hostname: str | None, pid: int | None) -> Location:
    """One `Location` per worker: a trial keeps the one it started on for
    as long as the experiment, and most trials share a worker (a reused
    actor, the in-process executor), so each kept its own copy before:
    48 bytes of the driver's memory per finished trial (issue 41)."""
    return Location(hostname=hostname, pid=pid)


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
        return TrialStarted(trial_id=trial_id, at=at, location=worker_location(hostname, pid))
    if operation is Operation.RESTORE:
        return TrialRestored(trial_id=trial_id, at=at)
    if operation is Operation.SAVE:
        assert isinstance(value, SavedCheckpoint)
        checkpoint = CheckpointRef(
            storage=CheckpointStorage.PERSISTENT,
            path=value.path,
            training_iteration=pending.iteration,
            metrics=pending.metrics,
            empty=value.empty,
            earlier=value.earlier,
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


@dataclass(frozen=True)
class ChainedStart:
    """A trial chained behind a starting one (`Executor.start`'s `then`),
    with what its worker needs to run it. Its worker runs it only after
    claiming it (`executors.claim`): its `context.trial_dir` is not made
    until a claim makes it."""

    trial_id: str
    config: JsonDict
    context: TrialContext


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
        *,
        then: Sequence[ChainedStart] = (),
    ) -> None:
        """Get a worker (a new one or an idle one), restore, then train.

        `then` are the trials the core chained behind this one
        (`ChainTrials`, `core.experiment.chains`). The executor may run
        them on this trial's worker, in order, each only once the one
        before has returned, keeping what each produced; ignoring them is
        always correct. When the core later starts a chained trial, the
        executor reports what it kept as if the trial had started then
        (`TrialStarted`, its results, its failure), never before: a
        chained trial the core never starts reports nothing. One whose
        function had not returned keeps its worker until that start. An
        executor that chains reports `ChainRan` for this trial once it is
        done with its chain, before the results of the call that ran it.

        A chained trial is run by whoever claims it first (`claim_start`,
        `executors.claim`, whose module states the contract): its worker,
        or, once the core starts it while a worker may still run it ahead,
        the executor for the driver. The caller hands such a trial here
        before anything makes its directory (the claim makes it), and an
        executor that lost the claim waits for the worker's reply."""
        ...

    def train(self, trial_id: str, until: Horizon | None = None) -> None:
        """Let the trial produce its next result. `until` (the core's
        `run_ahead_until`) allows the worker to go on producing results
        without waiting for the answers, up to the first whose key reaches
        the threshold or that the trial's stopping criterion stops; an
        executor may ignore it (one result per call is always correct)."""
        ...

    def save(self, trial_id: str, checkpoint_dir: str, iteration: int, metrics: JsonDict) -> None:
        """Save the trial's state. Its completion is reported before the
        trial's code runs again: a `train` issued after a save starts only
        once the save is known to be done, so a worker that dies in the very
        next step (taking a reply still on its way with it) never costs the
        checkpoint it had just saved. The same holds for `save_to_memory`."""
        ...

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
