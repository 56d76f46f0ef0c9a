"""The event log: framing, damage, versions, durability, snapshots, replay."""

from __future__ import annotations

import errno
import logging
import os
import struct
import zlib
from pathlib import Path

import pytest

from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.core.experiment.snapshot import encode_state
from tunecore.core.search import BasicVariantGenerator
from tunecore.model import (
    ClusterResourcesChanged,
    ExperimentEvent,
    Resources,
    ResultReported,
    Tick,
)
from tunecore.shell.eventlog import (
    LOG_FORMAT,
    MAGIC,
    CorruptLogError,
    EventLogWriter,
    LogError,
    LogHeader,
    RunSettings,
    log_path,
    read_header,
    read_log,
)
from tunecore.shell.journal import EMPTY_DIGEST, Journal, SnapshotStore, chain_digest
from tunecore.shell.replay import ReplayMismatchError, replay

_FRAME = struct.Struct("<II")


def header(fsync_interval_ms: int = 1000) -> LogHeader:
    state = new_experiment(
        ExperimentConfig(trainable_name="tests:train", trial_id_prefix="t"),
        searcher=BasicVariantGenerator({"x": 1}, num_samples=2),
    )
    return LogHeader(
        format=LOG_FORMAT,
        tunecore_version="test",
        name="exp",
        trainable="tests:train",
        settings=RunSettings(fsync_interval_ms=fsync_interval_ms),
        initial_state=encode_state(state),
    )


EVENTS: list[ExperimentEvent] = [
    ClusterResourcesChanged(at=1.0, total=Resources(cpu=1)),
    ResultReported(trial_id="t_00000", at=2.0, result={"training_iteration": 1, "loss": 0.5}),
    Tick(at=3.0),
]


def write(directory: Path, events: list[ExperimentEvent] = EVENTS) -> list[int]:
    """Write a log; the byte offset where each event's record starts."""
    writer = EventLogWriter.create(directory, header())
    offsets = []
    for event in events:
        offsets.append(log_path(directory).stat().st_size)
        writer.append(event)
    writer.close()
    return offsets


def test_a_log_reads_back_exactly(tmp_path: Path) -> None:
    write(tmp_path)
    contents = read_log(tmp_path)
    assert contents.header == header()
    assert contents.events == EVENTS
    assert contents.torn is None
    assert contents.end == log_path(tmp_path).stat().st_size


def test_a_torn_last_record_is_dropped_with_a_warning_naming_its_offset(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    offsets = write(tmp_path)
    path = log_path(tmp_path)
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.truncate(size - 3)  # the last write was cut short
    with caplog.at_level(logging.WARNING):
        contents = read_log(tmp_path)
    assert contents.events == EVENTS[:-1]
    assert contents.torn is not None
    assert contents.torn.offset == offsets[-1]
    assert f"offset {offsets[-1]}" in caplog.text


def test_a_torn_frame_header_is_dropped_too(tmp_path: Path) -> None:
    write(tmp_path)
    with log_path(tmp_path).open("ab") as handle:
        handle.write(b"\x05\x00")  # two bytes of the next frame's length
    assert read_log(tmp_path).events == EVENTS


def test_a_corrupt_record_before_the_end_is_an_error_naming_offset_and_number(
    tmp_path: Path,
) -> None:
    offsets = write(tmp_path)
    path = log_path(tmp_path)
    data = bytearray(path.read_bytes())
    data[offsets[1] + _FRAME.size + 2] ^= 0xFF  # inside event 2's payload
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLogError) as caught:
        read_log(tmp_path)
    assert caught.value.offset == offsets[1]
    assert caught.value.record == 2  # record 0 is the header
    assert f"offset {offsets[1]}" in str(caught.value)
    assert "truncate=True" in str(caught.value)


def test_truncate_cuts_a_corrupt_log_at_the_bad_record_and_appending_goes_on(
    tmp_path: Path,
) -> None:
    offsets = write(tmp_path)
    path = log_path(tmp_path)
    data = bytearray(path.read_bytes())
    data[offsets[1] + _FRAME.size + 2] ^= 0xFF
    path.write_bytes(bytes(data))
    contents = read_log(tmp_path, truncate=True)
    assert contents.events == EVENTS[:1]
    assert path.stat().st_size == offsets[1]
    writer = EventLogWriter.reopen(read_log(tmp_path), fsync_interval_ms=0)
    writer.append(EVENTS[2])
    writer.close()
    assert read_log(tmp_path).events == [EVENTS[0], EVENTS[2]]


def test_reopening_cuts_a_torn_tail_before_appending(tmp_path: Path) -> None:
    write(tmp_path)
    with log_path(tmp_path).open("ab") as handle:
        handle.write(_FRAME.pack(100, 0) + b"partial")
    writer = EventLogWriter.reopen(read_log(tmp_path), fsync_interval_ms=0)
    writer.append(Tick(at=9.0))
    writer.close()
    assert read_log(tmp_path).events == [*EVENTS, Tick(at=9.0)]


