"""The experiment's event log: the source of truth for replay and resume.

File layout (`<experiment dir>/events.log`):

    preamble   MAGIC (16 bytes) + the log format (u32, little endian)
    record 0   the header: a `LogHeader` (what the experiment was started with)
    record 1+  one `ExperimentEvent` each, in the order the loop fed them to `step`

Every record is framed as `length (u32) | crc32 of the payload (u32) |
payload (msgpack)`, and appended whole on an unbuffered file descriptor
(a short write is continued; a failed one cuts the log back to where the
record began), so a crash can only tear the last record. Rules:

- An event is recorded before it is applied, and handed to the OS before
  anything outside the driver's memory depends on it: a result the
  experiment acted on is never missing from the log. The writer either
  writes a record at once (`append`) or holds it (`hold`) until `flush`
  writes every held record with one system call; the loop holds the
  events of one round and flushes at its end, and before it deletes a
  checkpoint (see `tunecore.shell.loop`). `fsync` follows the durability
  policy (`fsync_interval_ms`: 0 syncs every write; N syncs at most every
  N ms; the OS has the bytes either way, so only a machine crash, not a
  process crash, can lose the unsynced tail).
- No record is larger than `MAX_RECORD_BYTES`: the writer refuses one
  (`RecordTooLargeError`), so a frame claiming more is damage, never a
  record.
- Reading: a torn tail is only what a crash can leave, the last frame cut
  short (or failing its checksum at the very end) with nothing after it,
  or zero bytes to the end (a machine crash can leave a file's last blocks
  zeroed): it is dropped with a warning naming its offset. Anything else is a
  `CorruptLogError` naming the offset and the record number: a damaged
  record before the end, a frame claiming more than `MAX_RECORD_BYTES`, a
  frame claiming more bytes than remain when a checksum-valid frame starts
  after it (one damaged byte in a length prefix mid-log; `_resumes_after`
  looks for one within `RESYNC_WINDOW`), and a log shorter than its
  snapshots say it was (`covered`: a snapshot is written only after the log
  it summarises is durable). A log of a newer format is refused before any
  record is decoded.
- Nothing is destroyed: `truncate=True` cuts a corrupt log at the bad
  record, and a resume cuts a torn tail, but each first copies what it cuts
  to a quarantine file beside the log (`events.log.quarantine-<offset>-<UTC
  time>`) and names it in the warning.
- The writer keeps a running blake2b of every byte it wrote
  (`prefix_hash`), which a snapshot seals itself with
  (`tunecore.shell.journal`); `LogContents.prefix_hash` gives the same for
  a log as read.
- Records decode only into the declared types (`tunecore.model.codec`):
  nothing in the log is a pickle, and loading it can never run code.
  Schema evolution follows msgspec's rules: new fields get defaults, so an
  old log keeps loading (a golden log in `tests/` checks it).

Why one module of over 400 lines: the framing, the writer and the reader are
the two halves of one file format, which must change together; its constants
and checks are shared by both.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, BinaryIO, Protocol, overload

import msgspec

from tunecore.model import ExperimentEvent
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.model.storable import MAX_RECORD_BYTES
from tunecore.shell.storage.own_files import NotRegularFileError, open_fd, write_all

logger = logging.getLogger(__name__)

LOG_FILE = "events.log"
MAGIC = b"TUNECORE-EVENTS\n"
LOG_FORMAT = 1
_PREAMBLE = struct.Struct("<16sI")
_FRAME = struct.Struct("<II")
HEADER_OFFSET = _PREAMBLE.size  # where record 0, the header, starts
RESYNC_WINDOW = 1 << 20
"""How far past a frame that claims more bytes than remain reading looks
for a checksum-valid frame (proof the damage is mid-log, not a torn tail):
a real record beyond it is rare, and the snapshots' `covered` check still
catches most of those."""
_MAP_STARTS = frozenset(range(0x80, 0x90)) | {0xDE, 0xDF}  # msgpack maps: every payload
SIMULATED = "simulated"  # RunSettings.executor of a `tunecore.simulate` run


class RunSettings(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How the shell ran the experiment: what a resume needs besides the
    core's state (which executor, and how trials were hosted). The
    constraints are checked when a header is decoded: a log whose settings
    no run could have had is corrupt."""

    executor: Annotated[str, msgspec.Meta(pattern="^(ray|in_process|simulated)$")] = "ray"
    address: str | None = None
    reuse_actors: bool = True
    result_buffer_length: Annotated[int, msgspec.Meta(ge=1)] = 1
    output_files: tuple[str, str] | None = None
    chdir_to_trial_dir: bool = False
    verbose: Annotated[int, msgspec.Meta(ge=0, le=3)] = 1
    fsync_interval_ms: Annotated[int, msgspec.Meta(ge=0)] = 1000
    own_stopper: str | None = None
    """The name of the user's own stopper, if any: code, which the log does
    not hold, so a restore without it can say so."""
    storage_uri: str = ""
    """The storage the experiment is kept in when it is not the directory
    of this log (a URI `storage_path`, credentials removed; see
    `shell.mirror.mirror`): a restore from this directory goes on shipping there."""
    sync_period_s: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    sync_timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 60.0
    sync_artifacts: bool = False
    sync_artifacts_on_checkpoint: bool = True
    """`RunConfig.sync_config`, kept for a restore."""


