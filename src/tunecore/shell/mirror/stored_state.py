"""How an experiment kept in storage is laid out, and reading it back.

What the driver's `StateShipper` (`shell.mirror.shipper`) writes, and what every
reader of a stored experiment (a resume, `tunecore status URI`,
`ResultGrid.from_path(URI)`) reads:

- `events/seg_<start:016d>_<end:016d>_g<lease:08d>`: the event log's
  bytes `[start, end)`, whole CRC frames, written by the driver of lease
  generation `lease` (`shell.mirror.lease`; objects of tunecores before fencing
  have no `_g` part: generation 0). The log is the chain of these objects
  from byte 0, the longest object first at each start (a compaction's
  object outranks the ones it covers); a gap ends it (what a driver killed
  mid-ship leaves is a shorter, valid log).
- `events/claim_g<lease:08d>_<token>`: empty; written by the driver of
  lease generation `lease` (`token` is its lease's) before it writes the
  lease and before it reads anything else. An older driver that finds it
  has lost the experiment, even if its own lease write (racing the
  take-over) is what the lease object holds; a driver that finds another
  token's claim of its own generation (two drivers starting in the same
  instant) does not start (`shell.mirror.lease`). Claims of tunecores
  before this have no `_<token>` part.
- `events/fence_g<lease:08d>_<offset:016d>`: empty; written by the driver
  of lease generation `lease` when it starts shipping, before anything
  else, at the end of the stored log it goes on from. It fences off every
  earlier driver: an object of a lower generation is trusted only for its
  bytes below `offset` (below every higher generation's fence), so what a
  stale driver (frozen past its lease, then thawed) writes after the
  take-over is never read as the log (`Fences`).
- `snapshots/snapshot_<records:012d>.msgpack.g<lease:08d>` (no `.g` part
  before fencing), as in the experiment directory; each arrives after the
  log bytes it covers. A snapshot of a fenced-off generation that covers
  log bytes past the fence is left out, like such log objects.
- one directory per trial with its files (`params.json`, `result.json`,
  `progress.csv`, `error.txt`, logs, exports), and its checkpoints, which
  workers upload themselves and readers download only when asked.
- `inbox/`: requests posted by `tunecore stop|add URI`, copied by the
  driver into its local inbox (`fetch_requests`), and deleted once the log
  that records them is stored (`delete_taken`).
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import re
import tempfile
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tunecore.shell.eventlog import LOG_FILE, CorruptLogError, LogError, copy_whole_frames
from tunecore.shell.inbox import INBOX_DIR, MAX_REQUEST_BYTES, is_request_name
from tunecore.shell.journal import SNAPSHOT_DIR, SnapshotStore, snapshot_log_bytes
from tunecore.shell.mirror.claims import (
    GENERATION_DIGITS,
    SEGMENT_DIR,
    Fences,
    fences_of,
)
from tunecore.shell.mirror.fetched_files import record_fetched
from tunecore.shell.storage.layout import is_experiment_entry
from tunecore.shell.storage.own_files import NotRegularFileError, write_atomic, write_through
from tunecore.shell.storage.store import Store, delete_entry

logger = logging.getLogger(__name__)

FETCH_THREADS = 8
MAX_REQUESTS_PER_ROUND = 100
"""Requests taken from the stored inbox per shipping round: a flood of
them waits for later rounds instead of stalling one."""
NOT_TRIAL_FILES = re.compile(r"^(checkpoint_.*|exploit_.*|worker_checkpoints)$")
"""What a trial directory holds that is not a trial file: checkpoints
(workers store them) and the worker's own scratch."""

_SEGMENT = re.compile(rf"^seg_([0-9]{{16}})_([0-9]{{16}})(?:_g({GENERATION_DIGITS}))?$")
_SNAPSHOT = re.compile(rf"^(snapshot_[0-9]{{12}}\.msgpack)(?:\.g({GENERATION_DIGITS}))?$")
_TEMPORARY = re.compile(r"(\.tmp|\.tmp-[0-9a-f]{16}|\.quarantine-.*)$")
_READ_RETRIES = 5


