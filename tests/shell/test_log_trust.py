"""What a resume or a replay trusts on disk (issue 10, items 2 and 7): a
damaged length prefix mid-log, or a log shorter than its snapshots say, is
corruption and not a torn tail; nothing is cut without being kept aside; a
snapshot is used only if it is sealed to the log, and one that does not
decode is skipped. End to end on the in-process executor."""

from __future__ import annotations

import errno
import logging
import os
import struct
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pytest

import tunecore
from tunecore import ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.cli import main
from tunecore.core.experiment.snapshot import decode_state, encode_state
from tunecore.model import JsonValue, ResultReported, Tick
from tunecore.model.storable import MAX_RECORD_BYTES
from tunecore.shell.eventlog import (
    CorruptLogError,
    EventLogWriter,
    RecordTooLargeError,
    log_path,
    read_log,
)
from tunecore.shell.journal import SnapshotStore, seal
from tunecore.shell.replay import rebuild, replay

_PREAMBLE = 20  # the magic (16 bytes) and the format (u32)


def scoring(config: Mapping[str, JsonValue]) -> None:
    for step in range(1, 4):
        tunecore.report({"loss": float(str(config["x"])) + 1.0 / step})


def run(directory: Path, name: str = "exp") -> Path:
    Tuner(
        scoring,
        param_space={"x": tunecore.grid_search([1.0, 2.0, 3.0])},
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(
            name=name, storage_path=str(directory), verbose=0, executor="in_process"
        ),
    ).fit()
    return directory / name


def restore(directory: Path) -> ResultGrid:
    return Tuner.restore(str(directory), trainable=scoring).fit()


def record_offsets(directory: Path) -> list[int]:
    """The byte offset of every record (0 is the header)."""
    data = log_path(directory).read_bytes()
    offsets, offset = [], _PREAMBLE
    while offset < len(data):
        offsets.append(offset)
        (length,) = struct.unpack_from("<I", data, offset)
        offset += 8 + length
    return offsets


def flip(directory: Path, at: int, mask: int = 0xFF) -> bytes:
    """Flip the bits of `mask` in one byte of the log; the bytes before."""
    path = log_path(directory)
    before = path.read_bytes()
    data = bytearray(before)
    data[at] ^= mask
    path.write_bytes(bytes(data))
    return before


def quarantined(directory: Path) -> list[Path]:
    return sorted(directory.glob("events.log.quarantine-*"))