class LogHeader(msgspec.Struct, frozen=True, kw_only=True):
    """Record 0: the experiment as it was before its first event.

    `trainable` is how user code is found again (a registered name or an
    import path `module:function`), never the code itself; `initial_state`
    is the state snapshot (`core.experiment.snapshot`) that replay starts
    from.
    """

    format: Annotated[int, msgspec.Meta(ge=1)]
    tunecore_version: str
    name: str
    trainable: Annotated[str, msgspec.Meta(min_length=1)]
    settings: RunSettings
    initial_state: bytes


class LogError(Exception):
    """The event log cannot be used; the message says why and where."""


class RecordTooLargeError(ValueError):
    """An event whose record would exceed `MAX_RECORD_BYTES`: the writer
    refuses it (nothing is written), so the log stays readable."""

    def __init__(self, what: str, size: int) -> None:
        self.size = size
        super().__init__(
            f"{what} encodes to {size} bytes, more than the event log's limit of "
            f"{MAX_RECORD_BYTES} bytes per record (tunecore.model.storable.MAX_RECORD_BYTES); "
            "report smaller values (a large array belongs in a checkpoint)"
        )


class CorruptLogError(LogError):
    """The log is damaged before its end (or ends before its snapshots say)."""

    def __init__(self, path: Path, offset: int, record: int, why: str) -> None:
        self.path, self.offset, self.record, self.why = path, offset, record, why
        advice = (
            "Records after it cannot be trusted; pass truncate=True (CLI: --truncate) "
            f"to cut the log at offset {offset} and keep the {record} records before it."
            if record
            else "It is the header, without which nothing in the log can be read."
        )
        super().__init__(
            f"{path}: record {record} at byte offset {offset} is corrupt ({why}). {advice}"
        )


@dataclass(frozen=True)
class TornTail:
    """The incomplete last record a crash left behind, dropped on reading."""

    offset: int
    size: int


