"""File writes in submission order, either at once or on one background thread.

Creating a file costs from tens of microseconds to half a millisecond on
this machine's journaling file system, depending on what else writes, and
a trial makes four as it starts (params.json, result.json, progress.csv, a
TensorBoard file), and its directory before them: on a busy disk most of
the driver's own time for a trial that reports once. (With callbacks of
the user's, which may open files in it, the directory is made at once.)
None of it decides anything, and the event log,
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
- a caller waits (in `submit`, `submit_all`, at the end of `held()` or
  in `drain()`) while `max_behind` items are queued and not yet run, so
  what the jobs hold stays bounded: a job must never wait for something
  its caller does after submitting it;
- if the writer thread ends on something other than an `Exception` (a
  job or `settle` raising `SystemExit`, `KeyboardInterrupt` or another
  `BaseException`), every caller waiting for it (for room in `_put`, in
  `drain()`) and every later `submit`, `submit_all` or `drain` raises
  `FileWriterStoppedError` naming what ended it, instead of waiting
  forever for a thread that is gone. The jobs still queued are dropped
  (the event log records everything they would have written, and a
  resume rewrites the files from it); `close()` then logs it and returns;
- `close()` drains and ends the thread; jobs submitted after it run at
  once, inline (a closed storage still answers, and no thread outlives it);
- inside `held()` (the loop's round of events), background jobs are kept
  on the caller's thread and queued together when the block ends, or at
  the next `drain()` or `close()`, whichever comes first: the order above
  is kept, and the writer is woken once a round instead of once a job
  (each wake-up is a thread switch, and the writer then takes turns at
  the GIL with a loop that still has results to step: more than half of
  what handing a result to the loggers cost the loop). Nothing is queued
  later than the rest of the block takes, which decides nothing the files
  show;
- `submit_batched` inside `held()` merges a call into the last one when
  their keys are equal and nothing was submitted in between: the jobs
  queued by the first call run once, over every item, in that first
  call's place in the order, which is where each item's writes would
  have run anyway. Jobs reach the writer only at the hand-over, so no
  item joins jobs the writer may be running;
- one thread calls it (the storage's owner, the loop): the writer thread
  only runs what was queued;
- `settle` (optional) runs whenever the queue has run dry: on the thread
  after a job when none is waiting, before `drain()` returns and before the
  thread ends; inline, after every job. So jobs may hold their writes back
  and hand them to the OS together (`storage._Appender`: one write per
  file per round of the loop, not one per result), and whoever drains
  still finds every file whole. A `settle` that raises is logged like a
  job (inline, it reaches the caller).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

Job = Callable[[], None]
MAX_BEHIND = 8
"""How many items (a round's jobs each, or a `submit`'s) the writer may
be behind before the caller waits (`FileQueue._put`)."""
Item = TypeVar("Item")


class FileWriterStoppedError(RuntimeError):
    """The background writer of trial files ended on a `BaseException`:
    nothing it was still to write will be written by it (see the module
    docstring)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(
            "the background writer of trial files (thread tunecore-file-writer) ended on "
            f"{type(cause).__name__}: {cause!r}; the trial files it had not written yet "
            "(result.json, progress.csv, ...) are not written. The event log records "
            "every result: resume the experiment and the files are rewritten from it"
        )
        self.cause = cause


