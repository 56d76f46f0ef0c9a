"""What the loop writes as it runs: events before they are applied, a chain
digest of the commands they produced, and periodic state snapshots.

Snapshots (`<experiment dir>/snapshots/snapshot_<records>.msgpack`) hold
the whole state after `records` events, and the command digest up to them:
a resume starts from the newest one instead of the first event, and replay
checks its own state and digest against each one it passes. They are
written atomically (a temporary file, fsync, rename), the newest
`KEEP_SNAPSHOTS` are kept, and their cost is bounded: the next snapshot
waits at least `cost / budget` seconds after the last (so snapshots take at
most `budget` of the wall time) and `min_interval_s`.

A snapshot is trusted no further than the log it summarises. It records
how many bytes of the log it covers (`log_bytes`, written only once they
are durable, so a log shorter than that is corrupt: `covered`) and a seal,
the blake2b of those log bytes followed by its state bytes (the writer
keeps the log's hash as it appends, so sealing costs only the state's
bytes). A resume starts from a snapshot only if it ends exactly at a record
of the log and its seal matches (`usable`): a snapshot from another log, a
stale one, or one whose state was edited (its checksum recomputed) is
ignored with a warning and the log replayed instead. Snapshots of older
tunecores have no seal and are likewise left to replay, which still
compares its state with them. The seal binds a snapshot to the log, not
to the truth: only replay shows that the log leads to its state. Snapshots
a resume or a truncation leaves behind are moved aside
(`snapshot_<records>.msgpack.quarantine-<UTC time>`), never deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import stat
import struct
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import msgspec

from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import encode_state
from tunecore.model import (
    AskSearcher,
    ChainTrials,
    Command,
    ContinueTrial,
    DrawValues,
    ExperimentEvent,
    ResetTrial,
    StartTrial,
)
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.model.storable import encoding_error
from tunecore.shell.eventlog import EventLogWriter, LogContents
from tunecore.shell.files_mark import FilesMark
from tunecore.shell.freed_memory import release_freed_memory
from tunecore.shell.storage.own_files import kind_of, read_bytes, write_parts_atomic

logger = logging.getLogger(__name__)

_WARNED: set[Path] = set()
"""Snapshot directories named in a warning already (`SnapshotStore` is
made anew for each look at them): one warning each per process."""

SNAPSHOT_DIR = "snapshots"
KEEP_SNAPSHOTS = 2
SNAPSHOT_FORMAT = 1
_NAME = re.compile(r"^snapshot_([0-9]{12})\.msgpack$")
_CRC = struct.Struct("<I")
EMPTY_DIGEST = bytes(16)


def chain_digest(previous: bytes, record: int, commands: Sequence[Command]) -> bytes:
    """The command digest after `record` produced `commands`: a hash chain,
    so two runs agree on it only if every command so far was the same (as
    `digested` shows them)."""
    commands = digested(commands)
    if not commands:
        return previous
    payload = previous + record.to_bytes(8, "little") + to_msgpack(commands)
    return hashlib.blake2b(payload, digest_size=16).digest()


def digested(commands: Sequence[Command]) -> tuple[Command, ...]:
    """The commands as the digest covers them: what the core decided about
    the trials and the experiment, as it was before the core's requests
    (`DrawValues`, `AskSearcher`) and run-ahead horizons (`until`) became
    commands. So the snapshots of older logs still verify; and the digest
    loses nothing: a request's answer is an event of the log, and a horizon
    follows from the state, which replay compares on its own. (`until`
    set to UNSET is left out of the encoding.)"""
    return tuple(
        msgspec.structs.replace(command, until=msgspec.UNSET)
        if isinstance(command, _RUN_AHEAD)
        else command
        for command in commands
        if not isinstance(command, _REQUESTS)
    )


_REQUESTS = (DrawValues, AskSearcher)
_RUN_AHEAD = (StartTrial, ContinueTrial, ResetTrial, ChainTrials)


def seal(prefix_hash: hashlib.blake2b, state: bytes) -> bytes:
    """A snapshot's seal: the hash of the log bytes it covers (`prefix_hash`,
    a copy the caller gives up), then its state."""
    prefix_hash.update(state)
    return prefix_hash.digest()


class SnapshotFile(msgspec.Struct, frozen=True, kw_only=True):
    format: int
    records: int
    digest: bytes
    state: bytes
    log_bytes: int = 0
    """The log's length just past record `records` (0: an older tunecore's)."""
    seal: bytes = b""
    """`seal()` of the log's first `log_bytes` bytes and `state` (empty: an
    older tunecore's)."""
    files: FilesMark | None = None
    """That the trial files of these events were all written then
    (`shell.files_mark`); None when that is not known."""

    def fits(self, contents: LogContents) -> str | None:
        """Why this snapshot does not summarise `contents`, or None."""
        if not self.seal:
            return "it has no seal (an older tunecore wrote it); replaying the log instead"
        if self.records >= len(contents.ends) or contents.ends[self.records] != self.log_bytes:
            return f"the log's record {self.records} does not end at byte {self.log_bytes}"
        if seal(contents.prefix_hash(self.log_bytes), self.state) != self.seal:
            return "its seal does not match the log and its state (edited, or another log's)"
        return None