def segment_name(start: int, end: int, lease: int = 0) -> str:
    """The stored name of the log's bytes `[start, end)` written by the
    driver of lease generation `lease` (0: no lease, as before fencing)."""
    tag = f"_g{lease:08d}" if lease else ""
    return f"{SEGMENT_DIR}/seg_{start:016d}_{end:016d}{tag}"


def stored_snapshot_name(local: str, lease: int) -> str:
    """The stored name (under `snapshots/`) of the local snapshot `local`
    shipped by the driver of lease generation `lease`."""
    return f"{local}.g{lease:08d}" if lease else local


@dataclass(frozen=True)
class Segment:
    """One log object: the log's bytes `[start, end)`, written by the
    driver of lease generation `lease`. In a chain, `end` may stop short
    of the object's own end (`stored_end`): a fence cut it there."""

    start: int
    end: int
    lease: int = 0
    generation: int = field(default=0, compare=False)
    """How many compactions made it (0: shipped as is)."""
    stored_end: int | None = field(default=None, compare=False)
    """Where the object itself ends, when a fence cut it short."""

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def name(self) -> str:
        stored_end = self.end if self.stored_end is None else self.stored_end
        return segment_name(self.start, stored_end, self.lease)

    @property
    def cut(self) -> bool:
        """Whether a fence cut it: bytes past `end` are not the log's."""
        return self.stored_end is not None


@dataclass(frozen=True)
class StoredObjects:
    """What `events/` holds: the log objects by start (longest first,
    stale ones left out) and the fences."""

    found: dict[int, list[Segment]]
    fences: Fences
    stale: list[Segment]
    """Objects wholly past their generation's fence: a stale driver's
    writes after the take-over, never part of the log."""

    def chain(self) -> list[Segment]:
        """The objects forming the longest-first chain from byte 0; it
        stops at a gap (what a driver killed mid-ship can leave is a
        shorter log)."""
        chain, position = [], 0
        while position in self.found:
            segment = self.found[position][0]
            chain.append(segment)
            position = segment.end
        return chain


def stored_objects(names: list[str]) -> StoredObjects:
    """Read a listing of `events/` (see the module docstring): each object
    of a fenced-off generation cut at its fence, or left out as stale."""
    fences = fences_of(names)
    found: dict[int, list[Segment]] = {}
    stale: list[Segment] = []
    for name in names:
        match = _SEGMENT.match(name)
        if match is None or int(match.group(2)) <= int(match.group(1)):
            continue
        start, end, lease = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
        limit = fences.limit(lease)
        if limit is not None and end > limit:
            if start >= limit:
                stale.append(Segment(start, end, lease))
                continue
            segment = Segment(start, limit, lease, stored_end=end)
        else:
            segment = Segment(start, end, lease)
        found.setdefault(segment.start, []).append(segment)
    for candidates in found.values():
        candidates.sort(key=lambda s: (-s.end, -s.lease))
    return StoredObjects(found, fences, stale)


def stored_snapshots(names: list[str]) -> dict[str, tuple[str, int]]:
    """The snapshots in a listing of `snapshots/`: stored name -> (local
    name, lease generation)."""
    found = {}
    for name in names:
        if (match := _SNAPSHOT.match(name)) is not None:
            found[name] = (match.group(1), int(match.group(2) or 0))
    return found


class StoredLogCorruptError(CorruptLogError):
    """The log in storage is damaged: `uri` names the experiment, and
    `offset` and `record` where in its log (no advice to cut: a stored log
    is only read)."""

    def __init__(self, uri: str, offset: int, record: int, why: str) -> None:
        LogError.__init__(
            self,
            f"{uri}: the stored event log's record {record} at byte offset {offset} is "
            f"corrupt ({why})",
        )
        self.path, self.offset, self.record, self.why, self.uri = (
            Path(uri),
            offset,
            record,
            why,
            uri,
        )

    def naming(self, uri: str) -> StoredLogCorruptError:
        """The same damage, with the experiment named as `uri`."""
        return StoredLogCorruptError(uri, self.offset, self.record, self.why)


