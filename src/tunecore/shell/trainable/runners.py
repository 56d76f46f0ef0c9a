"""Threads that run training functions, each started before it is needed.

A function trainable runs the user's function in a thread of its own
(`function.py`), because the function blocks in `report()` while the
worker's own thread answers the driver. Starting that thread as the trial
starts puts a wait on the path of every trial of a worker: `Thread.start`
returns only once the new thread runs, which on a machine whose cores are
busy with the trials is a wait for the scheduler. So a thread is started
ahead, while the worker has nothing else to do: by the thread of the run
before, once its call has returned, and then that one ends.

Each call still runs in a thread that has run nothing before, as a thread
started for it would: thread-local state a function leaves behind (a C
extension's per-thread mode, `threading.local`) never reaches the next
trial's function, as in Ray Tune, which starts a thread per trial.

What callers rely on (`start`):

- `start(call, name)` runs `call()` in a thread of its own, that has run
  nothing else, named `name`, and returns at once. The returned
  `Run.finished` is set once `call` has returned; by then the thread no
  longer has `name`, and it ends soon after.
- `call` should not raise (a `TrialSession.run` posts every outcome as a
  message); if it does, the error is logged.
- At most `IDLE_KEPT` started threads wait for a call, each for at most
  `IDLE_S` seconds, so a process that has stopped running trials soon has
  none; a forked child starts with none (its parent's threads are not in
  it).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

IDLE_KEPT = 16
"""Threads kept waiting for a call, enough for the trials the in-process
executor runs at once on a large machine; a Ray worker needs one."""
IDLE_S = 30.0
IDLE_NAME = "tunecore-function-runner"


@dataclass(frozen=True, slots=True)
class Run:
    """One call handed to a runner thread."""

    call: Callable[[], object]
    name: str
    finished: threading.Event = field(default_factory=threading.Event)


class _Runner:
    """A daemon thread that runs one call put on its queue, then ends."""

    def __init__(self, pool: _Pool) -> None:
        self._pool = pool
        self.runs: queue.SimpleQueue[Run] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=IDLE_NAME, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                run = self.runs.get(timeout=IDLE_S)
            except queue.Empty:
                if self._pool.retire(self):
                    return
                continue  # taken meanwhile: its run is on the way
            break
        thread = threading.current_thread()
        thread.name = run.name
        try:
            run.call()
        except BaseException:
            logger.exception("A training function's runner caught what its call raised")
        finally:
            thread.name = IDLE_NAME
            run.finished.set()
        self._pool.replenish()


class _Pool:
    """The runners of this process started ahead, waiting for a call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Runner] = []
        self._starting = 0  # runners being started for `_idle`

    def take(self) -> _Runner:
        """A runner waiting for a call; one started now if none is."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._started()

    def replenish(self) -> None:
        """Start a runner for the next call, unless enough are waiting."""
        with self._lock:
            if len(self._idle) + self._starting >= IDLE_KEPT:
                return
            self._starting += 1
        runner = None
        try:
            runner = self._started()
        finally:
            with self._lock:
                self._starting -= 1
                if runner is not None:
                    self._idle.append(runner)

    def retire(self, runner: _Runner) -> bool:
        """Let a runner idle too long end; False if it was just taken."""
        with self._lock:
            if runner in self._idle:
                self._idle.remove(runner)
                return True
            return False

    def forget(self) -> None:
        """In a forked child: the parent's threads do not exist here."""
        self._lock = threading.Lock()
        self._idle = []
        self._starting = 0

    def _started(self) -> _Runner:
        runner = _Runner(self)
        runner.thread.start()
        return runner


_POOL = _Pool()
os.register_at_fork(after_in_child=_POOL.forget)


def start(call: Callable[[], object], name: str) -> Run:
    """Run `call()` in a thread of its own (see the module doc)."""
    run = Run(call, name)
    _POOL.take().runs.put(run)
    return run
