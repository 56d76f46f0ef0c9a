"""The executors' shared implementation: what Ray's actors, the in-process
threads and the simulator do the same way (`QueuedWorkers`), and what the
two whose workers host a `TrialHost` do the same way (`HostCalls`). The
protocol they implement and its guarantees are `executors.base`'s."""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Iterator
from typing import Any

from tunecore.model import CheckpointRef, CheckpointStorage, ExperimentEvent, Horizon, JsonDict
from tunecore.shell.executors.base import (
    Operation,
    OrderedOperations,
    Pending,
    StopGrace,
    completion_event,
    failure_event,
)
from tunecore.shell.trainable.worker import TrialContext


class QueuedWorkers(abc.ABC):
    """How every executor (Ray, threads, the simulator) gives a trial's
    worker back: the trial's operations run in order (`_ops`), so a
    release that finds some still queued only marks the trial
    (`_releasing`), and the completion that empties its queue frees the
    worker (`_free_if_released`). A worker is never freed under an
    operation still running on it; one freed as `reusable` may take the
    next trial."""

    _ops: OrderedOperations[Any]
    _releasing: set[str]

    @abc.abstractmethod
    def _holds(self, trial_id: str) -> bool:
        """Whether the trial has a worker here."""

    @abc.abstractmethod
    def _free(self, trial_id: str, *, reusable: bool, stuck: bool = False) -> None:
        """Take the trial's worker back (kept for the next trial when
        `reusable`). One not kept still ends its trial first (the host's
        `release`: a class trainable's `cleanup`, which Ray's stop calls
        after a failure too), unless it is `stuck` in the user's code."""

    def release(self, trial_id: str) -> None:
        """Give the worker back once its queued operations are done."""
        if not self._holds(trial_id):
            return
        if self._ops.busy(trial_id):
            self._releasing.add(trial_id)
        else:
            self._free(trial_id, reusable=True)

    @abc.abstractmethod
    def _restore(self, trial_id: str, checkpoint: CheckpointRef) -> None:
        """Queue the trial's restore from `checkpoint`."""

    @abc.abstractmethod
    def train(self, trial_id: str, until: Horizon | None = None) -> None:
        """Queue the trial's next training (see `Executor.train`)."""

    def _begin(
        self,
        trial_id: str,
        assign: Callable[[], object],
        restore: CheckpointRef | None,
        until: Horizon | None,
    ) -> None:
        """Queue a trial's start on the worker it was given, in the order
        every executor keeps: the assignment (`assign` queues it), the
        restore if there is one, then the first training. A release left
        pending from the trial's last run is forgotten: the worker is its."""
        self._releasing.discard(trial_id)
        assign()
        if restore is not None:
            self._restore(trial_id, restore)
        self.train(trial_id, until)

    def _free_if_released(self, trial_id: str) -> None:
        """Call after each completion: a trial released while operations
        were in flight gives its worker back when the last one is done."""
        if trial_id in self._releasing and not self._ops.busy(trial_id):
            self._free(trial_id, reusable=True)