def test_a_newer_format_is_refused_before_any_record_is_decoded(tmp_path: Path) -> None:
    write(tmp_path)
    path = log_path(tmp_path)
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, len(MAGIC), LOG_FORMAT + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(LogError, match=rf"newer tunecore \(event log format {LOG_FORMAT + 1}"):
        read_log(tmp_path)


def test_a_missing_or_foreign_log_gets_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="is not a tunecore experiment directory"):
        read_log(tmp_path)
    log_path(tmp_path).write_bytes(b"just some text file\n")
    with pytest.raises(LogError, match="is not a tunecore event log"):
        read_log(tmp_path)


@pytest.mark.parametrize("kept", [0, 5])
def test_a_log_cut_before_its_first_record_says_so(tmp_path: Path, kept: int) -> None:
    """An empty log (a driver killed between creating it and writing it)
    was "not a tunecore event log", as a stranger's file is."""
    write(tmp_path)
    whole = log_path(tmp_path).read_bytes()
    log_path(tmp_path).write_bytes(whole[:kept])
    with pytest.raises(LogError, match=f"holds {kept} bytes, less than the start of any event log"):
        read_log(tmp_path)
    with pytest.raises(LogError, match="cut before its first record"):
        read_header(tmp_path)


def test_a_log_is_never_overwritten(tmp_path: Path) -> None:
    write(tmp_path)
    with pytest.raises(FileExistsError):
        EventLogWriter.create(tmp_path, header())


def test_records_reach_the_file_as_they_are_appended(tmp_path: Path) -> None:
    """Each record is handed to the OS at once (no user-space buffer): a
    reader sees it before the writer syncs or closes."""
    writer = EventLogWriter.create(tmp_path, header(fsync_interval_ms=60_000))
    writer.append(EVENTS[0])
    assert read_log(tmp_path).events == EVENTS[:1]
    writer.close()


