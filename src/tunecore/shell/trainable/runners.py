"""Threads that run training functions, kept from one run to the next.

A function trainable runs the user's function in a thread of its own
(`function.py`), because the function blocks in `report()` while the
worker's own thread answers the driver. A new thread per trial costs its
creation and a hand-over the starting thread waits for (`Thread.start`
returns only once the new thread runs), and ending the trial costs a join:
on a machine whose cores are busy with the trials, each is a wait for the
scheduler, on the path of every trial of a worker. A worker runs its
trials one after another, so the thread that ran one trial runs the next.

What callers rely on (`start`):

- `start(call, name)` runs `call()` in a thread that is not the caller's,
  named `name` while it runs, in a fresh `contextvars.Context` (what a new
  thread starts with: a context variable one run sets is not seen by the
  next), and returns at once. The returned `Run.finished` is set once
  `call` has returned; by then the thread no longer has `name`.
- A thread is given a new call only after its last one returned: a
  function that never unwinds keeps its thread to itself, and the next run
  gets another.
- `call` should not raise (a `TrialSession.run` posts every outcome as a
  message); if it does, the error is logged and the thread serves on.
- At most `IDLE_KEPT` threads wait for work, each for at most `IDLE_S`
  seconds, so a process that has stopped running trials soon has none; a
  forked child starts with none (its parent's threads are not in it).
"""

from __future__ import annotations

import contextvars
import logging
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

IDLE_KEPT = 16
"""Threads kept waiting for work, enough for the trials the in-process
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
    """A daemon thread that runs the calls put on its queue, one at a time."""

    def __init__(self, pool: _Pool) -> None:
        self._pool = pool
        self.runs: queue.SimpleQueue[Run] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=IDLE_NAME, daemon=True)

    def _serve(self) -> None:
        thread = threading.current_thread()
        while True:
            try:
                run = self.runs.get(timeout=IDLE_S)
            except queue.Empty:
                if self._pool.retire(self):
                    return
                continue  # taken meanwhile: its run is on the way
            thread.name = run.name
            try:
                contextvars.Context().run(run.call)
            except BaseException:
                logger.exception("A training function's runner caught what its call raised")
            finally:
                thread.name = IDLE_NAME
                kept = self._pool.give_back(self)
                run.finished.set()
            if not kept:
                return


class _Pool:
    """The idle runners of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Runner] = []

    def take(self) -> _Runner:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        runner = _Runner(self)
        runner.thread.start()
        return runner

    def give_back(self, runner: _Runner) -> bool:
        """Keep an idle runner; False when enough are kept (it should end)."""
        with self._lock:
            if len(self._idle) >= IDLE_KEPT:
                return False
            self._idle.append(runner)
            return True

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


_POOL = _Pool()
os.register_at_fork(after_in_child=_POOL.forget)


def start(call: Callable[[], object], name: str) -> Run:
    """Run `call()` in a runner thread named `name` (see the module doc)."""
    run = Run(call, name)
    _POOL.take().runs.put(run)
    return run