def snapshot_log_bytes(data: bytes) -> int:
    """How many log bytes the snapshot `data` (a snapshot file's bytes)
    covers; 0 if it does not decode (the loader names that damage)."""
    try:
        return from_msgpack(data[_CRC.size :], SnapshotFile).log_bytes
    except (ValueError, msgspec.DecodeError):
        return 0


_EMPTY_STATE = b"\xa5state\xc4\x00"
"""The key `state` and an empty bin, in a `SnapshotFile`'s msgpack."""


def file_parts(snapshot: SnapshotFile) -> list[bytes]:
    """`to_msgpack(snapshot)` in pieces that hold its state as it is, not a
    copy: the whole encoding would hold the state twice at once (1 KB a
    trial), and a driver's memory peaks at its snapshots. The state is a
    msgpack bin (its length in the smallest header that holds it); the
    rest is the encoding of the file with an empty state, split where
    that is, unless its bytes appear more than once (then it is encoded
    whole)."""
    state = snapshot.state
    shell = to_msgpack(msgspec.structs.replace(snapshot, state=b""))
    if shell.count(_EMPTY_STATE) != 1:
        return [to_msgpack(snapshot)]
    before, after = shell.split(_EMPTY_STATE)
    size = len(state)
    header = (
        b"\xc4" + size.to_bytes(1, "big")
        if size < 1 << 8
        else b"\xc5" + size.to_bytes(2, "big")
        if size < 1 << 16
        else b"\xc6" + size.to_bytes(4, "big")
    )
    return [before, _EMPTY_STATE[:-2], header, state, after]