def fetch_log(store: Store, target: Path) -> int:
    """Copy the event log as storage holds it, the chain of `events/`
    objects from byte 0, into the local file `target` (replaced whole);
    its size, or 0 (and no file) if none is stored. Objects are streamed a
    record at a time and checked to be whole records (`copy_whole_frames`),
    so a huge or zero-filled object is damage found in its first bytes,
    never read whole. A gap followed by more objects is damage too (what a
    killed shipper leaves never has one): `CorruptLogError` at the offset
    of the gap. An object a compaction deleted under the reader is read
    again from a new listing. Objects a stale driver wrote past a later
    driver's fence are not read (`stored_objects`)."""
    return _fetch_log(store, target)[0]


def _fetch_log(store: Store, target: Path) -> tuple[int, Fences]:
    """`fetch_log`, and the fences of the listing it read."""
    for _attempt in range(_READ_RETRIES):
        listing = stored_objects(store.list(SEGMENT_DIR))
        chained = listing.chain()
        end = chained[-1].end if chained else 0
        after = sorted(start for start in listing.found if start > end)
        if after:
            raise StoredLogCorruptError(
                store.uri(),
                end,
                0,
                f"the stored log has a gap: no object starts at byte {end}, but "
                f"{len(after)} start after it (the first at byte {after[0]})",
            )
        if not chained:
            return 0, listing.fences
        try:
            write_through(target, functools.partial(_copy_chain, store, chained))
        except FileNotFoundError:
            continue  # compacted meanwhile: list again
        return end, listing.fences
    raise OSError(f"{store.uri(SEGMENT_DIR)}: the log objects kept changing while being read")


def _copy_chain(store: Store, chained: Sequence[Segment], out: BinaryIO) -> None:
    """Copy the objects `chained` into `out` a whole record at a time
    (`copy_whole_frames`); damage is `StoredLogCorruptError` naming the
    object."""
    record = 0
    for segment in chained:
        with store.open_input(segment.name) as source:
            try:
                record = copy_whole_frames(
                    source,
                    out,
                    where=Path(segment.name),
                    start=segment.start,
                    size=segment.size,
                    record=record,
                    whole=not segment.cut,
                )
            except CorruptLogError as error:
                why = f"{error.why}, in the object {segment.name}"
                raise StoredLogCorruptError(store.uri(), error.offset, error.record, why) from None


def stored_log(store: Store) -> bytes:
    """The stored event log's bytes (`fetch_log`), for a log small enough
    to hold in memory (tools and tests)."""
    with tempfile.TemporaryDirectory(prefix="tunecore-log-") as scratch:
        target = Path(scratch) / LOG_FILE
        return target.read_bytes() if fetch_log(store, target) else b""


def fetch_state(store: Store, local_dir: Path) -> None:
    """Copy an experiment's stored state into `local_dir` (created if
    needed): the stored log as `events.log`, the snapshots (local ones
    storage lacks are removed, so they match the log), and every trial
    file, checkpoints excepted (recorded as fetched: `fetched_files`).
    Other local files are left alone.
    `FileNotFoundError` naming the URI if storage holds no event log.

    Snapshots are read before the log: storage's log only grows, and a
    snapshot arrives there only after the log bytes it covers, so the
    fetched log covers every fetched snapshot even while a driver ships."""
    stored: list[tuple[int, str, bytes]] = []  # (generation, local name, bytes)
    for name, (local_name, lease) in stored_snapshots(store.list(SNAPSHOT_DIR)).items():
        try:
            stored.append((lease, local_name, store.read_bytes(f"{SNAPSHOT_DIR}/{name}")))
        except FileNotFoundError:
            continue  # dropped meanwhile: a newer one replaced it
    local_dir = Path(local_dir)
    local_dir.mkdir(parents=True, exist_ok=True)
    fetched = local_dir / f".{LOG_FILE}.fetched"
    size, fences = _fetch_log(store, fetched)
    if not size:
        raise FileNotFoundError(
            f"{store.uri(SEGMENT_DIR)}: no event log stored there "
            "(not a tunecore experiment, or it never started)"
        )
    snapshots = {  # of one name, the newest generation's (sorted: it comes last)
        name: data
        for lease, name, data in sorted(stored)
        if (limit := fences.limit(lease)) is None or snapshot_log_bytes(data) <= limit
    }
    local = SnapshotStore(local_dir)
    local.directory.mkdir(parents=True, exist_ok=True)
    for records in local.available():
        if local.path(records).name not in snapshots:
            local.path(records).unlink(missing_ok=True)
    for name, data in snapshots.items():
        write_file(local.directory / name, data)
    try:
        trials = [name for name in store.list() if is_trial_dir(name)]
        files: list[str] = []
        with ThreadPoolExecutor(FETCH_THREADS, thread_name_prefix="tunecore-fetch") as pool:
            for job in [pool.submit(_fetch_tree, store, name, local_dir) for name in trials]:
                files.extend(job.result())
        record_fetched(local_dir, files)  # never shipped back as they are
        os.replace(fetched, local_dir / LOG_FILE)
    finally:
        fetched.unlink(missing_ok=True)


