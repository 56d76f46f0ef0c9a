"""File writes in submission order, either at once or on one background thread.

Creating a file costs from tens of microseconds to half a millisecond on
this machine's journaling file system, depending on what else writes, and
a trial makes four as it starts (params.json, result.json, progress.csv, a
TensorBoard file): on a busy disk most of the driver's own time for a
trial that reports once. (The trial's directory is made at once: user code
opens files in it.) None of it decides anything, and the event log,
written by the loop itself, records every result first, so the experiment
storage hands these writes to one thread (`background=True`) and the loop
goes back to the workers; the kernel does the writes while the loop waits
on Ray. A resume rebuilds whatever a killed driver had not written yet
from the log (`shell.resume`).

The rules callers rely on:
- jobs run one at a time in the order they were submitted, so a file's
  lines keep their order;
- `drain()` returns once every job submitted before it has run: call it
  before reading or deleting what a job may still be writing;
- a job that raises on the background thread is logged (once per
  exception type and job kind) and the next job runs: nobody is left to
  receive the error, and a result file that cannot be written must not
  stop the experiment. Inline (`background=False`, what tests and
  readers use), the error propagates to the caller as a plain call would;
- `close()` drains and ends the thread; jobs submitted after it run at
  once, inline (a closed storage still answers, and no thread outlives it);
- `settle` (optional) runs whenever the queue has run dry: on the thread
  after a job when none is waiting, before `drain()` returns and before the
  thread ends; inline, after every job. So jobs may hold their writes back
  and hand them to the OS together (`storage._Appender`: one write per
  file per round of the loop, not one per result), and whoever drains
  still finds every file whole. A `settle` that raises is logged like a
  job (inline, it reaches the caller).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)

Job = Callable[[], None]


class FileQueue:
    """See the module docstring."""

    def __init__(self, *, background: bool, settle: Job | None = None) -> None:
        self._background = background
        self._settle = settle
        # SimpleQueue: a put is a fraction of a microsecond (Queue's lock and
        # condition cost more than formatting the result line).
        self._jobs: queue.SimpleQueue[tuple[str, Job] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._reported: set[tuple[str, type[BaseException]]] = set()

    def submit(self, kind: str, job: Job) -> None:
        """Run `job` (a write of `kind`, e.g. "result.json") now or on the thread."""
        if not self._background:
            try:
                job()
            finally:
                if self._settle is not None:
                    self._settle()
            return
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._work, name="tunecore-file-writer", daemon=True
            )
            self._thread.start()
        self._jobs.put((kind, job))

    def drain(self) -> None:
        """Wait until every job submitted so far has run."""
        if self._thread is not None:
            done = threading.Event()

            def settle_then_signal() -> None:
                self._settled()
                done.set()

            self._jobs.put(("drain", settle_then_signal))
            done.wait()

    def close(self) -> None:
        """Run what is queued and end the thread; later jobs run inline."""
        self._background = False
        thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join()

    def _work(self) -> None:
        while (item := self._jobs.get()) is not None:
            kind, job = item
            try:
                job()
            except Exception as error:
                self._report(kind, error)
            if self._jobs.empty():
                self._settled()
        self._settled()

    def _settled(self) -> None:
        """Run `settle` on the thread, its errors logged as a job's."""
        if self._settle is None:
            return
        try:
            self._settle()
        except Exception as error:
            self._report("held writes", error)

    def _report(self, kind: str, error: Exception) -> None:
        key = (kind, type(error))
        if key in self._reported:
            logger.debug("Writing %s failed again: %s", kind, error)
            return
        self._reported.add(key)
        logger.error(
            "Writing %s failed (further %s errors for it are not shown); the event log "
            "still records everything and a resume rewrites the file from it",
            kind,
            type(error).__name__,
            exc_info=error,
        )