class FileQueue:
    """See the module docstring."""

    def __init__(
        self, *, background: bool, settle: Job | None = None, max_behind: int | None = None
    ) -> None:
        self._background = background
        # Items queued and not yet run, at most `max_behind` (default
        # `MAX_BEHIND`): see `_put`.
        self._room = threading.Semaphore(MAX_BEHIND if max_behind is None else max_behind)
        self._settle = settle
        # SimpleQueue: a put is a fraction of a microsecond (Queue's lock and
        # condition cost more than formatting the result line).
        self._jobs: queue.SimpleQueue[list[tuple[str, Job]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._held: list[tuple[str, Job]] | None = None  # inside `held()`
        # The items of the last `submit_batched` while its jobs are the
        # last ones held (so more items may still join them), and its key.
        self._batch: tuple[Hashable, list[Any]] | None = None
        self._reported: set[tuple[str, type[BaseException]]] = set()
        # What ended the writer thread, if something other than `close()`
        # did; set before anyone waiting for it is woken (`_stopped`).
        self._stopped_by: BaseException | None = None
        # The events of `drain()` calls waiting for the writer, so that a
        # writer that dies wakes them.
        self._draining: list[threading.Event] = []

    def submit(self, kind: str, job: Job) -> None:
        """Run `job` (a write of `kind`, e.g. "result.json") now or on the thread."""
        if not self._background:
            try:
                job()
            finally:
                if self._settle is not None:
                    self._settle()
            return
        self._queue([(kind, job)])

    def submit_all(self, jobs: list[tuple[str, Job]]) -> None:
        """Run `jobs` (each a `submit`'s kind and job) in order, queued as
        one item: one hand-over for several files. Each job fails on its
        own; inline, the first error reaches the caller once all have run."""
        if not self._background:
            failed: Exception | None = None
            for kind, job in jobs:
                try:
                    self.submit(kind, job)
                except Exception as error:
                    failed = failed or error
            if failed is not None:
                raise failed
            return
        self._queue(jobs)

    def submit_batched(
        self,
        key: Hashable,
        item: Item,
        jobs_for: Callable[[list[Item]], list[tuple[str, Job]]],
    ) -> None:
        """`submit_all(jobs_for([item]))`, except that inside `held()` a
        call whose `key` equals the last call's, with nothing submitted
        in between, adds `item` to that call's list instead: its jobs,
        still queued last, run once over every item that joined them.
        The order of the files' writes is the same; the loop pays a list
        append per item instead of building and queueing jobs, and the
        writer runs each job once per round instead of once per item.
        Equal keys must mean jobs that treat an item alike (the storage's
        key is the trial directory and the files asked for), and each
        job must write every item of the list, which it may read only
        when it runs."""
        batch = self._batch
        if batch is not None and batch[0] == key:
            batch[1].append(item)
            return
        items = [item]
        self.submit_all(jobs_for(items))
        if self._background and self._held is not None:
            self._batch = (key, items)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Queue the background jobs submitted in the block together when
        it ends (see the module docstring); a block inside another is part
        of the outer one."""
        if self._held is not None:
            yield
            return
        self._held = []
        try:
            yield
        finally:
            self._hand_over()
            self._held = None

    def _hand_over(self) -> None:
        """Queue the jobs held so far, as one item."""
        self._batch = None  # the writer may run its jobs from now on
        if self._held:
            self._put(self._held)
            self._held = []

    def _queue(self, jobs: list[tuple[str, Job]]) -> None:
        """Queue `jobs` for the thread as one item (started on first use),
        or keep them with the held ones inside `held()`."""
        self._batch = None  # these jobs come after the batch's
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._work, name="tunecore-file-writer", daemon=True
            )
            self._thread.start()
        if self._held is not None:
            self._held.extend(jobs)
        elif jobs:
            self._put(jobs)

    def drain(self) -> None:
        """Wait until every job submitted so far has run; raises
        `FileWriterStoppedError` if the writer ended before they did."""
        self._hand_over()
        if self._thread is not None:
            done, ran = threading.Event(), threading.Event()

            def settle_then_signal() -> None:
                self._settled()
                ran.set()
                done.set()

            self._draining.append(done)
            try:
                self._put([("drain", settle_then_signal)])
                done.wait()
            finally:
                self._draining.remove(done)
            if not ran.is_set():
                self._raise_if_stopped()

    def close(self) -> None:
        """Run what is queued and end the thread; later jobs run inline."""
        self._hand_over()
        self._background = False
        thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join()
        if self._stopped_by is not None:
            logger.error("%s", FileWriterStoppedError(self._stopped_by))

    def _put(self, item: list[tuple[str, Job]]) -> None:
        """Queue `item` for the thread, first waiting while `max_behind`
        items are queued and not yet run. The queue's jobs hold what they
        write (results, their lines, paths): a writer left behind by a
        loop that steps faster than the disk takes them (on a busy machine)
        held thousands of trials' at once, and the memory the heap grew to
        for them stayed with the driver, 0.5-1 KB per finished trial at
        10,000 trials (issue 41). The loop waits only once the writer is
        that far behind, when it has that much work queued.

        A writer that died wakes every waiter (`_stopped`), which then
        raises instead of queueing for a thread that is gone."""
        self._raise_if_stopped()
        self._room.acquire()
        if self._stopped_by is not None:
            self._room.release()  # the next waiter wakes and raises too
            raise FileWriterStoppedError(self._stopped_by)
        self._jobs.put(item)

    def _raise_if_stopped(self) -> None:
        if self._stopped_by is not None:
            raise FileWriterStoppedError(self._stopped_by)

    def _work(self) -> None:
        try:
            while (item := self._jobs.get()) is not None:
                self._run(item)
                del item  # nothing of it kept while the thread waits for the next
                self._room.release()
                if self._jobs.empty():
                    self._settled()
            self._settled()
        except BaseException as error:  # the thread ends here: say so, and why
            logger.error("%s", FileWriterStoppedError(error), exc_info=error)
            self._stopped(error)

    def _stopped(self, error: BaseException) -> None:
        """The writer is ending on `error`: record it, then wake whoever
        waits for it. Set first, so that a caller woken, or one that
        queues its drain after the events were set, finds it; the queued
        items are dropped, since no thread will run them."""
        self._stopped_by = error
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self._room.release()
        # A caller waiting for room wakes, and passes the room on as it
        # raises (`_put`).
        self._room.release()
        for done in list(self._draining):
            done.set()

    def _run(self, item: list[tuple[str, Job]]) -> None:
        for kind, job in item:
            try:
                job()
            except Exception as error:
                self._report(kind, error)

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