def fetch_requests(
    store: Store,
    local_dir: Path,
    *,
    skip: Collection[str] = (),
    logged: Collection[str] = (),
    limit: int = MAX_REQUESTS_PER_ROUND,
) -> list[str]:
    """Copy what `tunecore stop|add URI` posted to the store's inbox into
    the local one, where the loop reads (and checks) it; the names copied,
    at most `limit` (oldest first: the rest wait for the next round).

    A request stays in storage until the log that records it is stored
    (`delete_taken`), so a driver that dies first loses none: names in
    `skip` were copied already, and those in `logged` are recorded by the
    log already (only deleted). An entry that cannot be a request (another
    name, a directory such as S3's `inbox/0.json/x`, an object over
    `MAX_REQUEST_BYTES`, which is not read) is skipped with a warning and
    removed, and the rest are taken."""
    fetched: list[str] = []
    local = Path(local_dir) / INBOX_DIR
    for name in store.list(INBOX_DIR):
        if len(fetched) >= limit:
            break
        rel = f"{INBOX_DIR}/{name}"
        if name in skip:
            continue
        if name in logged:
            store.delete_file(rel)
            continue
        try:
            if not (is_request_name(name) and is_plain_name(name)):
                raise NotRegularFileError(errno.EINVAL, "not a request's name", rel)
            data = store.read_bytes(rel, MAX_REQUEST_BYTES)
        except FileNotFoundError:
            if not store.exists(rel):
                continue  # gone meanwhile
            logger.warning("%s: skipped a request that is a directory; removed", store.uri(rel))
            store.delete_dir(rel)
            continue
        except NotRegularFileError as error:
            logger.warning("%s: skipped (%s); removed", store.uri(rel), error.strerror)
            delete_entry(store, rel)  # a directory of another name too
            continue
        local.mkdir(parents=True, exist_ok=True)
        write_file(local / name, data)
        fetched.append(name)
    return fetched


def delete_taken(store: Store, names: Iterable[str]) -> None:
    """Delete requests from the store's inbox: once the log that records
    them is stored."""
    for name in names:
        store.delete_file(f"{INBOX_DIR}/{name}")


def _fetch_tree(store: Store, rel: str, local_dir: Path) -> list[str]:
    """Fetch every trial file under the stored directory `rel`; their
    paths."""
    fetched: list[str] = []
    for name in store.list(rel):
        if is_plain_name(name) and NOT_TRIAL_FILES.match(name) is None:
            child = f"{rel}/{name}"
            try:
                data = store.read_bytes(child)
            except FileNotFoundError:  # a directory (or gone)
                fetched.extend(_fetch_tree(store, child, local_dir))
                continue
            target = local_dir.joinpath(*child.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            write_file(target, data)
            fetched.append(child)
    return fetched


def write_file(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically (a symbolic link there is
    replaced, never followed)."""
    write_atomic(path, data)


def is_plain_name(name: str) -> bool:
    """A stored name that is one ordinary local file or directory name."""
    return (
        bool(name)
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and _TEMPORARY.search(name) is None
    )


def is_trial_dir(name: str) -> bool:
    """Whether the stored or staged entry `name` may be a trial directory:
    never one named as tunecore's own entries (`events/`, `inbox/`, a
    directory `events.log/` planted in storage, which the fetch made in
    place of the log)."""
    return is_plain_name(name) and not is_experiment_entry(name)
