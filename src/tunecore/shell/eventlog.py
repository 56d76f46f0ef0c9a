"""The experiment's event log: the source of truth for replay and resume.

File layout (`<experiment dir>/events.log`):

    preamble   MAGIC (16 bytes) + the log format (u32, little endian)
    record 0   the header: a `LogHeader` (what the experiment was started with)
    record 1+  one `ExperimentEvent` each, in the order the loop fed them to `step`

Every record is framed as `length (u32) | crc32 of the payload (u32) |
payload (msgpack)`, and written with a single `write` on an unbuffered file
descriptor, so a crash can only tear the last record. Rules:

- An event is appended, and handed to the OS, before it is applied: a
  result the experiment acted on is never missing from the log. `fsync`
  follows the durability policy (`fsync_interval_ms`: 0 syncs every record;
  N syncs at most every N ms; the OS has the bytes either way, so only a
  machine crash, not a process crash, can lose the unsynced tail).
- Reading: a torn last record (short, or failing its checksum at the very
  end) is dropped with a warning naming its offset; a damaged record before
  the end is a `CorruptLogError` naming the offset and the record number,
  and `truncate=True` cuts the log there instead. A log of a newer format is
  refused before any record is decoded.
- Records decode only into the declared types (`tunecore.model.codec`):
  nothing in the log is a pickle, and loading it can never run code.
  Schema evolution follows msgspec's rules: new fields get defaults, so an
  old log keeps loading (a golden log in `tests/` checks it).
"""

from __future__ import annotations

import logging
import os
import struct
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import msgspec

from tunecore.model import ExperimentEvent
from tunecore.model.codec import from_msgpack, to_msgpack

logger = logging.getLogger(__name__)

LOG_FILE = "events.log"
MAGIC = b"TUNECORE-EVENTS\n"
LOG_FORMAT = 1
_PREAMBLE = struct.Struct("<16sI")
_FRAME = struct.Struct("<II")
MAX_RECORD_BYTES = 1 << 30  # a length beyond this is damage, not a record
SIMULATED = "simulated"  # RunSettings.executor of a `tunecore.simulate` run