class LazyEvents(Sequence[ExperimentEvent]):
    """The events of a log read with `lazy=True`: each decoded when first
    read, then kept. A reader that starts from a snapshot (a resume,
    `tunecore status`, `ResultGrid.from_path`) decodes only the events
    after it, not the hundreds of thousands it covers (three quarters of
    such a read at 100,000 trials). Every frame was checked whole (length
    and checksum) as the log was read; one whose payload does not decode
    raises `CorruptLogError`, naming it, when it is read."""

    def __init__(self, path: Path, data: bytes, ends: Sequence[int]) -> None:
        self._path = path
        self._data = memoryview(data)
        self._ends = ends  # ends[n]: just past record n (0 is the header)
        self._decoded: list[ExperimentEvent | None] = [None] * (len(ends) - 1)

    def __len__(self) -> int:
        return len(self._decoded)

    @overload
    def __getitem__(self, index: int) -> ExperimentEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ExperimentEvent]: ...
    def __getitem__(self, index: int | slice) -> ExperimentEvent | Sequence[ExperimentEvent]:
        if isinstance(index, slice):
            return [self._event(i) for i in range(*index.indices(len(self._decoded)))]
        if index < 0:
            index += len(self._decoded)
        if not 0 <= index < len(self._decoded):
            raise IndexError(index)
        return self._event(index)

    def __iter__(self) -> Iterator[ExperimentEvent]:
        return (self._event(i) for i in range(len(self._decoded)))

    def _event(self, index: int) -> ExperimentEvent:
        known = self._decoded[index]
        if known is not None:
            return known
        start = self._ends[index]
        payload = self._data[start + _FRAME.size : self._ends[index + 1]]
        try:
            event: ExperimentEvent = from_msgpack(payload, ExperimentEvent)  # type: ignore[assignment]
        except msgspec.DecodeError as error:
            why = f"undecodable: {error}"
            raise CorruptLogError(self._path, start, index + 1, why) from error
        self._decoded[index] = event
        return event


@dataclass(frozen=True)
class LogContents:
    """A log as read: the header, the events, and where the good part ends."""

    path: Path
    header: LogHeader
    events: Sequence[ExperimentEvent]
    end: int  # byte offset just past the last good record
    torn: TornTail | None
    ends: list[int] = field(default_factory=list, repr=False)
    """`ends[n]`: the byte offset just past record n (0 is the header)."""
    data: bytes = field(default=b"", repr=False)
    """The file's bytes as read."""
    quarantined: Path | None = None
    """Where `truncate=True` kept the bytes it cut, if it cut any."""

    def prefix_hash(self, length: int) -> hashlib.blake2b:
        """The running hash the writer had after writing `length` bytes."""
        return _hash(memoryview(self.data)[:length])


def log_path(experiment_dir: str | Path) -> Path:
    return Path(experiment_dir) / LOG_FILE


def _hash(data: bytes | memoryview = b"") -> hashlib.blake2b:
    return hashlib.blake2b(data, digest_size=32)


def _frame(what: object) -> bytes:
    payload = to_msgpack(what)
    if len(payload) > MAX_RECORD_BYTES:
        raise RecordTooLargeError(type(what).__name__, len(payload))
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def read_log(
    experiment_dir: str | Path,
    *,
    truncate: bool = False,
    quiet: bool = False,
    covered: int = 0,
    lazy: bool = False,
) -> LogContents:
    """Read and validate a whole log; see the module docstring for how
    damage is handled. `truncate` cuts a corrupt log at the first bad
    record (on disk, keeping the cut bytes in a quarantine file). `quiet`
    logs a torn tail at debug level (a reader of a log still being written
    sees one often). `covered` is how many bytes the log's snapshots say it
    held (read them before the log: it only grows). `lazy` checks every
    frame but decodes each event only when it is read (`LazyEvents`), for
    a reader that starts from a snapshot; it cannot be combined with
    `truncate` (which cuts at an event that does not decode)."""
    if lazy and truncate:
        raise ValueError("read_log: lazy=True cannot truncate (it decodes events only when read)")
    path = log_path(experiment_dir)
    with _open(path) as file:
        data = file.read(os.fstat(file.fileno()).st_size)
    _check_preamble(path, data)
    header: LogHeader | None = None
    events: list[ExperimentEvent] = []
    ends: list[int] = []
    offset = _PREAMBLE.size
    torn: TornTail | None = None
    quarantined: Path | None = None
    for number, start, payload, problem in _frames(data, offset):
        if problem is not None:
            if _torn(data, start) and start < covered:
                problem += f"; a snapshot says the log held {covered} bytes"  # noqa: PLW2901
            elif _torn(data, start):
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
                offset, quarantined = _cut(path, data, start, number)
                break
            raise CorruptLogError(path, start, number, problem)
        if number == 0:
            header = _decode_header(path, start, payload)
        elif not lazy:
            try:
                events.append(from_msgpack(payload, ExperimentEvent))  # type: ignore[arg-type]
            except msgspec.DecodeError as error:
                if truncate:
                    offset, quarantined = _cut(path, data, start, number)
                    break
                raise CorruptLogError(path, start, number, f"undecodable: {error}") from error
        offset = start + _FRAME.size + len(payload)
        ends.append(offset)
    if header is None:
        raise LogError(f"{path} has no header record: the experiment never started writing it")
    if offset < covered and not truncate:
        raise CorruptLogError(
            path,
            offset,
            len(ends),
            f"the log ends here, but a snapshot says the log held {covered} bytes",
        )
    return LogContents(
        path=path,
        header=header,
        events=LazyEvents(path, data, ends) if lazy else events,
        end=offset,
        torn=torn,
        ends=ends,
        data=data,
        quarantined=quarantined,
    )


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


