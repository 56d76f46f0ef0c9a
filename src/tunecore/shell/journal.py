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
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import struct
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import msgspec

from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import encode_state
from tunecore.model import Command, ExperimentEvent
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.shell.eventlog import EventLogWriter

logger = logging.getLogger(__name__)

SNAPSHOT_DIR = "snapshots"
KEEP_SNAPSHOTS = 2
SNAPSHOT_FORMAT = 1
_NAME = re.compile(r"^snapshot_(\d{12})\.msgpack$")
_CRC = struct.Struct("<I")
EMPTY_DIGEST = bytes(16)


def chain_digest(previous: bytes, record: int, commands: Sequence[Command]) -> bytes:
    """The command digest after `record` produced `commands`: a hash chain,
    so two runs agree on it only if every command so far was the same."""
    if not commands:
        return previous
    payload = previous + record.to_bytes(8, "little") + to_msgpack(tuple(commands))
    return hashlib.blake2b(payload, digest_size=16).digest()


class SnapshotFile(msgspec.Struct, frozen=True, kw_only=True):
    format: int
    records: int
    digest: bytes
    state: bytes


class SnapshotStore:
    """The snapshots of one experiment directory."""

    def __init__(self, experiment_dir: str | Path) -> None:
        self.directory = Path(experiment_dir) / SNAPSHOT_DIR

    def available(self) -> list[int]:
        """The event counts snapshots exist for, oldest first."""
        if not self.directory.is_dir():
            return []
        found = (_NAME.match(p.name) for p in self.directory.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def _path(self, records: int) -> Path:
        return self.directory / f"snapshot_{records:012d}.msgpack"

    def write(self, records: int, digest: bytes, state: bytes) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        body = to_msgpack(
            SnapshotFile(format=SNAPSHOT_FORMAT, records=records, digest=digest, state=state)
        )
        target = self._path(records)
        temporary = target.with_suffix(".tmp")
        with temporary.open("wb") as handle:
            handle.write(_CRC.pack(zlib.crc32(body)) + body)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(target)
        for old in self.available()[:-KEEP_SNAPSHOTS]:
            self._path(old).unlink(missing_ok=True)

    def discard_after(self, records: int) -> None:
        """Remove snapshots of more events than the log holds: a log cut at
        a corrupt record (or a torn tail) makes them stale, and the events a
        resume appends would be checked against them."""
        for stale in self.available():
            if stale > records:
                self._path(stale).unlink(missing_ok=True)

    def load(self, records: int) -> SnapshotFile | None:
        """The snapshot after `records` events, or None (with a warning) if
        it is missing or damaged: a snapshot only saves time, the log alone
        is enough."""
        path = self._path(records)
        try:
            data = path.read_bytes()
            (crc,) = _CRC.unpack_from(data, 0)
            body = data[_CRC.size :]
            if zlib.crc32(body) != crc:
                raise ValueError("checksum mismatch")
            snapshot = from_msgpack(body, SnapshotFile)
        except (OSError, ValueError, struct.error, msgspec.DecodeError) as error:
            logger.warning("Ignoring snapshot %s: %s", path, error)
            return None
        if snapshot.format > SNAPSHOT_FORMAT or snapshot.records != records:
            logger.warning("Ignoring snapshot %s: format %d", path, snapshot.format)
            return None
        return snapshot

    def latest(self, at_most: int) -> SnapshotFile | None:
        """The newest usable snapshot taken after at most `at_most` events."""
        for records in reversed(self.available()):
            if records <= at_most and (snapshot := self.load(records)) is not None:
                return snapshot
        return None


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
        self._snapshot_seconds = 0.0
        self._snapshotted = records

    @property
    def snapshot_seconds(self) -> float:
        """Wall time spent writing snapshots so far."""
        return self._snapshot_seconds

    def record(self, event: ExperimentEvent) -> None:
        """Log `event`; call before applying it."""
        self._writer.append(event)

    def applied(self, commands: Sequence[Command]) -> None:
        """The last recorded event was fed to `step` (accepted with these
        commands, or rejected with none)."""
        self.records += 1
        self.digest = chain_digest(self.digest, self.records, commands)

    def maybe_snapshot(self, state: ExperimentState) -> None:
        if time.monotonic() >= self._next_snapshot:
            self.snapshot(state)

    def snapshot(self, state: ExperimentState) -> None:
        if self.records == self._snapshotted:
            return
        started = time.monotonic()
        self._writer.sync()  # a snapshot never runs ahead of the durable log
        self._snapshots.write(self.records, self.digest, encode_state(state))
        ended = time.monotonic()
        cost = ended - started
        self._snapshot_seconds += cost
        self._snapshotted = self.records
        self._next_snapshot = ended + max(self._min_interval, cost / self._budget)

    def close(self, state: ExperimentState) -> None:
        """A last snapshot (resume and replay start from the end) and sync."""
        self.snapshot(state)
        self._writer.close()