class RunSettings(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How the shell ran the experiment: what a resume needs besides the
    core's state (which executor, and how trials were hosted)."""

    executor: str = "ray"
    address: str | None = None
    reuse_actors: bool = True
    result_buffer_length: int = 1
    output_files: tuple[str, str] | None = None
    chdir_to_trial_dir: bool = False
    verbose: int = 1
    fsync_interval_ms: int = 1000
    own_stopper: str | None = None
    """The name of the user's own stopper, if any: code, which the log does
    not hold, so a restore without it can say so."""


class LogHeader(msgspec.Struct, frozen=True, kw_only=True):
    """Record 0: the experiment as it was before its first event.

    `trainable` is how user code is found again (a registered name or an
    import path `module:function`), never the code itself; `initial_state`
    is the state snapshot (`core.experiment.snapshot`) that replay starts
    from.
    """

    format: int
    tunecore_version: str
    name: str
    trainable: str
    settings: RunSettings
    initial_state: bytes


class LogError(Exception):
    """The event log cannot be used; the message says why and where."""


class CorruptLogError(LogError):
    """A record before the end of the log is damaged."""

    def __init__(self, path: Path, offset: int, record: int, why: str) -> None:
        self.path, self.offset, self.record = path, offset, record
        super().__init__(
            f"{path}: record {record} at byte offset {offset} is corrupt ({why}). "
            "Records after it cannot be trusted; pass truncate=True (CLI: --truncate) "
            f"to cut the log at offset {offset} and keep the {record} records before it."
        )


@dataclass(frozen=True)
class TornTail:
    """The incomplete last record a crash left behind, dropped on reading."""

    offset: int
    size: int


@dataclass(frozen=True)
class LogContents:
    """A log as read: the header, the events, and where the good part ends."""

    path: Path
    header: LogHeader
    events: list[ExperimentEvent]
    end: int  # byte offset just past the last good record
    torn: TornTail | None


def log_path(experiment_dir: str | Path) -> Path:
    return Path(experiment_dir) / LOG_FILE


def _frame(payload: bytes) -> bytes:
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def read_log(
    experiment_dir: str | Path, *, truncate: bool = False, quiet: bool = False
) -> LogContents:
    """Read and validate a whole log; see the module docstring for how
    damage is handled. `truncate` cuts a corrupt log at the first bad
    record (on disk). `quiet` logs a torn tail at debug level (a reader of
    a log still being written sees one often)."""
    path = log_path(experiment_dir)
    with _open(path) as file:
        data = file.read()
    _check_preamble(path, data)
    header: LogHeader | None = None
    events: list[ExperimentEvent] = []
    offset = _PREAMBLE.size
    torn: TornTail | None = None
    for number, start, payload, problem in _frames(data, offset):
        if problem is not None:
            if start + _FRAME.size + _claimed(data, start) >= len(data):
                torn = TornTail(offset=start, size=len(data) - start)
                log = logger.debug if quiet else logger.warning
                log(
                    "%s: dropped an incomplete last record at byte offset %d (%d bytes; %s): "
                    "the writer stopped mid-record",
                    path,
                    start,
                    torn.size,
                    problem,
                )
                offset = start
                break
            if truncate:
                offset = _cut(path, start, number)
                break
            raise CorruptLogError(path, start, number, problem)
        if number == 0:
            header = _decode_header(path, start, payload)
        else:
            try:
                events.append(from_msgpack(payload, ExperimentEvent))  # type: ignore[arg-type]
            except msgspec.DecodeError as error:
                if truncate:
                    offset = _cut(path, start, number)
                    break
                raise CorruptLogError(path, start, number, f"undecodable: {error}") from error
        offset = start + _FRAME.size + len(payload)
    if header is None:
        raise LogError(f"{path} has no header record: the experiment never started writing it")
    if header.format > LOG_FORMAT:  # the preamble said so too; a header can't disagree
        raise LogError(_newer(path, header.format))
    return LogContents(path=path, header=header, events=events, end=offset, torn=torn)


def read_header(experiment_dir: str | Path) -> LogHeader:
    """Only record 0, reading only its bytes: what `Tuner.restore` needs
    before the run reads (and checks) the whole log."""
    path = log_path(experiment_dir)
    with _open(path) as file:
        data = file.read(_PREAMBLE.size + _FRAME.size)
        _check_preamble(path, data)
        data += file.read(_claimed(data, _PREAMBLE.size))
    for _, start, payload, problem in _frames(data, _PREAMBLE.size):
        if problem is not None:
            raise CorruptLogError(path, start, 0, problem)
        return _decode_header(path, start, payload)
    raise LogError(f"{path} has no header record: the experiment never started writing it")


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise LogError(
            f"{path} does not exist: {path.parent} is not a tunecore experiment "
            "directory (or its experiment never started)"
        ) from None


def _decode_header(path: Path, start: int, payload: bytes) -> LogHeader:
    try:
        return from_msgpack(payload, LogHeader)
    except msgspec.DecodeError as error:
        raise CorruptLogError(path, start, 0, f"undecodable: {error}") from error


def _cut(path: Path, start: int, number: int) -> int:
    """Truncate a corrupt log before its record `number`; the new end."""
    logger.warning("%s: truncating at byte offset %d (record %d)", path, start, number)
    with path.open("r+b") as handle:
        handle.truncate(start)
    return start


def _claimed(data: bytes, start: int) -> int:
    """The payload length a frame at `start` claims (0 if the frame is cut)."""
    if start + _FRAME.size > len(data):
        return 0
    length, _ = _FRAME.unpack_from(data, start)
    return int(length)


def _frames(data: bytes, offset: int) -> Iterator[tuple[int, int, bytes, str | None]]:
    """(record number, offset, payload, problem or None) for each frame."""
    number = 0
    while offset < len(data):
        if offset + _FRAME.size > len(data):
            yield number, offset, b"", "its frame header is cut short"
            return
        length, crc = _FRAME.unpack_from(data, offset)
        body = offset + _FRAME.size
        if length > MAX_RECORD_BYTES:
            yield number, offset, b"", f"it claims {length} bytes"
            return
        if body + length > len(data):
            yield number, offset, b"", f"{length} bytes claimed, {len(data) - body} present"
            return
        payload = data[body : body + length]
        if zlib.crc32(payload) != crc:
            yield number, offset, payload, "checksum mismatch"
            return
        yield number, offset, payload, None
        offset = body + length
        number += 1


def _check_preamble(path: Path, data: bytes) -> None:
    if len(data) < _PREAMBLE.size or not data.startswith(MAGIC):
        raise LogError(f"{path} is not a tunecore event log (its first bytes are not {MAGIC!r})")
    _, format_ = _PREAMBLE.unpack_from(data, 0)
    if format_ > LOG_FORMAT:
        raise LogError(_newer(path, format_))


def _newer(path: Path, format_: int) -> str:
    return (
        f"{path} was written by a newer tunecore (event log format {format_}; this "
        f"tunecore reads up to format {LOG_FORMAT}). Upgrade tunecore to read it."
    )


class EventLogWriter:
    """Appends events to a log; see the module docstring for the rules."""

    def __init__(self, path: Path, fd: int, fsync_interval_ms: int) -> None:
        self.path = path
        self._fd = fd
        self._interval = fsync_interval_ms / 1000.0
        self._synced_at = time.monotonic()
        self._dirty = False

    @classmethod
    def create(cls, experiment_dir: Path, header: LogHeader) -> EventLogWriter:
        """A new log holding the preamble and the header, synced to disk."""
        path = log_path(experiment_dir)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        os.write(fd, _PREAMBLE.pack(MAGIC, LOG_FORMAT) + _frame(to_msgpack(header)))
        os.fsync(fd)
        return cls(path, fd, header.settings.fsync_interval_ms)

    @classmethod
    def reopen(cls, contents: LogContents, fsync_interval_ms: int) -> EventLogWriter:
        """Continue a log after its last good record (a torn tail is cut)."""
        fd = os.open(contents.path, os.O_WRONLY | os.O_APPEND)
        os.ftruncate(fd, contents.end)
        return cls(contents.path, fd, fsync_interval_ms)

    def append(self, event: ExperimentEvent) -> None:
        os.write(self._fd, _frame(to_msgpack(event)))
        self._dirty = True
        now = time.monotonic()
        if now - self._synced_at >= self._interval:
            self.sync(now)

    def sync(self, now: float | None = None) -> None:
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False
        self._synced_at = time.monotonic() if now is None else now

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1