class HostCalls(QueuedWorkers):
    """What an executor that queues calls to a `TrialHost` in a worker (the
    in-process executor's threads, the Ray executor's actors) does the same
    way: each operation is one call of the host's method of the same
    purpose, queued behind the trial's earlier ones (`_call`), and the
    completions are gathered, turned into events and the workers of
    failed or stuck trials given up here. An executor supplies how a call
    is sent (`_call`), how its outcome is read (`_outcome`), how to wait
    for the first of some calls (`_ready`) and for nothing (`_wait_unqueued`), and
    where its workers come from and go (`start`, `_free`)."""

    _memory: dict[str, object]  # memory checkpoints, by their path
    _memory_keys: Iterator[int]
    _grace: StopGrace
    _GIVEN_UP: str
    """What giving up a stuck trial's worker does to it, for the warning."""

    @abc.abstractmethod
    def _outcome(self, handle: Any) -> tuple[object, str | None]:
        """A completed call's (value, None), or (None, the error) when it
        raised or its worker died."""

    @abc.abstractmethod
    def _ready(self, handles: list[Any], timeout: float) -> list[Any]:
        """The completed ones of `handles` (at least one if any completes
        within `timeout` seconds; none after that)."""

    @abc.abstractmethod
    def _wait_unqueued(self, timeout: float) -> None:
        """Nothing is queued: wait out the poll (a wait on no call returns
        at once, and the loop would spin logging a Tick per turn)."""

    def _tend(self, now: float) -> None:
        """Housekeeping before each wait (the Ray executor's releases and
        placements); none by default."""

    def next_events(self, timeout: float) -> list[ExperimentEvent]:
        """The completions that are ready, after up to `timeout` seconds
        waiting for one (less when a stopped trial's grace period runs out
        first: that trial's worker is given up, see `StopGrace`). One wait
        per call: a completion that is no event (an export) gives [] and
        the loop takes a turn."""
        now = time.monotonic()
        self._tend(now)
        stuck, grace_left = self._grace.overdue(self._ops, self._releasing, now)
        events = [e for trial_id in stuck for e in self._give_up(trial_id, self._GIVEN_UP)]
        heads = {pending.handle: trial_id for trial_id, pending in self._ops.heads()}
        if not heads:
            if not stuck:
                self._wait_unqueued(timeout)
            return events
        wait = 0.0 if stuck else min(timeout, grace_left)
        for handle in self._ready(list(heads), wait):
            events.extend(self._complete(heads[handle]))
        return events

    def _complete(self, trial_id: str) -> list[ExperimentEvent]:
        """The events of the trial's completed head operation; a failed
        one loses the worker, and a trial released meanwhile gives it back."""
        pending = self._ops.pop(trial_id)
        value, error = self._outcome(pending.handle)
        if error is not None:
            return [self._lose(trial_id, error)]
        events = self._events(trial_id, pending, value)
        self._free_if_released(trial_id)
        return events

    def _events(self, trial_id: str, pending: Pending[Any], value: object) -> list[ExperimentEvent]:
        """What the core hears of one completed operation (`completion_event`);
        a memory checkpoint is kept until the core forgets it."""
        if pending.operation is Operation.SAVE_TO_MEMORY:
            self._memory[pending.memory_key] = self._kept(pending, value)
        event = completion_event(trial_id, pending, value, time.time())
        return [] if event is None else [event]

    def _kept(self, pending: Pending[Any], value: object) -> object:
        """What is kept of a memory checkpoint: its bytes by default."""
        del pending
        return value

    def forget(self, checkpoint: CheckpointRef) -> None:
        self._memory.pop(checkpoint.path, None)

    def drain(self, timeout: float) -> None:
        """Complete what is queued, for up to `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while self._ops and (left := deadline - time.monotonic()) > 0:
            self.next_events(left)

    def _lose(self, trial_id: str, error: str) -> ExperimentEvent:
        """The trial's worker failed (`error`): its queued operations are
        dropped and the worker is not reused."""
        self._ops.drop(trial_id)
        self._free(trial_id, reusable=False)
        return failure_event(trial_id, error)

    def _give_up(self, trial_id: str, how: str) -> list[ExperimentEvent]:
        """Give up a released trial's worker stuck in the user's code
        (`how` says what was done to it; see `StopGrace`)."""
        dropped = self._ops.drop(trial_id)
        self._free(trial_id, reusable=False, stuck=True)
        return self._grace.given_up(trial_id, dropped, how)

    @abc.abstractmethod
    def _call(
        self, trial_id: str, operation: Operation, method: str, *args: object, **details: object
    ) -> None:
        """Queue `method(*args)` on the trial's host as `operation`."""

    def _restore(self, trial_id: str, checkpoint: CheckpointRef) -> None:
        if checkpoint.storage is CheckpointStorage.MEMORY:
            data = self._memory[checkpoint.path]
            self._call(trial_id, Operation.RESTORE, "restore_from_bytes", data)
        else:
            self._call(trial_id, Operation.RESTORE, "restore", checkpoint.path)

    def save(self, trial_id: str, checkpoint_dir: str, iteration: int, metrics: JsonDict) -> None:
        self._call(
            trial_id, Operation.SAVE, "save", checkpoint_dir, iteration=iteration, metrics=metrics
        )

    def save_to_memory(self, trial_id: str, iteration: int, metrics: JsonDict) -> None:
        self._call(
            trial_id,
            Operation.SAVE_TO_MEMORY,
            "save_to_bytes",
            iteration=iteration,
            metrics=metrics,
            memory_key=f"memory://{trial_id}/{next(self._memory_keys)}",
        )

    def reset(
        self, trial_id: str, config: JsonDict, context: TrialContext, restore: CheckpointRef | None
    ) -> None:
        self._call(trial_id, Operation.RESET, "reset", config, context)
        if restore is not None:
            self._restore(trial_id, restore)

    def export(self, trial_id: str, formats: list[str], export_dir: str) -> None:
        self._call(trial_id, Operation.EXPORT, "export", formats, export_dir)