class LogFollower:
    """Reads a log that may still be written, a piece at a time: the
    header once, then, on each `read_new`, the whole records appended
    since (for `tunecore dashboard`, which follows a running experiment).
    A record cut short or failing its checksum at the end is the writer
    mid-record: it is read on a later call once whole. The same bytes
    still damaged once the log has grown `RESYNC_WINDOW` past them are
    damage (`CorruptLogError`). Memory is bounded by `chunk` (and the
    record limit), whatever the log's size."""

    def __init__(self, experiment_dir: str | Path, chunk: int = 8 << 20) -> None:
        self.path = log_path(experiment_dir)
        self.header = read_header(experiment_dir)
        self.offset = HEADER_OFFSET
        self.records = 0
        self._chunk = max(chunk, MAX_RECORD_BYTES + _FRAME.size)
        self._skip_header = True

    def read_new(self, most: int | None = None) -> list[ExperimentEvent]:
        """The events appended since the last call (at most `most`)."""
        events: list[ExperimentEvent] = []
        with _open(self.path) as file:
            size = os.fstat(file.fileno()).st_size
            while self.offset < size and (most is None or len(events) < most):
                file.seek(self.offset)
                data = file.read(min(self._chunk, size - self.offset))
                used = self._take(data, events, most, size)
                if used == 0:
                    break
                self.offset += used
        return events

    def _take(self, data: bytes, events: list[ExperimentEvent], most: int | None, size: int) -> int:
        """Decode the whole records at the start of `data` into `events`;
        how many bytes they took."""
        used = 0
        for _, start, payload, problem in _frames(data, 0):
            if problem is not None:
                if size - (self.offset + start) > RESYNC_WINDOW + MAX_RECORD_BYTES:
                    raise CorruptLogError(self.path, self.offset + start, self.records, problem)
                break
            used = start + _FRAME.size + len(payload)
            self.records += 1
            if self._skip_header:
                self._skip_header = False
                continue
            try:
                events.append(from_msgpack(payload, ExperimentEvent))  # type: ignore[arg-type]
            except msgspec.DecodeError as error:
                where = self.offset + start
                why = f"undecodable: {error}"
                raise CorruptLogError(self.path, where, self.records - 1, why) from error
            if most is not None and len(events) >= most:
                break
        return used


def _open(path: Path) -> BinaryIO:
    """The log opened to read, if it is a regular file: never through a
    symbolic link (`own_files`); a reader reads at most its size."""
    try:
        return os.fdopen(open_fd(path), "rb")
    except FileNotFoundError:
        raise LogError(
            f"{path} does not exist: {path.parent} is not a tunecore experiment "
            "directory (or its experiment never started)"
        ) from None
    except NotRegularFileError as error:
        raise LogError(f"{path} is not an event log: {error.strerror}") from None