class SnapshotStore:
    """The snapshots of one experiment directory."""

    def __init__(self, experiment_dir: str | Path) -> None:
        self.directory = Path(experiment_dir) / SNAPSHOT_DIR

    def available(self) -> list[int]:
        """The event counts snapshots exist for, oldest first (none in a
        directory reached through a link: `_own_directory`)."""
        if not self._own_directory():
            return []
        found = (_NAME.match(p.name) for p in self.directory.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def _own_directory(self) -> bool:
        """Whether the snapshot directory is a real directory of the
        experiment. A symbolic link in its place (to another experiment's
        snapshots, or anywhere) is never used: writing there, moving stale
        snapshots aside or dropping old ones would change files outside
        the experiment. It is named in a warning, and the experiment goes
        on without snapshots (they only save time)."""
        try:
            mode = self.directory.lstat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return False
        if stat.S_ISDIR(mode):
            return True
        if self.directory in _WARNED:
            return False
        _WARNED.add(self.directory)
        logger.warning(
            "%s: %s, not the experiment's snapshot directory: no snapshot is read or written there",
            self.directory,
            kind_of(mode),
        )
        return False

    def path(self, records: int) -> Path:
        return self.directory / f"snapshot_{records:012d}.msgpack"

    def write(
        self,
        records: int,
        digest: bytes,
        state: bytes,
        *,
        log_bytes: int = 0,
        sealed: bytes = b"",
        files: FilesMark | None = None,
    ) -> None:
        with contextlib.suppress(FileExistsError):
            self.directory.mkdir(parents=True)
        if not self._own_directory():
            return
        parts = file_parts(
            SnapshotFile(
                format=SNAPSHOT_FORMAT,
                records=records,
                digest=digest,
                state=state,
                log_bytes=log_bytes,
                seal=sealed,
                files=files,
            )
        )
        crc = 0
        for part in parts:
            crc = zlib.crc32(part, crc)
        write_parts_atomic(self.path(records), [_CRC.pack(crc), *parts], shared=True, sync=True)
        for old in self.available()[:-KEEP_SNAPSHOTS]:
            self.path(old).unlink(missing_ok=True)

    def set_aside_beyond(self, contents: LogContents) -> list[Path]:
        """Move aside (never delete) the snapshots of more events or bytes
        than the log holds: a log cut at a corrupt record makes them stale,
        and the events a resume appends would be checked against them.
        The paths they now have, each named in a warning."""
        moved = []
        for records in self.available():
            snapshot = self._read(records)
            bytes_ = snapshot.log_bytes if isinstance(snapshot, SnapshotFile) else 0
            if records > len(contents.events) or bytes_ > contents.end:
                path = self.path(records)
                stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
                target = path.with_name(f"{path.name}.quarantine-{stamp}")
                path.replace(target)
                logger.warning(
                    "Moved snapshot %s aside to %s: it covers more than the log %s holds",
                    path,
                    target,
                    contents.path,
                )
                moved.append(target)
        return moved

    def covered(self) -> int:
        """How many bytes of the log the snapshots say it held (0 if none
        says): read before the log, which only grows."""
        found = (self._read(records) for records in self.available())
        return max((s.log_bytes for s in found if isinstance(s, SnapshotFile)), default=0)

    def load(self, records: int) -> SnapshotFile | None:
        """The snapshot after `records` events, or None (with a warning) if
        it is missing or damaged: a snapshot only saves time, the log alone
        is enough."""
        snapshot = self._read(records)
        if isinstance(snapshot, str):
            logger.warning("Ignoring snapshot %s: %s", self.path(records), snapshot)
            return None
        return snapshot

    def _read(self, records: int) -> SnapshotFile | str:
        """The snapshot after `records` events, or why it cannot be read."""
        path = self.path(records)
        try:
            data = read_bytes(path)  # a regular file, never through a symlink
            (crc,) = _CRC.unpack_from(data, 0)
            body = data[_CRC.size :]
            if zlib.crc32(body) != crc:
                return "checksum mismatch"
            snapshot = from_msgpack(body, SnapshotFile)
        except (OSError, ValueError, struct.error, msgspec.DecodeError) as error:
            return str(error)
        if snapshot.format > SNAPSHOT_FORMAT or snapshot.records != records:
            return f"format {snapshot.format}, {snapshot.records} records"
        return snapshot

    def usable(self, contents: LogContents) -> Iterator[SnapshotFile]:
        """The snapshots that summarise `contents` (see the module
        docstring), newest first; each one skipped is named in a warning."""
        for records in reversed(self.available()):
            if records > len(contents.events) or (snapshot := self.load(records)) is None:
                continue
            why = snapshot.fits(contents)
            if why is None:
                yield snapshot
            else:
                logger.warning("Ignoring snapshot %s: %s", self.path(records), why)


class Journal:
    """The loop's log and snapshot writer; see the module docstring."""

    def __init__(
        self,
        writer: EventLogWriter,
        snapshots: SnapshotStore,
        *,
        records: int = 0,
        digest: bytes = EMPTY_DIGEST,
        budget: float = 0.02,
        min_interval_s: float = 10.0,
    ) -> None:
        self._writer = writer
        self._snapshots = snapshots
        self.records = records
        self.digest = digest
        self._budget = budget
        self._min_interval = min_interval_s
        self._next_snapshot = time.monotonic() + min_interval_s
        self._snapshotted = records

    def log_size(self) -> int:
        """The log's length in bytes, always at a record's end: the writer
        counts a record only once it is written whole, so another thread
        (the `StateShipper`) may read the file up to here."""
        return self._writer.size

    def record(self, event: ExperimentEvent) -> None:
        """Log `event`; call before applying it. Its record is held until
        `flush`, which must come before anything outside the driver's memory
        depends on the event. One the log cannot store raises
        `UnstorableValueError` naming the value, with nothing held (the
        writer encodes a whole record first): the encoding the log does
        anyway is the check, so a good event costs nothing more."""
        try:
            self._writer.hold(event)
        except (ValueError, OverflowError, RecursionError, TypeError) as error:
            raise encoding_error(type(event).__name__, event, error) from error

    def flush(self) -> None:
        """Hand the held records to the OS (one write)."""
        self._writer.flush()

    def applied(self, commands: Sequence[Command]) -> None:
        """The last recorded event was fed to `step` (accepted with these
        commands, or rejected with none)."""
        self.records += 1
        self.digest = chain_digest(self.digest, self.records, commands)

    def maybe_snapshot(
        self, state: ExperimentState, files: Callable[[], FilesMark | None] | None = None
    ) -> None:
        """A snapshot if one is due; `files` drains the trial file writes
        and says so (`shell.files_mark`), called only when one is."""
        if time.monotonic() >= self._next_snapshot:
            self.snapshot(state, files)

    def snapshot(
        self, state: ExperimentState, files: Callable[[], FilesMark | None] | None = None
    ) -> None:
        if self.records == self._snapshotted:
            return
        started = time.monotonic()
        writer = self._writer
        writer.sync()  # a snapshot never runs ahead of the durable log
        mark = None if files is None else files()  # its cost counts in the budget
        encoded = encode_state(state)
        self._snapshots.write(
            self.records,
            self.digest,
            encoded,
            log_bytes=writer.size,
            sealed=seal(writer.prefix_hash(), encoded),
            files=mark,
        )
        del encoded  # freed before the heap's free pages go back
        release_freed_memory()
        ended = time.monotonic()
        cost = ended - started
        self._snapshotted = self.records
        self._next_snapshot = ended + max(self._min_interval, cost / self._budget)

    def close(self, state: ExperimentState) -> None:
        """A last snapshot (resume and replay start from the end) and sync."""
        self.snapshot(state)
        self._writer.close()