def test_snapshots_keep_the_newest_and_survive_damage(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    for records in (3, 7, 12):
        store.write(records, EMPTY_DIGEST, f"state {records}".encode())
    assert store.available() == [7, 12]
    newest = store.path(12)
    newest.write_bytes(newest.read_bytes()[:-1] + b"X")
    assert store.load(12) is None  # the damaged one is skipped
    older = store.load(7)
    assert older is not None
    assert older.records == 7


def test_the_command_digest_is_a_chain() -> None:
    from tunecore.model import ContinueTrial  # noqa: PLC0415

    one = chain_digest(EMPTY_DIGEST, 1, [ContinueTrial(trial_id="a")])
    assert chain_digest(one, 2, []) == one  # no commands, no change
    assert chain_digest(one, 2, [ContinueTrial(trial_id="a")]) != one
    assert chain_digest(EMPTY_DIGEST, 1, [ContinueTrial(trial_id="b")]) != one


def test_the_digest_is_an_older_tunecores_without_requests_and_horizons() -> None:
    """Snapshots keep the digest of the commands as they were before the
    requests and horizons became commands: an old log's still verify."""
    import hashlib  # noqa: PLC0415

    import msgspec  # noqa: PLC0415

    from tunecore.model import (  # noqa: PLC0415
        AskSearcher,
        ChainTrials,
        Command,
        ContinueTrial,
        DrawValues,
    )

    forever = ("training_iteration", float("inf"))
    now: list[Command] = [
        ChainTrials(trial_id="a", then=("b",), until=(forever,)),
        ContinueTrial(trial_id="a", until=forever),
        DrawValues(owner="searcher", key=0, paths=(("x",),)),
        AskSearcher(key=0, trial_id="a", told=0),
    ]
    then = [
        {"type": "ChainTrials", "trial_id": "a", "then": ["b"]},
        {"type": "ContinueTrial", "trial_id": "a"},
    ]
    payload = EMPTY_DIGEST + (1).to_bytes(8, "little") + msgspec.msgpack.encode(then)
    assert chain_digest(EMPTY_DIGEST, 1, now) == hashlib.blake2b(payload, digest_size=16).digest()
    requests_only: list[Command] = [DrawValues(owner="scheduler", key=1, paths=())]
    assert chain_digest(EMPTY_DIGEST, 1, requests_only) == EMPTY_DIGEST


def test_replay_notices_a_snapshot_the_log_does_not_lead_to(tmp_path: Path) -> None:
    write(tmp_path)
    contents = read_log(tmp_path)
    replayed = replay(tmp_path)
    assert replayed.records == len(contents.events)
    SnapshotStore(tmp_path).write(replayed.records, b"\x01" * 16, b"not the state")
    with pytest.raises(ReplayMismatchError, match=f"after record {replayed.records}"):
        replay(tmp_path)
    SnapshotStore(tmp_path).write(replayed.records, replayed.digest, b"not the state")
    with pytest.raises(ReplayMismatchError, match="state differs"):
        replay(tmp_path)


def test_the_journal_snapshots_within_its_budget(tmp_path: Path) -> None:
    """The first snapshot waits for min_interval_s, the next for at least
    cost/budget; close always leaves one at the end."""
    writer = EventLogWriter.create(tmp_path, header())
    journal = Journal(writer, SnapshotStore(tmp_path), min_interval_s=3600.0)
    state = replay(tmp_path).state
    for event in EVENTS:
        journal.record(event)
        journal.applied(())
        journal.maybe_snapshot(state)
    assert SnapshotStore(tmp_path).available() == []
    journal.close(state)
    assert SnapshotStore(tmp_path).available() == [len(EVENTS)]


def test_truncating_a_log_discards_the_snapshots_past_the_cut(tmp_path: Path) -> None:
    offsets = write(tmp_path)
    SnapshotStore(tmp_path).write(len(EVENTS), EMPTY_DIGEST, b"stale")
    path = log_path(tmp_path)
    data = bytearray(path.read_bytes())
    data[offsets[1] + _FRAME.size + 2] ^= 0xFF
    path.write_bytes(bytes(data))
    replayed = replay(tmp_path, truncate=True)
    assert replayed.records == 1
    assert SnapshotStore(tmp_path).available() == []


def test_the_header_reads_alone_even_when_later_records_are_damaged(tmp_path: Path) -> None:
    offsets = write(tmp_path)
    path = log_path(tmp_path)
    data = bytearray(path.read_bytes())
    data[offsets[1] + _FRAME.size + 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert read_header(tmp_path) == header()
    with pytest.raises(LogError, match="is not a tunecore experiment directory"):
        read_header(tmp_path / "missing")


def test_an_undecodable_record_is_cut_with_the_same_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A record whose checksum holds but whose bytes are no event."""
    offsets = write(tmp_path)
    path = log_path(tmp_path)
    data = path.read_bytes()
    junk = b"\\xc1 not msgpack"
    frame = _FRAME.pack(len(junk), zlib.crc32(junk)) + junk
    path.write_bytes(data[: offsets[1]] + frame + data[offsets[1] :])
    with pytest.raises(CorruptLogError, match="undecodable"):
        read_log(tmp_path)
    with caplog.at_level(logging.WARNING):
        contents = read_log(tmp_path, truncate=True)
    assert contents.events == EVENTS[:1]
    assert f"truncating at byte offset {offsets[1]} (record 2)" in caplog.text


def test_a_lazy_read_decodes_each_event_only_when_it_is_read(tmp_path: Path) -> None:
    """What a reader starting from a snapshot gets: the same events, each
    decoded on first reading; a record whose checksum holds but whose bytes
    are no event is an error naming it when (and only when) it is read."""
    write(tmp_path)
    lazy = read_log(tmp_path, lazy=True)
    assert len(lazy.events) == len(EVENTS)
    assert list(lazy.events) == EVENTS
    assert lazy.events[1:] == EVENTS[1:]
    assert lazy.events[-1] == EVENTS[-1]
    with pytest.raises(IndexError):
        lazy.events[len(EVENTS)]
    (tmp_path / "junk").mkdir()
    offsets = write(tmp_path / "junk")
    path = log_path(tmp_path / "junk")
    data = path.read_bytes()
    junk = b"\xc1 not msgpack"
    frame = _FRAME.pack(len(junk), zlib.crc32(junk)) + junk
    path.write_bytes(data[: offsets[1]] + frame + data[offsets[1] :])
    events = read_log(tmp_path / "junk", lazy=True).events
    assert events[2:] == EVENTS[1:]  # read past it, as a resume from a snapshot does
    with pytest.raises(CorruptLogError, match=f"record 2 at byte offset {offsets[1]}.*undecodable"):
        events[1]
    with pytest.raises(ValueError, match="lazy=True cannot truncate"):
        read_log(tmp_path, lazy=True, truncate=True)


def test_held_records_reach_the_file_in_one_write_at_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = EventLogWriter.create(tmp_path, header())
    before = log_path(tmp_path).stat().st_size
    writes: list[int] = []
    real_write = os.write

    def counted(fd: int, data: bytes | memoryview) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", counted)
    for event in EVENTS:
        writer.hold(event)
    assert log_path(tmp_path).stat().st_size == before == writer.size
    writer.flush()
    assert len(writes) == 1
    assert writer.size == log_path(tmp_path).stat().st_size == before + writes[0]
    writer.close()
    assert read_log(tmp_path).events == EVENTS


def test_records_whose_write_failed_stay_held_for_the_next_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = EventLogWriter.create(tmp_path, header())
    before = log_path(tmp_path).stat().st_size
    real_write = os.write

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    for event in EVENTS:
        writer.hold(event)
    with pytest.raises(OSError, match="No space") as raised:
        writer.flush()
    # Named: which file, and that a resume goes on (it was a bare errno 28).
    assert raised.value.errno == errno.ENOSPC
    assert str(log_path(tmp_path)) in str(raised.value)
    assert "resume" in str(raised.value)
    assert log_path(tmp_path).stat().st_size == before
    monkeypatch.setattr(os, "write", real_write)
    writer.close()  # the state took those events: they are written now
    assert read_log(tmp_path).events == EVENTS