def _decode_header(path: Path, start: int, payload: bytes | memoryview) -> LogHeader:
    """The header, checked (see `RunSettings`). Its format is at most the
    preamble's, which was checked first: a newer one is damage."""
    try:
        header = from_msgpack(payload, LogHeader)
    except msgspec.DecodeError as error:
        raise CorruptLogError(path, start, 0, f"undecodable: {error}") from error
    if header.format > LOG_FORMAT:
        why = f"it says format {header.format}, the preamble at most {LOG_FORMAT}"
        raise CorruptLogError(path, start, 0, why)
    return header


def _cut(path: Path, data: bytes, start: int, number: int) -> tuple[int, Path]:
    """Truncate a corrupt log before its record `number`, keeping what is
    cut in a quarantine file; the new end and that file."""
    kept = quarantine(path, data, start)
    logger.warning(
        "%s: truncating at byte offset %d (record %d); the %d bytes cut are kept in %s",
        path,
        start,
        number,
        len(data) - start,
        kept,
    )
    fd = open_fd(path, "r+")
    try:
        os.ftruncate(fd, start)
    finally:
        os.close(fd)
    return start, kept


def quarantine(path: Path, data: bytes, start: int) -> Path:
    """Copy `data[start:]` (the bytes of `path` about to be cut) to a new
    file beside it, synced before anything is cut; its path."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for attempt in range(1000):
        suffix = f"-{attempt}" if attempt else ""
        target = path.with_name(f"{path.name}.quarantine-{start}-{stamp}{suffix}")
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        try:
            _write_all(fd, memoryview(data)[start:], 0)
            os.fsync(fd)
        finally:
            os.close(fd)
        return target
    raise LogError(f"{path}: cannot name a quarantine file for the bytes from offset {start}")


def _torn(data: bytes, start: int) -> bool:
    """Whether the bad frame at `start` is what a crash can leave: cut
    short (or failing its checksum exactly at the end) within the record
    limit, with no checksum-valid frame after it."""
    if start + _FRAME.size > len(data) or _zeroed_after(data, start):
        return True
    length = _claimed(data, start)
    end = start + _FRAME.size + length
    if length > MAX_RECORD_BYTES or end < len(data):
        return False
    return end == len(data) or _resumes_after(data, start + _FRAME.size) is None


def _zeroed_after(data: bytes, start: int) -> bool:
    """Whether every byte from `start` on is zero: what a machine crash can
    leave where a file's size reached the disk before its last blocks."""
    return len(data.rstrip(b"\0")) <= start


def _resumes_after(data: bytes, start: int) -> int | None:
    """The offset of the first checksum-valid, non-empty frame starting in
    `RESYNC_WINDOW` bytes from `start` whose successor is the end of the
    data or a plausible frame, if any. Cheap tests first (the payload is a
    msgpack map and fits), so the checksum is computed rarely; bytes crafted
    to pass them all everywhere exhaust a budget of checksummed bytes and
    count as a frame found (damage, not a torn tail)."""
    size = len(data)
    view = memoryview(data)
    budget = 64 * RESYNC_WINDOW
    for at in range(start, min(size - _FRAME.size, start + RESYNC_WINDOW)):
        body = at + _FRAME.size
        if data[body] not in _MAP_STARTS:
            continue
        length, crc = _FRAME.unpack_from(data, at)
        after = body + length
        if length == 0 or after > size or not _plausible(data, after):
            continue
        budget -= length
        if budget < 0 or zlib.crc32(view[body:after]) == crc:
            return at
    return None


def _plausible(data: bytes, at: int) -> bool:
    """Whether a frame could start at `at`: the end of the data, a frame
    header cut short (a torn tail), or a fitting length and a map."""
    if at + _FRAME.size >= len(data):
        return True
    return 0 < _claimed(data, at) <= MAX_RECORD_BYTES and data[at + _FRAME.size] in _MAP_STARTS


