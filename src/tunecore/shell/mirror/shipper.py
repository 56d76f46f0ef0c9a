"""Copying a mirrored experiment's state from the driver's staging directory
to its store, in the background, with a bounded lag (the layout, and
reading it back: `shell.mirror.stored_state`).

The driver of a mirrored experiment (a URI `storage_path`) writes its files
where it always does, in a local staging directory, and a `StateShipper`
thread copies them to the experiment's `Store` every `lag_s` seconds. The
loop never waits on storage except at `close()`. Checkpoints are not the
shipper's: workers upload them themselves.

What goes where, and when (the rules themselves, pure, are in
`shell.mirror.shipping_rules`):

- **The event log** travels in increments, never whole: each tick uploads
  the bytes `[shipped, log_size())` of `events.log` as one object
  `events/seg_<start:016d>_<end:016d>_g<lease:08d>` (no `_g` part without
  a lease). `log_size()` is always a record boundary (the loop updates it
  after each whole append), so every object
  holds whole CRC frames and the stored log, the chain of objects from byte
  0 (`stored_log`), is always a prefix of the local log at a record
  boundary: a driver killed between two ticks loses at most `lag_s` of
  events from storage, and a reader (`fetch_state` + `read_log`) sees a
  valid, shorter log. No byte is uploaded twice, except by compaction:
  `COMPACT_COUNT` consecutive objects of one generation, each under
  `COMPACT_BELOW` bytes, are uploaded again as one object covering their
  range (of the next generation), and only then deleted; a reader prefers
  the object covering the longest range from each start, so it never sees
  a gap. A byte is thus re-uploaded once per generation, a handful of times
  at most, and the chain stays a few dozen objects long.
- **Snapshots** (`snapshots/snapshot_<records>.msgpack`) are uploaded only
  once the log bytes that existed when the shipper first saw them are in
  storage: a stored snapshot never covers more of the log than storage
  holds (the `covered` check `read_log` does holds there too). Stored
  snapshots the driver no longer keeps are deleted.
- **Trial files** (everything in a trial directory except `checkpoint_*`,
  `exploit_*` and `worker_checkpoints` directories, hidden and temporary
  files): `params.json` and `error.txt` whenever they change; any other file
  (`result.json`, `progress.csv`, a logger's output) once it has stopped
  changing between two ticks (a paused or ended trial), and while it keeps
  growing, after `GROW_WAIT_S` if it grew by `GROW_RATIO` since its last
  upload, else after `STALE_S`: whole re-uploads of a growing file cost
  a bounded multiple of its size, never its size squared. The files due
  in a tick go up `UPLOAD_THREADS` at a time.
- Never `events.log` as a file, `driver.lock`, the inbox, the staging
  directory's own hidden files.

`after_shipped(action)` runs `action` in the shipper thread once the log
bytes written so far are in storage: retention deletes a checkpoint only
after storage's log records why. Failures never reach the driver: a storage
error is retried next tick (a warning the first time each kind fails, and
a note when it recovers), any other exception is logged with its traceback
and the thread goes on. `close()` flushes everything whatever the throttle,
retrying failures until its timeout.

A shipper starting on a store that already holds a log (a resume) keeps the
longest stored chain that is a prefix of the local log, deletes every other
segment object, and ships on from there. It re-uploads snapshots and trial
files once, since it cannot know which stored copies are current, but for
the trial files fetched from storage and unchanged since
(`fetched_files`): among them are the workers' outputs, which the workers
store themselves, and the fetched copy would replace what they stored since.

With a lease, the shipper fences off earlier drivers (`shell.mirror.stored_state`):
before it writes anything else it stores its fence at the end of the chain
it kept, and every log object and snapshot it stores carries its lease
generation in its name. Deletions that cannot be undone (actions waiting
for the log, such as taken requests and dropped checkpoints) wait for a
lease check made after their log is stored, and each batch of trial files
for one made just before it (`LeaseKeeper.check`).

Why one module of over 400 lines: `StateShipper` is one thread's state
machine (what it tracked, what is due, the lag and the final flush): its
rules are about each other and are tested together.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import msgspec

from tunecore.shell.eventlog import LOG_FILE
from tunecore.shell.journal import SNAPSHOT_DIR, SnapshotStore
from tunecore.shell.mirror.claims import SEGMENT_DIR, fence_name
from tunecore.shell.mirror.fetched_files import Signature, fetched_signatures, file_signature
from tunecore.shell.mirror.lease import LeaseKeeper, LeaseLostError, Renewer, still_held
from tunecore.shell.mirror.request_fetcher import RequestFetcher
from tunecore.shell.mirror.shipping_rules import (
    COMPACT_COUNT,
    Tracked,
    next_merge,
    upload_due,
)
from tunecore.shell.mirror.stored_state import (
    NOT_TRIAL_FILES,
    Segment,
    is_plain_name,
    is_trial_dir,
    stored_objects,
    stored_snapshot_name,
)
from tunecore.shell.storage.own_files import NotRegularFileError, open_fd
from tunecore.shell.storage.store import Store

logger = logging.getLogger(__name__)

UPLOAD_THREADS = 8


_T = TypeVar("_T")


class ShipStats(msgspec.Struct, kw_only=True):
    """What shipping has cost so far (read by the benchmark)."""

    bytes: int = 0
    """Bytes uploaded, compaction and re-uploads of trial files included."""
    objects: int = 0
    """Objects written."""
    deletes: int = 0
    """Objects deleted (compacted log segments, dropped snapshots)."""
    seconds: float = 0.0
    """Wall time spent in storage calls."""
    log_bytes: int = 0
    """Bytes of the event log shipped (each once)."""
    compacted_bytes: int = 0
    """Bytes of the log uploaded again by compaction."""
    failures: int = 0
    """Storage calls that failed (each retried on a later tick)."""


def _read_local(path: Path, beneath: Path) -> tuple[Signature, bytes] | None:
    """A regular file's signature and bytes (read up to its size then), or
    None if it is gone. A file that is no regular file, or is reached
    through a directory that became a link since it was listed (someone
    else's files, uploaded under the trial's name), raises
    `NotRegularFileError`: it is never read."""
    try:
        fd = open_fd(path, beneath=beneath)
    except NotRegularFileError:
        raise
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        data = os.pread(fd, info.st_size, 0)
    finally:
        os.close(fd)
    return (len(data), info.st_mtime_ns, info.st_ino), data


class StateShipper:
    """Ships a staging directory's state to `store`; see the module docstring.

    `log_size()` is the local log's length at its last whole record (called
    from the shipper thread); `clock` is what the trial-file throttle
    measures time with. `tick()` is one round of shipping alone (tests call
    it directly); `round()`, which the thread runs every `lag_s` seconds,
    first renews the lease (`renewer`, with a `lease`: `shell.mirror.lease`)
    and fetches the requests posted to the storage (`requests`), then ticks.
    The renewer's thread also renews the lease every `lag_s` whatever a
    round costs; once another driver holds it, nothing more is shipped
    (`lost`) and `on_lost` is told."""

    def __init__(
        self,
        store: Store,
        local_dir: Path,
        log_size: Callable[[], int],
        *,
        lag_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        lease: LeaseKeeper | None = None,
        on_lost: Callable[[LeaseLostError], None] | None = None,
    ) -> None:
        if not lag_s > 0:
            raise ValueError(f"lag_s must be a positive number of seconds, got {lag_s!r}")
        self.store = store
        self.local_dir = Path(local_dir)
        self.stats = ShipStats()
        self._log_size = log_size
        self._lease = lease
        self.on_lost = on_lost
        self.lost: LeaseLostError | None = None
        """Set once another driver took the experiment over: nothing more
        is written to the storage."""
        self.renewer = None if lease is None else Renewer(lease, lag_s, self._lose)
        """Renews the lease: in its own thread once started, and at the
        start of every `round()`."""
        self.requests = RequestFetcher(store, self.local_dir)
        """Fetches the requests posted to the storage, once a `round()`."""
        self._lag_s = lag_s
        self._clock = clock
        self._tick_lock = threading.Lock()
        self._actions_lock = threading.Lock()
        self._actions: list[tuple[int, Callable[[], None]]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._deadline = 0.0
        self._closed = False
        self._failing: set[str] = set()
        # Below: touched by `tick` only (under _tick_lock).
        self._started = False
        self._shipped = 0
        self._chain: list[Segment] = []
        self._doomed: list[Segment] = []  # log objects to delete, retried until gone
        self._snapshots: dict[str, Tracked] = {}
        self._stored_snapshots: set[str] = set()
        self._files: dict[str, Tracked] = {}
        self._fetched = fetched_signatures(self.local_dir)
        self._pool: ThreadPoolExecutor | None = None

    @property
    def shipped(self) -> int:
        """How many bytes of the log storage holds."""
        return self._shipped

    def start(self) -> None:
        """Ship every `lag_s` seconds in a daemon thread until `close()`."""
        if self._thread is not None or self._closed:
            raise RuntimeError("StateShipper.start: already started (or closed)")
        self._thread = threading.Thread(target=self._run, name="tunecore-shipper", daemon=True)
        self._thread.start()
        if self.renewer is not None:
            self.renewer.start()

    def after_shipped(self, action: Callable[[], None]) -> None:
        """Run `action` in the shipper thread once the log bytes written so
        far are in storage (actions run in the order given). Never blocks
        on storage, except after `close()`, when it ships and runs it at
        once (in the caller's thread)."""
        mark = self._log_size()
        with self._actions_lock:
            self._actions.append((mark, action))
        if self._closed:
            self.round(force=True)
            self._release_pool()

    def close(self, timeout: float = 60.0) -> bool:
        """Ship everything, whatever the throttle (retrying failures until
        `timeout` seconds have passed), then stop the thread. Whether all
        of it is in storage; a warning says what is left if not (and a
        second call says False)."""
        if self._closed:
            return False
        self._closed = True
        self._deadline = time.monotonic() + timeout
        if self.renewer is not None:
            self.renewer.close()
        if self._thread is None:
            self._flush()
        else:
            self._stop.set()
            self._thread.join(timeout + 1.0)
            if self._thread.is_alive():  # still shipping: it and its pool go on
                logger.warning(
                    "Storage %s: shipping the experiment state did not finish within %.0f s; "
                    "storage may hold an older state (the staging directory %s has it all)",
                    self.store.uri(),
                    timeout,
                    self.local_dir,
                )
                return False
        self._release_pool()
        left = self._left()
        if self._failing:
            logger.warning(
                "Storage %s: could not ship everything within %.0f s (%s failed; left: %s); "
                "the staging directory %s has it all",
                self.store.uri(),
                timeout,
                ", ".join(sorted(self._failing)),
                left,
                self.local_dir,
            )
        return not (self._failing or left)

    def round(self, *, force: bool = False) -> bool:
        """What the thread runs every `lag_s` seconds: the lease renewed
        before anything is written (beside the renewer thread's own
        schedule: a driver that lost it, frozen past its lapse, stops
        here), the stored requests fetched, then a `tick`. Never raises."""
        with self._tick_lock:
            if self.renewer is not None:
                self._step("renewing the driver's lease", self.renewer.renew_now)
            self._step("fetching requests", self.requests.fetch)
            return self._ship(force)

    def tick(self, *, force: bool = False) -> bool:
        """One round of shipping (`force`: every trial file whatever the
        throttle); True if everything seen is now in storage. Never raises:
        a step that fails is retried next tick."""
        with self._tick_lock:
            return self._ship(force)

    def _ship(self, force: bool) -> bool:
        if self.lost is not None:
            return True  # nothing more is ever shipped
        self._step("reading the stored log", self._start_up)
        self._step("deleting log objects", self._delete_doomed)
        self._step("shipping the event log", self._ship_log)
        self._step("running actions waiting for the log", self._run_actions)
        self._step("shipping snapshots", self._ship_snapshots)
        self._step("shipping trial files", lambda: self._ship_trial_files(force))
        return not self._left()

    def _lose(self, error: LeaseLostError) -> None:
        """Another driver took the experiment over: ship nothing more, and
        tell the driver (once)."""
        with self._actions_lock:
            first = self.lost is None
            self.lost = error
        if first:
            logger.error("%s", error)
            if self.on_lost is not None:
                self.on_lost(error)

    def _release_pool(self) -> None:
        with self._tick_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None

    def _run(self) -> None:
        self.round()  # at once: the log's header, and requests posted while no driver ran
        while not self._stop.wait(self._lag_s):
            self.round()
        self._flush()

    def _flush(self) -> None:
        """Ship everything, retrying failures (with a growing pause) until
        the deadline. Two ticks in a row without a failure are enough even
        if files still change: they shipped what there was."""
        pause, clean = 0.1, 0
        while not self.round(force=True):
            clean = 0 if self._failing else clean + 1
            if clean == 2 or time.monotonic() + pause >= self._deadline:
                return
            if not clean:
                time.sleep(pause)
                pause = min(2 * pause, 2.0)

    def _step(self, what: str, step: Callable[[], object]) -> None:
        """Run one step; a storage failure is warned about once per kind
        until it works again, anything else logged with its traceback."""
        if self.lost is not None:  # lost meanwhile (the renewer's thread)
            return
        try:
            step()
        except OSError as error:
            if what not in self._failing:
                self._failing.add(what)
                logger.warning(
                    "Storage %s: %s failed (%s); retrying every %g s",
                    self.store.uri(),
                    what,
                    error,
                    self._lag_s,
                )
            return
        except Exception:
            logger.exception("Storage %s: %s failed", self.store.uri(), what)
            return
        if what in self._failing:
            self._failing.discard(what)
            logger.info("Storage %s: %s works again", self.store.uri(), what)

    # -- storage calls, counted -----------------------------------------

    def _call(self, method: Callable[..., _T], *args: object) -> _T:
        started = time.perf_counter()
        try:
            return method(*args)
        except Exception:
            self.stats.failures += 1
            raise
        finally:
            self.stats.seconds += time.perf_counter() - started

    def _put(self, rel: str, data: bytes) -> None:
        self._call(self.store.write_bytes, rel, data)
        self.stats.bytes += len(data)
        self.stats.objects += 1

    def _delete(self, rel: str) -> None:
        self._call(self.store.delete_file, rel)
        self.stats.deletes += 1

    # -- the event log --------------------------------------------------

    def _start_up(self) -> None:
        """Once: adopt the longest stored chain that is a prefix of the
        local log, and doom every other log object."""
        if self._started:
            return
        listing = stored_objects(self._call(self.store.list, SEGMENT_DIR))
        limit = self._log_size()
        kept: list[Segment] = []
        for segment in listing.chain():
            if segment.end > limit:
                break
            stored = self._call(self.store.read_bytes, segment.name)
            if stored[: segment.size] != self._read_log(segment.start, segment.end):
                break
            kept.append(segment)
        names = {s.name for s in kept}
        found = [s for group in listing.found.values() for s in group]
        self._doomed = [s for s in found + listing.stale if s.name not in names]
        self._stored_snapshots = set(self._call(self.store.list, SNAPSHOT_DIR))
        self._chain = kept
        self._shipped = kept[-1].end if kept else 0
        if self._lease is not None:  # before anything else this driver writes
            self._put(fence_name(self._lease.generation, self._shipped), b"")
        self._started = True

    def _delete_doomed(self) -> None:
        # The last first: a reader (or a crash) in the middle never meets a
        # gap with objects after it, which reads as damage (`fetch_log`).
        self._doomed.sort(key=lambda segment: -segment.start)
        while self._doomed:
            self._delete(self._doomed[0].name)
            self._doomed.pop(0)

    def _read_log(self, start: int, end: int) -> bytes:
        fd = open_fd(self.local_dir / LOG_FILE)
        try:
            data = os.pread(fd, end - start, start)
        finally:
            os.close(fd)
        if len(data) != end - start:
            raise OSError(
                f"{self.local_dir / LOG_FILE} holds {start + len(data)} bytes, "
                f"the log writer says {end}"
            )
        return data

    def _ship_log(self) -> None:
        # A doomed object from where the chain goes on would outrank the
        # next segment for a reader: it has to be gone first. (Older ones,
        # left by a compaction, are covered by a longer object.)
        if not self._started or any(s.start >= self._shipped for s in self._doomed):
            return
        end = self._log_size()
        if end > self._shipped:
            segment = Segment(self._shipped, end, self._generation)
            data = self._read_log(segment.start, segment.end)
            self._put(segment.name, data)
            self.stats.log_bytes += len(data)
            self._chain.append(segment)
            self._shipped = end
        self._compact()

    def _compact(self) -> None:
        """Merge the newest `COMPACT_COUNT` log objects while they are all
        small and of one generation (a counter in base `COMPACT_COUNT`)."""
        while (merged := next_merge(self._chain, self._generation)) is not None:
            tail = self._chain[-COMPACT_COUNT:]
            data = self._read_log(merged.start, merged.end)
            self._put(merged.name, data)
            self.stats.compacted_bytes += len(data)
            self._chain[-COMPACT_COUNT:] = [merged]
            self._doomed.extend(tail)
            self._delete_doomed()

    @property
    def _generation(self) -> int:
        """The lease generation this driver's objects carry (0: no lease)."""
        return 0 if self._lease is None else self._lease.generation

    def _check_lease(self) -> bool:
        """Whether this driver still holds the lease, read from storage
        now (`LeaseKeeper.check`); if not, it stops (`_lose`)."""
        return self._lease is None or still_held(self._lease.check, self._lose)

    def _run_actions(self) -> None:
        """Run the actions whose log is stored, once a lease check after
        storing it passed: what they delete, a later driver's log records
        as deleted (`LeaseKeeper.check`)."""
        checked = False
        while True:
            with self._actions_lock:
                if not self._actions or self._actions[0][0] > self._shipped:
                    return
            if not checked and not (checked := self._check_lease()):
                return
            with self._actions_lock:
                _mark, action = self._actions.pop(0)
            try:
                action()
            except Exception:
                logger.exception("An action waiting for the event log to reach storage failed")

    # -- snapshots and trial files --------------------------------------

    def _ship_snapshots(self) -> None:
        if not self._started:
            return
        local = SnapshotStore(self.local_dir)
        paths = {local.path(r).name: local.path(r) for r in local.available()}
        needs = self._log_size()  # read after listing: covers every snapshot listed
        for name in self._snapshots.keys() - paths.keys():
            del self._snapshots[name]
        for name, path in paths.items():
            tracked = self._snapshots.setdefault(name, Tracked())
            signature = file_signature(path)
            if signature is None or signature == tracked.uploaded:
                continue
            if signature != tracked.seen:  # new, or replaced: wait for today's log
                tracked.seen, tracked.needs_log = signature, needs
            if tracked.needs_log > self._shipped:
                continue
            try:
                read = _read_local(path, self.local_dir)
            except NotRegularFileError:  # never shipped, as the listing leaves it out
                read = None
            if read is None or read[0] != signature:
                continue  # replaced meanwhile: seen again next tick
            stored = stored_snapshot_name(name, self._generation)
            self._put(f"{SNAPSHOT_DIR}/{stored}", read[1])
            tracked.uploaded = signature
            self._stored_snapshots.add(stored)
        current = {stored_snapshot_name(name, self._generation) for name in paths}
        for stored in sorted(self._stored_snapshots - current):
            self._delete(f"{SNAPSHOT_DIR}/{stored}")
            self._stored_snapshots.discard(stored)

    def _ship_trial_files(self, force: bool) -> None:
        """Upload the trial files that are due, `UPLOAD_THREADS` at a time
        (storage latency, not bandwidth, bounds many small files). The
        batch's wall time counts as time in storage calls."""
        now = self._clock()
        present, due = set(), []
        for rel, path, signature in self._trial_files():
            present.add(rel)
            tracked = self._files.get(rel)
            if tracked is None:
                tracked = self._files[rel] = self._first_seen(rel, now)
            if signature != tracked.uploaded and (
                force or upload_due(rel, tracked, signature, now)
            ):
                due.append((rel, path, tracked, signature))
            tracked.seen = signature
        for rel in self._files.keys() - present:
            del self._files[rel]
        if not due or not self._check_lease():  # checked just before: see the docs
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(UPLOAD_THREADS, thread_name_prefix="tunecore-ship")
        started = time.perf_counter()
        jobs = [
            (rel, tracked, signature, self._pool.submit(self._upload, rel, path))
            for rel, path, tracked, signature in due
        ]
        failure: OSError | None = None
        for rel, tracked, signature, job in jobs:
            try:
                uploaded = job.result()
            except NotRegularFileError as error:  # refused for good: retrying changes nothing
                logger.warning("Storage %s: %s is not shipped (%s)", self.store.uri(), rel, error)
                tracked.uploaded = tracked.seen = signature
                continue
            except OSError as error:
                self.stats.failures += 1
                failure = failure or error
                continue
            if uploaded is not None:
                self.stats.bytes += uploaded[0]
                self.stats.objects += 1
                tracked.uploaded, tracked.uploaded_size, tracked.since = uploaded, uploaded[0], now
                tracked.seen = uploaded
        self.stats.seconds += time.perf_counter() - started
        if failure is not None:
            raise failure

    def _first_seen(self, rel: str, now: float) -> Tracked:
        """What is known of the trial file `rel` when first seen: uploaded
        already if it was fetched from storage as it is (`fetched_files`:
        never uploaded back over what workers stored since)."""
        fetched = self._fetched.get(rel)
        if fetched is None:
            return Tracked(since=now)
        return Tracked(uploaded=fetched, uploaded_size=fetched[0], since=now)

    def _upload(self, rel: str, path: Path) -> Signature | None:
        """Upload one local file (in a pool thread); what was uploaded, or
        None if the file is gone."""
        read = _read_local(path, self.local_dir)
        if read is None:
            return None
        self.store.write_bytes(rel, read[1])
        return read[0]

    def _trial_files(self) -> Iterator[tuple[str, Path, Signature]]:
        """(store path, local path, signature) of every trial file."""
        try:
            entries = sorted(os.scandir(self.local_dir), key=lambda e: e.name)
        except FileNotFoundError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and is_trial_dir(entry.name):
                yield from _walk(Path(entry.path), entry.name)

    def _left(self) -> str:
        """What is not in storage yet, in words ("" if nothing)."""
        left = []
        try:
            unshipped = self._log_size() - self._shipped
        except Exception:
            unshipped = 0
        if not self._started or unshipped > 0:
            left.append(f"{max(unshipped, 0)} bytes of the event log")
        snapshots = sum(t.seen != t.uploaded for t in self._snapshots.values())
        if snapshots or any(s.start >= self._shipped for s in self._doomed):
            left.append(f"{snapshots} snapshots, or stale log objects to delete")
        files = sum(t.seen != t.uploaded for t in self._files.values())
        if files:
            left.append(f"{files} trial files")
        with self._actions_lock:
            if self._actions:
                left.append(f"{len(self._actions)} actions waiting for the event log")
        return ", ".join(left)


def _walk(directory: Path, rel: str) -> Iterator[tuple[str, Path, Signature]]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if not is_plain_name(entry.name) or entry.name in (LOG_FILE, "driver.lock"):
            continue
        child = f"{rel}/{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            if NOT_TRIAL_FILES.match(entry.name) is None:
                yield from _walk(Path(entry.path), child)
        elif entry.is_file(follow_symlinks=False):
            found = file_signature(Path(entry.path))
            if found is not None:
                yield child, Path(entry.path), found
