"""The in-process executor: the same semantics as `RayExecutor`, in threads.

Every trial gets a worker thread that runs its operations one after the
other (so per-trial order holds by construction) and posts each completion
to one queue the loop reads. No Ray, no processes: breakpoints work inside
trainables, and tests run fast. Resources are whatever the caller says the
"cluster" has; nothing enforces them but the core's accounting.

A thread cannot be killed. A trial stopped while its trainable is stuck in
the user's code (it never comes back to `report()`) is abandoned after the
grace period (`StopGrace`): the experiment goes on and ends without it,
and its daemon thread runs on until the function returns or the process
exits (its release, queued, runs if it ever does; until then a
`log_to_file` redirection and a `chdir` it made stay in place). Use the
Ray executor, which kills the worker, for trainables that may hang.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import queue
import threading
import time
import traceback
from collections.abc import Callable, Sequence

from tunecore.model import CheckpointRef, Horizon, JsonDict, Resources
from tunecore.shell.executors.base import (
    ChainedStart,
    Operation,
    OrderedOperations,
    Pending,
    StopGrace,
)
from tunecore.shell.executors.host import TrainableFactory, TrialHost
from tunecore.shell.executors.queued import HostCalls
from tunecore.shell.trainable.worker import TrialContext

_Work = Callable[[TrialHost], object]
_SHUTDOWN_JOIN_S = 10.0  # in all: a trainable stuck in user code must not hang the exit


class _Outcome:
    """What one piece of submitted work came to. The worker sets `value` or
    `error`, then `done`; the loop reads them only once `done` is set. (A
    `concurrent.futures.Future` would do, with a lock and a condition per
    operation that nobody waits on: the loop waits on the done queue.)"""

    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = False
        self.value: object = None
        self.error: str | None = None  # the traceback, when the work raised


class _Worker:
    """A thread with a host, running submitted work in order."""

    def __init__(self, host: TrialHost, done: queue.SimpleQueue[tuple[str, _Outcome]]) -> None:
        self.host = host
        self.trial_id = ""
        self._inbox: queue.SimpleQueue[tuple[_Work, _Outcome] | None] = queue.SimpleQueue()
        self._done = done
        self._thread = threading.Thread(target=self._run, name="tunecore-worker", daemon=True)
        self._thread.start()

    def submit(self, work: _Work) -> _Outcome:
        outcome = _Outcome()
        self._inbox.put((work, outcome))
        return outcome

    def _run(self) -> None:
        while (item := self._inbox.get()) is not None:
            work, outcome = item
            try:
                outcome.value = work(self.host)
            except BaseException:
                outcome.error = traceback.format_exc()
            outcome.done = True
            self._done.put((self.trial_id, outcome))

    def close(self) -> None:
        self._inbox.put(None)

    def join(self, timeout: float) -> None:
        """Wait for the work already submitted (a release gives back the
        process's directory and output streams) to finish."""
        self._thread.join(timeout)


_ABANDONED = "abandoned (a thread cannot be killed; it runs on as a daemon)"
"""What becomes of a stuck trial's thread: it gets its release and its end
queued, and is never reused."""


class InProcessExecutor(HostCalls):
    """See the module docstring."""

    _GIVEN_UP = _ABANDONED

    def __init__(self, factory: TrainableFactory, *, resources: Resources) -> None:
        self._factory = factory
        self._total = resources
        self._ops: OrderedOperations[_Outcome] = OrderedOperations()
        self._done: queue.SimpleQueue[tuple[str, _Outcome]] = queue.SimpleQueue()
        self._workers: dict[str, _Worker] = {}
        self._idle: list[_Worker] = []
        self._releasing: set[str] = set()
        self._grace = StopGrace()
        self._memory: dict[str, object] = {}
        self._memory_keys = itertools.count()

    def cluster_resources(self) -> Resources:
        return self._total

    def _issue(self, trial_id: str, operation: Operation, work: _Work, **details: object) -> None:
        worker = self._workers[trial_id]
        self._ops.push(trial_id, Pending(operation, worker.submit(work), **details))  # type: ignore[arg-type]

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
        """Chained trials (`then`) are not run ahead: each starts as usual."""
        worker = self._idle.pop() if self._idle else _Worker(TrialHost(self._factory), self._done)
        worker.trial_id = trial_id
        self._workers[trial_id] = worker
        assign = functools.partial(
            self._issue, trial_id, Operation.ASSIGN, lambda h: h.assign(config, context)
        )
        self._begin(trial_id, assign, restore, context.until)

    def _call(
        self, trial_id: str, operation: Operation, method: str, *args: object, **details: object
    ) -> None:
        self._issue(trial_id, operation, lambda h: getattr(h, method)(*args), **details)

    def _holds(self, trial_id: str) -> bool:
        return trial_id in self._workers

    def train(self, trial_id: str, until: Horizon | None = None) -> None:
        """One result per call (threads share the driver's process: the
        round trip the run-ahead saves is cheap here)."""
        self._issue(trial_id, Operation.TRAIN, lambda h: h.train())

    def _free(self, trial_id: str, *, reusable: bool, stuck: bool = False) -> None:
        # A stuck thread cannot be ended: its release runs if its call returns.
        self._releasing.discard(trial_id)
        worker = self._workers.pop(trial_id, None)
        if worker is None:
            return
        worker.submit(lambda h: h.release())
        if reusable:
            self._idle.append(worker)
        else:
            worker.close()

    def _outcome(self, handle: _Outcome) -> tuple[object, str | None]:
        return handle.value, handle.error

    def _ready(self, handles: list[_Outcome], timeout: float) -> list[_Outcome]:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(queue.Empty):
                while True:  # the queue only wakes the wait: its items are spent
                    self._done.get_nowait()
            ready = [handle for handle in handles if handle.done]
            remaining = deadline - time.monotonic()
            if ready or remaining <= 0:
                return ready
            try:
                self._done.get(timeout=remaining)  # wakes us when any work finishes
            except queue.Empty:
                return []

    def _wait_unqueued(self, timeout: float) -> None:
        """A worker finishing a release may end the wait early."""
        with contextlib.suppress(queue.Empty):
            self._done.get(timeout=timeout)

    def shutdown(self) -> None:
        workers = [*self._workers.values(), *self._idle]
        for worker in workers:
            worker.submit(lambda h: h.release())
            worker.close()
        deadline = time.monotonic() + _SHUTDOWN_JOIN_S
        for worker in workers:
            worker.join(max(deadline - time.monotonic(), 0.0))
        self._workers.clear()
        self._idle.clear()
        self._memory.clear()
        self._ops = OrderedOperations()


def this_machine() -> Resources:
    """The in-process executor's cluster: this machine's CPUs and memory.
    There is no object store: a trial's `object_store_memory` is taken from
    the same memory."""
    try:
        memory = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # not a POSIX system
        memory = 0.0
    return Resources(cpu=float(os.cpu_count() or 1), memory=memory, object_store_memory=memory)