def _claimed(data: bytes, start: int) -> int:
    """The payload length a frame at `start` claims (0 if the frame is cut)."""
    if start + _FRAME.size > len(data):
        return 0
    length, _ = _FRAME.unpack_from(data, start)
    return int(length)


def _frames(data: bytes, offset: int) -> Iterator[tuple[int, int, memoryview, str | None]]:
    """(record number, offset, payload, problem or None) for each frame;
    each payload a view into `data`, not a copy. (Its names bound locally:
    a 100,000-trial log has half a million frames.)"""
    view = memoryview(data)
    empty = view[:0]
    size = len(data)
    unpack, framing, crc32 = _FRAME.unpack_from, _FRAME.size, zlib.crc32
    number = 0
    while offset < size:
        if offset + framing > size:
            yield number, offset, empty, "its frame header is cut short"
            return
        length, crc = unpack(data, offset)
        body = offset + framing
        if length == 0:  # no event encodes to nothing: zeroed blocks, or damage
            yield number, offset, empty, "an empty record"
            return
        if length > MAX_RECORD_BYTES:
            yield number, offset, empty, f"it claims {length} bytes"
            return
        end = body + length
        if end > size:
            yield number, offset, empty, f"{length} bytes claimed, {size - body} present"
            return
        payload = view[body:end]
        if crc32(payload) != crc:
            yield number, offset, payload, "checksum mismatch"
            return
        yield number, offset, payload, None
        offset = end
        number += 1


class Readable(Protocol):
    """A source of bytes read a piece at a time (`Store.open_input`)."""

    def read(self, size: int, /) -> bytes: ...


def copy_whole_frames(
    source: Readable,
    out: BinaryIO,
    *,
    where: Path,
    start: int,
    size: int,
    record: int,
    whole: bool = True,
) -> int:
    """Copy `size` bytes of a log, from its byte `start`, from `source` to
    `out`, one frame at a time (memory bounded by the record limit),
    checking that they are whole frames: a stored piece of a log is made
    of whole records, so anything else in it (a frame cut short, zeros, a
    checksum mismatch, too few or too many bytes) is damage, never a
    crash's torn tail: `CorruptLogError` at the log's offset, naming
    `where`. `record` is the number of the first record; returns the
    number after the last. `whole=False`: the piece may go on past `size`
    (bytes that are not this log's, left unread)."""
    offset, end = start, start + size
    if start == 0:
        preamble = source.read(_PREAMBLE.size)
        _check_preamble(where, preamble)
        out.write(preamble)
        offset = _PREAMBLE.size
    while offset < end:
        head = source.read(_FRAME.size)
        if len(head) < _FRAME.size:
            raise CorruptLogError(
                where, offset, record, f"the piece ends {end - offset} bytes early"
            )
        length, crc = _FRAME.unpack(head)
        why = None
        if length == 0:
            why = "an empty record (zeros)"
        elif length > MAX_RECORD_BYTES or offset + _FRAME.size + length > end:
            why = f"it claims {length} bytes, past the piece's end at {end}"
        if why is not None:
            raise CorruptLogError(where, offset, record, why)
        payload = source.read(length)
        if len(payload) != length or zlib.crc32(payload) != crc:
            raise CorruptLogError(where, offset, record, "checksum mismatch")
        out.write(head)
        out.write(payload)
        offset += _FRAME.size + length
        record += 1
    if whole and source.read(1):
        raise CorruptLogError(where, end, record, f"the piece holds more than its {size} bytes")
    return record


def _check_preamble(path: Path, data: bytes) -> None:
    """`LogError` unless `data` begins with a log's preamble. A log cut
    inside it (empty: a driver killed between creating the file and its
    first write, or a log truncated since) is named as such: it holds no
    record, and no snapshot is read without one."""
    if len(data) < _PREAMBLE.size and _PREAMBLE.pack(MAGIC, LOG_FORMAT).startswith(data):
        raise LogError(
            f"{path} holds {len(data)} bytes, less than the start of any event log: "
            "cut before its first record (a driver killed as it created it, or the "
            "file truncated since); no record is left to resume from"
        )
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