@pytest.mark.parametrize("prefix_byte", [1, 2, 3])
def test_a_damaged_length_prefix_mid_log_is_corruption_with_its_offset(
    tmp_path: Path, prefix_byte: int
) -> None:
    """Byte 1 or 2 of the prefix makes the frame claim more than remains
    (a checksum-valid frame after it shows it is mid-log); byte 3 makes it
    claim more than any record may hold."""
    directory = run(tmp_path)
    offsets = record_offsets(directory)
    damaged = offsets[len(offsets) // 3]
    flip(directory, damaged + prefix_byte, 0x40)
    damaged_bytes = log_path(directory).read_bytes()

    with pytest.raises(CorruptLogError) as caught:
        read_log(directory)
    assert caught.value.offset == damaged
    with pytest.raises(CorruptLogError):
        restore(directory)
    assert log_path(directory).read_bytes() == damaged_bytes  # nothing was cut
    assert SnapshotStore(directory).available()  # nor any snapshot moved
    assert quarantined(directory) == []


def test_the_last_record_claiming_more_than_a_record_may_hold_is_corruption(
    tmp_path: Path,
) -> None:
    directory = run(tmp_path)
    last = record_offsets(directory)[-1]
    flip(directory, last + 3, 0x40)  # claims more than MAX_RECORD_BYTES
    assert MAX_RECORD_BYTES < (0x40 << 24)
    with pytest.raises(CorruptLogError) as caught:
        read_log(directory)
    assert caught.value.offset == last


def test_replay_truncate_keeps_what_it_cuts_in_a_quarantine_file_it_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = run(tmp_path)
    offsets = record_offsets(directory)
    damaged = offsets[len(offsets) // 2]
    flip(directory, damaged + 2, 0x40)
    damaged_bytes = log_path(directory).read_bytes()
    snapshots = SnapshotStore(directory).available()

    assert main(["replay", str(directory), "--truncate"]) == 0

    out = capsys.readouterr().out
    [kept] = quarantined(directory)
    assert kept.name.startswith(f"events.log.quarantine-{damaged}-")
    assert kept.read_bytes() == damaged_bytes[damaged:]
    assert log_path(directory).read_bytes() == damaged_bytes[:damaged]
    assert str(kept) in out
    moved = sorted(SnapshotStore(directory).directory.glob("*.quarantine-*"))
    assert len(moved) == len(snapshots)  # every snapshot was past the cut: moved, not deleted
    for path in moved:
        assert str(path) in out


def test_a_log_shorter_than_its_snapshot_says_is_corruption(tmp_path: Path) -> None:
    directory = run(tmp_path)
    offsets = record_offsets(directory)
    path = log_path(directory)
    whole = path.read_bytes()
    for cut in (offsets[-2], offsets[-2] + 5):  # at a record's start, and mid-record
        path.write_bytes(whole[:cut])
        with pytest.raises(CorruptLogError, match="a snapshot says the log held") as caught:
            replay(directory)
        assert caught.value.offset == offsets[-2]
        with pytest.raises(CorruptLogError):
            restore(directory)
        assert path.read_bytes() == whole[:cut]  # nothing was cut, nothing moved
        assert len(SnapshotStore(directory).available()) >= 1
        assert quarantined(directory) == []


def test_a_resume_keeps_a_torn_tail_aside_and_names_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = run(tmp_path)
    path = log_path(directory)
    whole = path.read_bytes()
    torn = struct.pack("<II", 300, 0) + b"\x82\xa4type"  # a record the writer was writing
    path.write_bytes(whole + torn)
    with caplog.at_level(logging.WARNING):
        restore(directory)
    [kept] = quarantined(directory)
    assert kept.read_bytes() == torn
    assert kept.name.startswith(f"events.log.quarantine-{len(whole)}-")
    assert str(kept) in caplog.text
    assert replay(directory).state.done


def forge(directory: Path, change: dict[str, float]) -> int:
    """Rewrite the newest snapshot with a changed best result, its checksum
    recomputed (seal kept); the number of records it is after."""
    store = SnapshotStore(directory)
    records = store.available()[-1]
    snapshot = store.load(records)
    assert snapshot is not None
    state = decode_state(snapshot.state)
    trials = {
        trial_id: msgspec.structs.replace(trial, recorded_result={**trial.last_result, **change})
        for trial_id, trial in state.trials.items()
    }
    forged = msgspec.structs.replace(state, trials=state.trials.update(trials))
    store.write(
        records,
        snapshot.digest,
        encode_state(forged),
        log_bytes=snapshot.log_bytes,
        sealed=snapshot.seal,
    )
    return records


def test_a_forged_snapshot_is_ignored_and_the_results_come_from_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = run(tmp_path)
    forge(directory, {"loss": -999.0})
    with caplog.at_level(logging.WARNING):
        results = restore(directory)
    assert "its seal does not match" in caplog.text
    assert results.get_best_result().metrics["loss"] == pytest.approx(1.0 + 1.0 / 3)
    assert all(r.metrics["loss"] != -999.0 for r in results)
    assert replay(directory).state.done  # and replay ignores it too


def test_a_snapshot_whose_state_does_not_decode_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = run(tmp_path)
    contents = read_log(directory)
    store = SnapshotStore(directory)
    records = store.available()[-1]
    snapshot = store.load(records)
    assert snapshot is not None
    for junk in (b"\xc1 not msgpack", b"\x81\xa6format\x09"):
        sealed = seal(contents.prefix_hash(snapshot.log_bytes), junk)
        store.write(records, snapshot.digest, junk, log_bytes=snapshot.log_bytes, sealed=sealed)
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            rebuilt = rebuild(contents, directory)
        assert "does not decode" in caplog.text
        assert rebuilt.state == replay(directory, verify=False).state
    results = restore(directory)
    assert results.get_best_result().metrics["loss"] == pytest.approx(1.0 + 1.0 / 3)


def test_an_old_snapshot_without_a_seal_is_left_to_replay(tmp_path: Path) -> None:
    directory = run(tmp_path)
    store = SnapshotStore(directory)
    records = store.available()[-1]
    snapshot = store.load(records)
    assert snapshot is not None
    store.write(records, snapshot.digest, snapshot.state)  # as an older tunecore wrote it
    contents = read_log(directory)
    assert list(store.usable(contents)) == []
    assert replay(directory).snapshots_verified >= 1  # replay still checks it


def test_the_writer_refuses_a_record_beyond_the_limit_and_writes_nothing(
    tmp_path: Path,
) -> None:
    directory = run(tmp_path)
    contents = read_log(directory)
    writer = EventLogWriter.reopen(contents, fsync_interval_ms=0)
    with pytest.raises(RecordTooLargeError, match=str(MAX_RECORD_BYTES)):
        writer.append(ResultReported(trial_id="t", at=1.0, result={"blob": "x" * MAX_RECORD_BYTES}))
    writer.append(Tick(at=1.0))
    writer.close()
    assert read_log(directory).events == [*contents.events, Tick(at=1.0)]


def test_a_zeroed_tail_left_by_a_machine_crash_is_a_torn_tail(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = run(tmp_path)
    path = log_path(directory)
    whole = path.read_bytes()
    path.write_bytes(whole + bytes(4096))  # the size reached the disk, the blocks did not
    with caplog.at_level(logging.WARNING):
        contents = read_log(directory)
    assert contents.torn is not None
    assert contents.torn.offset == len(whole)
    assert contents.end == len(whole)
    restore(directory)
    [kept] = quarantined(directory)
    assert kept.read_bytes() == bytes(4096)


def test_zeroed_bytes_mid_log_are_corruption(tmp_path: Path) -> None:
    directory = run(tmp_path)
    path = log_path(directory)
    data = path.read_bytes()
    at = record_offsets(directory)[2]
    path.write_bytes(data[:at] + bytes(8) + data[at:])  # an empty frame, records after it
    with pytest.raises(CorruptLogError, match="an empty record") as raised:
        read_log(directory)
    assert raised.value.offset == at


def test_a_write_that_fails_midway_leaves_no_half_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = run(tmp_path)
    contents = read_log(directory)
    writer = EventLogWriter.reopen(contents, fsync_interval_ms=0)
    real_write = os.write
    calls = 0

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        """Write 5 bytes, then refuse: what a disk that fills up does."""
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data)[:5])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="No space"):
        writer.append(Tick(at=1.0))
    monkeypatch.setattr(os, "write", real_write)
    assert log_path(directory).stat().st_size == contents.end
    writer.append(Tick(at=2.0))
    writer.close()
    assert read_log(directory).events == [*contents.events, Tick(at=2.0)]


def test_a_short_write_is_continued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = run(tmp_path)
    contents = read_log(directory)
    writer = EventLogWriter.reopen(contents, fsync_interval_ms=0)
    real_write = os.write

    def three_bytes_at_a_time(fd: int, data: bytes | memoryview) -> int:
        return real_write(fd, bytes(data)[:3])

    monkeypatch.setattr(os, "write", three_bytes_at_a_time)
    writer.append(Tick(at=1.0))
    monkeypatch.setattr(os, "write", real_write)
    writer.close()
    assert read_log(directory).events == [*contents.events, Tick(at=1.0)]