def _write_all(fd: int, frame: bytes | memoryview, size: int) -> None:
    """Append `frame` to a file of `size` bytes (the log; a quarantine file)
    whole, or not at all: a short write (a full disk) is continued, and a
    failure cuts the file back to `size`, so that no half record stays
    before the next one."""
    try:
        write_all(fd, frame)
    except OSError:
        os.ftruncate(fd, size)
        raise


class EventLogWriter:
    """Appends events to a log; see the module docstring for the rules."""

    def __init__(
        self, path: Path, fd: int, fsync_interval_ms: int, written: hashlib.blake2b, size: int
    ) -> None:
        self.path = path
        self._fd = fd
        self._interval = fsync_interval_ms / 1000.0
        self._synced_at = time.monotonic()
        self._dirty = False
        self._hash = written
        self._held: list[bytes] = []
        self.size = size
        """How many bytes the log holds (held records not counted)."""

    @classmethod
    def create(cls, experiment_dir: Path, header: LogHeader) -> EventLogWriter:
        """A new log holding the preamble and the header, synced to disk."""
        path = log_path(experiment_dir)
        start = _PREAMBLE.pack(MAGIC, LOG_FORMAT) + _frame(header)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        _write_all(fd, start, 0)
        os.fsync(fd)
        return cls(path, fd, header.settings.fsync_interval_ms, _hash(start), len(start))

    @classmethod
    def reopen(cls, contents: LogContents, fsync_interval_ms: int) -> EventLogWriter:
        """Continue a log after its last good record: a torn tail is cut,
        its bytes kept in a quarantine file named in a warning."""
        path, end = contents.path, contents.end
        fd = open_fd(path, "a")
        if os.fstat(fd).st_size > end:
            kept = quarantine(path, contents.data, end)
            logger.warning(
                "%s: cut the incomplete last record at byte offset %d; its %d bytes are kept in %s",
                path,
                end,
                len(contents.data) - end,
                kept,
            )
            os.ftruncate(fd, end)
        return cls(path, fd, fsync_interval_ms, contents.prefix_hash(end), end)

    def append(self, event: ExperimentEvent) -> None:
        """Write `event`'s record (after any held ones). A
        `RecordTooLargeError` writes nothing; a failed write keeps the
        records held before, not this one."""
        self.hold(event)
        try:
            self.flush()
        except OSError:
            if self._held:  # the write failed (not the fsync after it)
                self._held.pop()
            raise

    def hold(self, event: ExperimentEvent) -> None:
        """Encode `event`'s record and keep it for the next `flush`: records
        are encoded whole first, so one that cannot be stored raises here
        (`RecordTooLargeError`, an encoding error) and is never held."""
        self._held.append(_frame(event))

    def flush(self) -> None:
        """Write the held records, in order, with one write (all or none of
        them, see `_write_all`; after a failure they stay held), then sync
        if the policy says it is time."""
        self._write_held()
        now = time.monotonic()
        if now - self._synced_at >= self._interval:
            self.sync(now)

    def _write_held(self) -> None:
        if not self._held:
            return
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        try:
            _write_all(self._fd, data, self.size)
        except OSError as error:
            # A full disk stopped the run with a bare "[Errno 28] No space left
            # on device", naming neither the file nor what became of it.
            raise OSError(
                error.errno,
                f"{error.strerror}: could not append to the event log {self.path}. It "
                "holds whole records only, and every event before these: resume the "
                "experiment once the storage has room",
            ) from error
        self._held.clear()
        self._hash.update(data)
        self.size += len(data)
        self._dirty = True

    def prefix_hash(self) -> hashlib.blake2b:
        """A copy of the running hash of every byte written to the log."""
        return self._hash.copy()

    def sync(self, now: float | None = None) -> None:
        """Write the held records and fsync."""
        self._write_held()
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False
        self._synced_at = time.monotonic() if now is None else now

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1
