"""The state shipper (`shell/mirror/shipper.py`): a mirrored experiment's staging
directory reaches its store in increments, in an order that keeps every
stored state readable, through storage failures; `fetch_state` brings it
back. Against a `file://` store and an S3 server (moto, on 127.0.0.1)."""

from __future__ import annotations

import builtins
import contextlib
import functools
import logging
import os
import shutil
import tempfile
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.core.experiment.snapshot import encode_state
from tunecore.core.search import BasicVariantGenerator
from tunecore.model import StopRequested, Tick
from tunecore.model.codec import from_msgpack
from tunecore.shell.eventlog import (
    LOG_FILE,
    LOG_FORMAT,
    CorruptLogError,
    EventLogWriter,
    LogHeader,
    RunSettings,
    read_log,
)
from tunecore.shell.inbox import (
    MAX_REQUEST_BYTES,
    Inbox,
    StopTrialRequest,
    post_to_store,
    request_of,
)
from tunecore.shell.journal import EMPTY_DIGEST, SnapshotFile, SnapshotStore
from tunecore.shell.mirror import shipper as shipper_module
from tunecore.shell.mirror.fetched_files import RECORD_FILE, file_signature
from tunecore.shell.mirror.lease import Lease, LeaseKeeper, LeaseLostError, Renewer, read_lease
from tunecore.shell.mirror.shipper import StateShipper
from tunecore.shell.mirror.shipping_rules import COMPACT_COUNT, GROW_WAIT_S, STALE_S
from tunecore.shell.mirror.stored_state import (
    MAX_REQUESTS_PER_ROUND,
    delete_taken,
    fetch_requests,
    fetch_state,
    stored_log,
)
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.storage.resolve import within
from tunecore.shell.storage.store import Readable, Store

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem


@pytest.fixture(params=["file", "s3"])
def target(request: pytest.FixtureRequest) -> StorageTarget:
    fixture: StorageTarget = request.getfixturevalue(f"{request.param}_store")
    return fixture


class Recorder:
    """A store that records every write and deletion, and fails when told
    to: `fail(n)` makes the next `n` storage calls raise `OSError`, and
    `fail_writes_to(prefix)` every write under `prefix` until cleared."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.writes: list[tuple[str, bytes]] = []
        self.deletes: list[str] = []
        self.failing = 0
        self.failing_prefix: str | None = None
        self.failing_deletes = False
        self.on_write: Callable[[str, bytes], None] | None = None

    def fail(self, calls: int) -> None:
        self.failing = calls

    def _maybe_fail(self, rel: str) -> None:
        if self.failing > 0:
            self.failing -= 1
            raise OSError(f"{self.uri(rel)}: simulated outage")

    def uri(self, rel: str = "") -> str:
        return self.inner.uri(rel)

    def open_input(self, rel: str) -> contextlib.AbstractContextManager[Readable]:
        self._maybe_fail(rel)
        return self.inner.open_input(rel)

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        self._maybe_fail(rel)
        return self.inner.read_bytes(rel, limit)

    def write_bytes(self, rel: str, data: bytes) -> None:
        self._maybe_fail(rel)
        if self.failing_prefix is not None and rel.startswith(self.failing_prefix):
            raise OSError(f"{self.uri(rel)}: simulated outage")
        if self.on_write is not None:
            self.on_write(rel, data)
        self.inner.write_bytes(rel, data)
        self.writes.append((rel, data))

    def list(self, rel: str = "") -> list[str]:
        self._maybe_fail(rel)
        return self.inner.list(rel)

    def exists(self, rel: str) -> bool:
        return self.inner.exists(rel)

    def upload_dir(self, local: str, rel: str, *, marker: str | None = None) -> int:
        return self.inner.upload_dir(local, rel, marker=marker)

    def download_dir(self, rel: str, local: str) -> int:
        return self.inner.download_dir(rel, local)

    def copy_dir(self, src: str, dst: str, *, marker: str | None = None) -> None:
        self.inner.copy_dir(src, dst, marker=marker)

    def copy_file(self, src: str, dst: str) -> None:
        self.inner.copy_file(src, dst)

    def delete_dir(self, rel: str) -> None:
        self.inner.delete_dir(rel)

    def delete_file(self, rel: str) -> None:
        self._maybe_fail(rel)
        if self.failing_deletes:
            raise OSError(f"{self.uri(rel)}: simulated outage")
        self.inner.delete_file(rel)
        self.deletes.append(rel)

    def local_path(self, rel: str) -> str | None:
        return self.inner.local_path(rel)

    def shown(self, rel: str = "") -> str:
        return self.inner.shown(rel)

    def fs_path(self, rel: str = "") -> str:
        return self.inner.fs_path(rel)

    def under(self, rel: str) -> Store:
        return self.inner.under(rel)

    def filesystem(self) -> FileSystem:
        return self.inner.filesystem()

    def written(self, prefix: str) -> builtins.list[tuple[str, bytes]]:
        return [(rel, data) for rel, data in self.writes if rel.startswith(prefix)]


def header() -> LogHeader:
    state = new_experiment(
        ExperimentConfig(trainable_name="tests:train", trial_id_prefix="t"),
        searcher=BasicVariantGenerator({"x": 1}, num_samples=1),
    )
    return LogHeader(
        format=LOG_FORMAT,
        tunecore_version="test",
        name="exp",
        trainable="tests:train",
        settings=RunSettings(),
        initial_state=encode_state(state),
    )


class Staging:
    """A staging directory with a live event log, as the driver keeps one."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.dir = directory
        self.writer = EventLogWriter.create(directory, header())
        self.events = 0

    def append(self, count: int = 1, at: float | None = None) -> None:
        for _ in range(count):
            self.events += 1
            self.writer.append(Tick(at=float(self.events) if at is None else at))

    def size(self) -> int:
        return self.writer.size

    def log(self) -> bytes:
        return (self.dir / LOG_FILE).read_bytes()[: self.size()]

    def snapshot(self) -> None:
        SnapshotStore(self.dir).write(
            self.events, EMPTY_DIGEST, b"state", log_bytes=self.size(), sealed=b"seal"
        )

    def file(self, rel: str, text: str, mode: str = "w") -> None:
        path = self.dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open(mode) as handle:
            handle.write(text)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def staging(tmp_path: Path) -> Iterator[Staging]:
    stage = Staging(tmp_path / "staging" / "exp")
    yield stage
    stage.writer.close()


def shipper(store: Store, stage: Staging, clock: Clock | None = None) -> StateShipper:
    return StateShipper(store, stage.dir, stage.size, lag_s=0.01, clock=clock or Clock())


def read_back(store: Store, tmp_path: Path) -> Path:
    local = Path(tempfile.mkdtemp(dir=tmp_path))
    fetch_state(store, local)
    return local


# -- the event log --------------------------------------------------------------


def test_the_log_ships_in_increments_and_no_byte_twice(
    target: StorageTarget, staging: Staging, tmp_path: Path
) -> None:
    store = Recorder(within(target.store, "exp"))
    ship = shipper(store, staging)
    for round_ in range(COMPACT_COUNT - 1):
        staging.append(round_ + 1)
        assert ship.tick()
        if round_ == 3:
            assert ship.tick()  # nothing new: nothing uploaded

    segments = store.written("events/")
    assert len(segments) == COMPACT_COUNT - 1
    ranges = [tuple(int(n) for n in rel.split("_")[1:]) for rel, _ in segments]
    assert [r[0] for r in ranges] == [0] + [r[1] for r in ranges[:-1]]  # back to back
    assert ranges[-1][1] == staging.size()
    assert sum(len(data) for _, data in segments) == staging.size()  # each byte once
    assert ship.stats.log_bytes == ship.stats.bytes == staging.size()
    assert ship.stats.objects == COMPACT_COUNT - 1
    assert ship.stats.seconds > 0
    assert stored_log(store) == staging.log()
    assert read_log(read_back(store, tmp_path)).events == read_log(staging.dir).events


def test_compaction_keeps_the_chain_short_and_each_byte_reuploaded_once_per_generation(
    file_store: StorageTarget, staging: Staging
) -> None:
    store = Recorder(file_store.store)
    ship = shipper(store, staging)
    rounds = COMPACT_COUNT * COMPACT_COUNT + 3
    for _ in range(rounds):
        staging.append()
        ship.tick()

    # A counter in base 16: 259 = 1 * 256 + 0 * 16 + 3.
    assert len(store.list("events")) == 1 + 3
    assert stored_log(store) == staging.log()
    # Shipped once, merged at most twice more (generations 1 and 2).
    assert ship.stats.log_bytes == staging.size()
    assert ship.stats.compacted_bytes <= 2 * staging.size()
    assert not set(store.deletes) & set(store.list("events"))


def test_compaction_works_on_s3_too(s3_store: StorageTarget, staging: Staging) -> None:
    ship = shipper(s3_store.store, staging)
    for _ in range(COMPACT_COUNT + 2):
        staging.append()
        ship.tick()
    assert len(s3_store.store.list("events")) == 3
    assert stored_log(s3_store.store) == staging.log()


def test_a_reader_of_a_half_shipped_store_gets_a_valid_prefix(
    target: StorageTarget, staging: Staging, tmp_path: Path
) -> None:
    ship = shipper(target.store, staging)
    staging.append(3)
    ship.tick()
    shipped = staging.size()
    staging.append(5)  # written, not shipped (the driver is killed now)

    contents = read_log(read_back(target.store, tmp_path))
    assert contents.end == shipped
    assert contents.torn is None
    assert [e.at for e in contents.events] == [1.0, 2.0, 3.0]


def test_a_gap_in_the_stored_log_followed_by_more_is_damage_at_its_offset(
    target: StorageTarget, staging: Staging, tmp_path: Path
) -> None:
    """A killed shipper never leaves a gap: one with objects after it is
    damage (it was read as a shorter log, and a resume deleted the rest)."""
    ship = shipper(target.store, staging)
    ends = []
    for _ in range(3):
        staging.append(2)
        ship.tick()
        ends.append(staging.size())
    target.store.delete_file(f"events/seg_{ends[0]:016d}_{ends[1]:016d}")

    with pytest.raises(CorruptLogError, match=rf"offset {ends[0]} .*gap"):
        stored_log(target.store)
    with pytest.raises(CorruptLogError, match=rf"offset {ends[0]} "):
        read_back(target.store, tmp_path)
    assert len(target.store.list("events")) == 2  # nothing deleted


@pytest.mark.parametrize("damage", ["zeros", "flip", "short", "long"])
def test_a_damaged_stored_segment_is_damage_never_a_torn_tail(
    target: StorageTarget, staging: Staging, tmp_path: Path, damage: str
) -> None:
    """A stored piece of the log is whole records: zeros there (or any
    other damage) are no crash's torn tail, and are found without reading
    the piece whole."""
    ship = shipper(target.store, staging)
    staging.append(2)
    ship.tick()
    start = staging.size()
    staging.append(3)
    ship.tick()
    end = staging.size()
    name = f"events/seg_{start:016d}_{end:016d}"
    data = target.store.read_bytes(name)
    broken = {
        "zeros": bytes(len(data)),
        "flip": data[:-1] + bytes([data[-1] ^ 1]),
        "short": data[:-3],
        "long": data + b"x",
    }[damage]
    target.store.write_bytes(name, broken)
    with pytest.raises(CorruptLogError, match=rf"offset {start if damage == 'zeros' else ''}"):
        stored_log(target.store)


def test_a_huge_zero_filled_segment_is_refused_in_its_first_bytes(
    file_store: StorageTarget, staging: Staging, tmp_path: Path
) -> None:
    ship = shipper(file_store.store, staging)
    staging.append(2)
    ship.tick()
    start = staging.size()
    huge = 256 << 20
    path = Path(file_store.store.local_path(f"events/seg_{start:016d}_{start + huge:016d}") or "")
    with path.open("wb") as file:
        file.truncate(huge)  # sparse: no disk used
    tracemalloc.start()
    try:
        with pytest.raises(CorruptLogError, match=rf"offset {start} .*empty record"):
            stored_log(file_store.store)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20


def test_a_reader_racing_a_compaction_reads_the_log_again(
    file_store: StorageTarget, staging: Staging
) -> None:
    ship = shipper(file_store.store, staging)
    for _ in range(COMPACT_COUNT - 1):
        staging.append()
        ship.tick()
    staging.append()

    class CompactsUnderTheReader(Recorder):
        def open_input(self, rel: str) -> contextlib.AbstractContextManager[Readable]:
            if ship.shipped < staging.size():
                ship.tick()  # merges and deletes what the reader listed
            return super().open_input(rel)

    assert stored_log(CompactsUnderTheReader(file_store.store)) == staging.log()
    assert len(file_store.store.list("events")) == 1


def test_objects_a_compaction_could_not_delete_are_outranked_then_deleted(
    file_store: StorageTarget, staging: Staging
) -> None:
    store = Recorder(file_store.store)
    ship = shipper(store, staging)
    store.failing_deletes = True
    for _ in range(COMPACT_COUNT + 2):
        staging.append()
        ship.tick()
    # The merged object and the 16 it covers are all there; shipping goes on.
    assert len(store.list("events")) == 1 + COMPACT_COUNT + 2
    assert ship.shipped == staging.size()
    # A reader that finds only some of them still reads the whole log.
    store.inner.delete_file("events/" + store.list("events")[2])
    assert stored_log(store) == staging.log()

    store.failing_deletes = False
    ship.tick()
    assert len(store.list("events")) == 3
    assert stored_log(store) == staging.log()


# -- snapshots ------------------------------------------------------------------


def test_snapshots_arrive_only_after_the_log_they_cover(
    target: StorageTarget, staging: Staging
) -> None:
    store = Recorder(target.store)
    arrivals: list[tuple[int, int]] = []  # (log bytes stored, log bytes covered)

    def check_covered(rel: str, data: bytes) -> None:
        if rel.startswith("snapshots/"):
            snapshot = from_msgpack(data[4:], SnapshotFile)
            arrivals.append((len(stored_log(target.store)), snapshot.log_bytes))

    store.on_write = check_covered
    ship = shipper(store, staging)
    staging.append(2)
    staging.snapshot()
    store.failing_prefix = "events/"  # the log cannot ship: neither can the snapshot
    ship.tick()
    assert store.written("snapshots/") == []

    store.failing_prefix = None
    ship.tick()
    assert [rel for rel, _ in store.written("snapshots/")] == [
        "snapshots/snapshot_000000000002.msgpack"
    ]

    for _ in range(3):  # the driver keeps 2: the oldest stored one goes too
        staging.append()
        staging.snapshot()
        ship.tick()
    assert store.list("snapshots") == sorted(os.listdir(staging.dir / "snapshots"))
    assert len(store.list("snapshots")) == 2
    assert len(arrivals) == 4
    assert all(stored >= covered > 0 for stored, covered in arrivals)


# -- trial files ----------------------------------------------------------------


def test_trial_files_follow_the_throttle(target: StorageTarget, staging: Staging) -> None:
    clock = Clock()
    store = Recorder(target.store)
    ship = shipper(store, staging, clock)

    def uploads(name: str) -> int:
        return len(store.written(f"trial_1/{name}"))

    staging.file("trial_1/params.json", '{"lr": 0.1}')
    staging.file("trial_1/result.json", "x" * 100 + "\n")
    ship.tick()
    assert uploads("params.json") == 1
    assert uploads("result.json") == 0  # new, maybe growing

    staging.file("trial_1/result.json", "x" * 100 + "\n", "a")
    clock.now += 30
    ship.tick()
    assert uploads("result.json") == 0  # growing, not yet 60 s
    staging.file("trial_1/result.json", "x" * 100 + "\n", "a")
    clock.now += GROW_WAIT_S
    ship.tick()
    assert uploads("result.json") == 1  # 60 s and grown by more than 10 %

    for _ in range(5):  # grows by less than 10 % each time, for a while
        staging.file("trial_1/result.json", "y\n", "a")
        clock.now += GROW_WAIT_S
        ship.tick()
    assert uploads("result.json") == 1
    staging.file("trial_1/result.json", "y\n", "a")
    clock.now += STALE_S
    ship.tick()
    assert uploads("result.json") == 2  # 10 minutes: uploaded anyway

    staging.file("trial_1/result.json", "z\n", "a")
    clock.now += 1
    ship.tick()
    assert uploads("result.json") == 2
    clock.now += 1
    ship.tick()  # unchanged since the last tick: the trial paused or ended
    assert uploads("result.json") == 3
    assert (
        target.store.read_bytes("trial_1/result.json")
        == (staging.dir / "trial_1/result.json").read_bytes()
    )

    staging.file("trial_1/params.json", '{"lr": 0.2}')
    staging.file("trial_1/error.txt", "boom")
    ship.tick()
    assert uploads("params.json") == 2
    assert uploads("error.txt") == 1
    ship.tick()
    assert len(store.written("trial_1/")) == 6  # nothing changed, nothing uploaded


def test_a_trial_directory_swapped_for_a_link_after_its_listing_is_not_read_through(
    file_store: StorageTarget,
    staging: Staging,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The shipper lists a trial directory without following links, then
    reads the files it found, in its upload threads: a trial directory
    replaced by a link in between had its files read through the link, so
    the other directory's files (someone's secrets) were uploaded into the
    storage under the trial's name. The swap is made deterministic by
    making it as the listing takes the file's signature."""
    theirs = tmp_path / "someone_else"
    theirs.mkdir()
    (theirs / "params.json").write_text("secret")
    staging.file("trial_2/params.json", '{"lr": 0.1}')
    listed = file_signature

    def swap_once_listed(path: Path) -> tuple[int, int, int] | None:
        signature = listed(path)
        if path == staging.dir / "trial_2/params.json":
            shutil.rmtree(staging.dir / "trial_2")
            (staging.dir / "trial_2").symlink_to(theirs, target_is_directory=True)
        return signature

    monkeypatch.setattr(shipper_module, "file_signature", swap_once_listed)
    store = Recorder(file_store.store)
    with caplog.at_level(logging.WARNING):
        shipper(store, staging).tick()
    assert [data for _, data in store.written("trial_2/")] == []
    assert "trial_2/params.json is not shipped" in caplog.text
    assert "a symbolic link in place of a directory" in caplog.text


def test_checkpoints_and_the_drivers_own_files_are_never_shipped(
    file_store: StorageTarget, staging: Staging
) -> None:
    ship = shipper(file_store.store, staging)
    for rel in [
        "trial_1/checkpoint_000001/model.bin",
        "trial_1/exploit_000001/model.bin",
        "trial_1/worker_checkpoints/checkpoint_000002/x",
        "trial_1/.result.json.abc123",  # a temporary file mid-rename
        "trial_1/progress.csv.tmp-0123456789abcdef",
        "trial_1/sub/notes.txt",
        "driver.lock",
        ".tunecore_storage",
        "inbox/stop.json",
        "snapshots/.snapshot_000000000001.msgpack.0123456789abcdef",  # one mid-rename
    ]:
        staging.file(rel, "x")
    staging.append()
    ship.close()

    stored = {
        os.path.relpath(os.path.join(d, f), file_store.store.local_path("") or "")
        for d, _, fs in os.walk(file_store.store.local_path("") or "")
        for f in fs
    }
    assert stored == {"trial_1/sub/notes.txt", f"events/seg_{0:016d}_{staging.size():016d}"}


# -- failures, actions, close ---------------------------------------------------


def test_a_store_that_fails_for_a_while_loses_nothing(
    target: StorageTarget, staging: Staging, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    store = Recorder(target.store)
    ship = shipper(store, staging, clock)
    done: list[int] = []

    def action(round_: int, written: int) -> None:  # the log bytes written when it was asked
        assert len(stored_log(target.store)) >= written
        done.append(round_)

    staging.append(2)
    ship.tick()
    store.fail(3)  # the next three calls
    for round_ in range(4):
        staging.append()
        staging.snapshot()
        staging.file(f"trial_{round_}/params.json", f"{round_}")
        staging.file(f"trial_{round_}/result.json", "r\n" * round_)
        ship.after_shipped(functools.partial(action, round_, staging.size()))
        clock.now += 1
        if round_ == 1:
            store.fail(10)  # a longer outage
        with caplog.at_level(logging.WARNING, logger="tunecore.shell.mirror.shipper"):
            ship.tick()
    staging.file("trial_3/result.json", "more\n", "a")
    assert not ship.tick()  # a growing result file waits for the throttle...
    ship.close()  # ...but close ships everything

    assert stored_log(target.store) == staging.log()
    assert done == [0, 1, 2, 3]
    back = read_back(target.store, tmp_path)
    for round_ in range(4):
        for name in ("params.json", "result.json"):
            rel = f"trial_{round_}/{name}"
            assert (back / rel).read_bytes() == (staging.dir / rel).read_bytes()
    assert sorted(os.listdir(back / "snapshots")) == sorted(os.listdir(staging.dir / "snapshots"))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    kinds = [r.getMessage().split(": ")[1].split(" failed")[0] for r in warnings]
    assert len(kinds) == len(set(kinds)) >= 1  # once per kind of failure
    assert ship.stats.failures >= 10


def test_after_shipped_waits_for_the_log_and_survives_a_failing_action(
    file_store: StorageTarget, staging: Staging, caplog: pytest.LogCaptureFixture
) -> None:
    ship = shipper(file_store.store, staging)
    ran: list[str] = []

    def boom() -> None:
        raise RuntimeError("the action failed")

    staging.append()
    ship.after_shipped(boom)
    ship.after_shipped(lambda: ran.append(stored_log(file_store.store).hex()))
    assert ran == []
    ship.start()
    ship.close()

    assert ran == [staging.log().hex()]  # ran after, and despite, the failing one
    assert "the action failed" in caplog.text
    ship.after_shipped(lambda: ran.append("late"))  # after close: at once
    assert ran[-1] == "late"


def test_close_ships_everything_whatever_the_throttle(
    s3_store: StorageTarget, staging: Staging
) -> None:
    ship = StateShipper(s3_store.store, staging.dir, staging.size, lag_s=3600.0)
    ship.start()
    staging.append(4)
    staging.snapshot()
    staging.file("trial_1/result.json", "growing\n")
    ship.close(timeout=30.0)

    assert stored_log(s3_store.store) == staging.log()
    assert s3_store.store.read_bytes("trial_1/result.json") == b"growing\n"
    assert s3_store.store.list("snapshots") == ["snapshot_000000000004.msgpack"]


def test_close_does_not_chase_a_file_that_keeps_changing(
    file_store: StorageTarget, staging: Staging, caplog: pytest.LogCaptureFixture
) -> None:
    store = Recorder(file_store.store)

    def busy_driver(rel: str, _data: bytes) -> None:  # each upload: more to upload
        if rel.endswith("result.json"):
            staging.append()
            staging.file("trial_1/result.json", "more\n", "a")

    store.on_write = busy_driver
    staging.file("trial_1/result.json", "first\n")
    ship = shipper(store, staging)
    ship.close(timeout=5.0)
    assert len(store.written("trial_1/result.json")) == 2  # not once per retry until timeout
    assert "could not ship" not in caplog.text


def test_close_gives_up_at_its_timeout_and_says_what_is_left(
    file_store: StorageTarget, staging: Staging, caplog: pytest.LogCaptureFixture
) -> None:
    store = Recorder(file_store.store)
    store.fail(10**9)  # storage is gone for good
    staging.append(3)
    ship = shipper(store, staging)
    ship.start()
    ship.close(timeout=0.5)
    assert f"left: {staging.size()} bytes of the event log" in caplog.text
    assert stored_log(file_store.store) == b""


def test_a_new_shipper_goes_on_from_what_storage_holds(
    target: StorageTarget, staging: Staging, tmp_path: Path
) -> None:
    first = shipper(target.store, staging)
    staging.append(3)
    first.close()
    staging.append(2)
    store = Recorder(target.store)
    second = shipper(store, staging)
    second.close()
    assert second.stats.log_bytes == staging.size() - first.stats.log_bytes
    assert stored_log(target.store) == staging.log()

    # Another log in the same place (a staging directory from elsewhere):
    # what does not match it is replaced, never mixed in.
    other = Staging(tmp_path / "other" / "exp")
    other.append(1)  # the same first record...
    other.append(1, at=99.0)  # ...then another
    store = Recorder(target.store)
    store.failing_deletes = True
    third = shipper(store, other)
    third.tick()
    # What it cannot delete yet would outrank its own objects: it waits.
    assert store.written("events/") == []
    assert third.shipped == 0
    store.failing_deletes = False
    third.close()
    assert stored_log(target.store) == other.log()
    other.writer.close()


def test_a_fetched_file_goes_back_only_once_the_driver_changed_it(
    target: StorageTarget, staging: Staging, tmp_path: Path
) -> None:
    """A resume fetches every trial file, the workers' outputs among them,
    and its shipper uploaded each once: the fetched `out.txt` replaced the
    one the resumed trial's worker had stored meanwhile, and stayed. Now a
    file as it was fetched is never uploaded; one the driver changed is."""
    staging.append(2)
    staging.file("trial_1/result.json", "row 1\n")
    staging.file("trial_1/out.txt", "run 1\n")
    shipper(target.store, staging).close()
    resumed = Path(tempfile.mkdtemp(dir=tmp_path))
    fetch_state(target.store, resumed)
    target.store.write_bytes("trial_1/out.txt", b"run 1\nrun 2\n")  # the resumed worker's
    with (resumed / "trial_1" / "result.json").open("a") as rows:
        rows.write("row 2\n")  # the resumed driver's

    store = Recorder(target.store)
    StateShipper(store, resumed, staging.size, lag_s=0.01, clock=Clock()).close()

    assert store.written("trial_1/out.txt") == []
    assert target.store.read_bytes("trial_1/out.txt") == b"run 1\nrun 2\n"
    assert target.store.read_bytes("trial_1/result.json") == b"row 1\nrow 2\n"


def test_a_record_of_fetched_files_that_does_not_decode_ships_everything(
    file_store: StorageTarget, staging: Staging, caplog: pytest.LogCaptureFixture
) -> None:
    staging.file("trial_1/out.txt", "run 1\n")
    (staging.dir / RECORD_FILE).write_text("{not json")
    shipper(file_store.store, staging).close()
    assert file_store.store.read_bytes("trial_1/out.txt") == b"run 1\n"
    assert f"{RECORD_FILE}: not a record" in caplog.text


# -- a real experiment, there and back ------------------------------------------


def test_fetch_state_brings_back_a_real_experiment(target: StorageTarget, tmp_path: Path) -> None:
    def train(config: dict[str, object]) -> None:
        for step in range(3):
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "step.txt").write_text(str(step))
                tunecore.report(
                    {"loss": float(config["a"]) * step},  # type: ignore[arg-type]
                    checkpoint=tunecore.Checkpoint.from_directory(directory),
                )

    runs = tmp_path / "runs"
    tunecore.Tuner(
        train,
        param_space={"a": tunecore.grid_search([1, 2])},
        run_config=tunecore.RunConfig(executor="in_process", storage_path=str(runs), name="exp"),
    ).fit()
    local = runs / "exp"
    size = (local / LOG_FILE).stat().st_size
    ship = StateShipper(within(target.store, "exp"), local, lambda: size, lag_s=1.0)
    ship.close()

    back = tmp_path / "back"
    fetch_state(within(target.store, "exp"), back)
    assert read_log(back).events == read_log(local).events
    trial_files = {
        str(p.relative_to(local))
        for p in local.glob("*/*")
        if p.is_file() and p.parent.name != "snapshots"
    }
    assert {"params.json", "result.json", "progress.csv"} <= {Path(f).name for f in trial_files}
    for rel in trial_files:
        assert (back / rel).read_bytes() == (local / rel).read_bytes()
    assert list(back.glob("*/checkpoint_*")) == []  # checkpoints are never shipped
    assert list(local.glob("*/checkpoint_*"))
    assert sorted(os.listdir(back / "snapshots")) == sorted(os.listdir(local / "snapshots"))
    assert not (back / "driver.lock").exists()


def test_fetch_state_of_an_empty_store_names_it(file_store: StorageTarget, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no event log stored"):
        fetch_state(LocalStore(str(tmp_path / "nothing")), tmp_path / "back")


# -- requests posted to the stored inbox ----------------------------------------


def test_requests_posted_to_the_store_reach_the_local_inbox(
    target: StorageTarget, staging: Staging
) -> None:
    """`tunecore stop|add URI` posts to the store; each round moves what is
    there into the staging inbox, where the loop reads (and checks) it.
    Names that are no request, and objects too large to be one, are only
    deleted."""
    store = within(target.store, "exp")
    posted = post_to_store(store, StopTrialRequest(trial_id="t1"))
    assert posted.startswith(store.uri("inbox"))
    store.write_bytes("inbox/notes.txt", b"not a request")
    store.write_bytes("inbox/huge.json", b" " * (MAX_REQUEST_BYTES + 1))
    shipper(store, staging).requests.fetch()
    assert store.list("inbox") == [posted.rpartition("/")[2]]  # until its log is stored
    [request] = Inbox(staging.dir).take(at=1.0)
    assert isinstance(request, StopRequested)
    assert request.trial_id == "t1"


def test_a_stored_request_that_is_a_directory_is_skipped_removed_and_the_rest_taken(
    target: StorageTarget, staging: Staging, caplog: pytest.LogCaptureFixture
) -> None:
    """S3 key `inbox/0.json/x` (or a directory on `file://`) used to make
    every resume exit 1 and jam a running driver's inbox."""
    store = within(target.store, "exp")
    store.write_bytes("inbox/00000000000000000000-1-000000.json/x", b"{}")
    posted = post_to_store(store, StopTrialRequest(trial_id="t1"))
    ship = shipper(store, staging)
    with caplog.at_level(logging.WARNING):
        ship.requests.fetch()  # raises if the fetch fails
    assert "skipped a request that is a directory" in caplog.text
    assert caplog.text.count("00000000000000000000-1-000000.json") == 1
    assert store.list("inbox") == [posted.rpartition("/")[2]]
    [request] = Inbox(staging.dir).take(at=1.0)
    assert isinstance(request, StopRequested)


def test_a_stored_directory_of_another_name_in_the_inbox_takes_nothing_down(
    target: StorageTarget, staging: Staging
) -> None:
    """A directory named as no request (`inbox/junk/x`: an experiment
    someone started inside this one's `inbox`) was removed as a file: on
    `file://` that raised `OSError` (EISDIR) out of every resume."""
    store = within(target.store, "exp")
    store.write_bytes("inbox/junk/x", b"{}")
    posted = post_to_store(store, StopTrialRequest(trial_id="t1"))
    shipper(store, staging).requests.fetch()
    assert store.list("inbox") == [posted.rpartition("/")[2]]
    [request] = Inbox(staging.dir).take(at=1.0)
    assert isinstance(request, StopRequested)


def test_a_huge_stored_request_is_never_read_whole(target: StorageTarget, staging: Staging) -> None:
    import tracemalloc  # noqa: PLC0415

    store = within(target.store, "exp")
    store.write_bytes("inbox/00000000000000000000-1-000000.json", b" " * (64 << 20))
    ship = shipper(store, staging)
    tracemalloc.start()
    try:
        ship.requests.fetch()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
    assert store.list("inbox") == []


def test_a_flood_of_stored_requests_is_taken_a_bounded_number_per_round(
    file_store: StorageTarget, staging: Staging
) -> None:
    store = within(file_store.store, "exp")
    for index in range(250):
        post_to_store(store, StopTrialRequest(trial_id=f"t{index}"))
    ship = shipper(store, staging)
    ship.requests.fetch()
    assert len(Inbox(staging.dir).take(at=1.0)) == MAX_REQUESTS_PER_ROUND
    ship.requests.fetch()
    ship.requests.fetch()
    taken = Inbox(staging.dir).take(at=2.0)
    assert len(taken) == 250 - MAX_REQUESTS_PER_ROUND
    ship.requests.fetch()
    assert Inbox(staging.dir).take(at=3.0) == []  # none copied twice


def test_a_stored_request_is_deleted_only_once_the_log_recording_it_is_stored(
    file_store: StorageTarget, staging: Staging, tmp_path: Path
) -> None:
    """The driver dies after taking a request but before the segment that
    logs it is stored: the request is still in storage for the resume."""
    store = within(file_store.store, "exp")
    name = post_to_store(store, StopTrialRequest(trial_id="t1")).rpartition("/")[2]
    ship = shipper(store, staging)
    ship.requests.fetch()
    [event] = Inbox(staging.dir).take(at=1.0)
    assert request_of(event) == name
    staging.writer.append(event)
    ship.after_shipped(lambda: delete_taken(store, [name]))
    assert store.list("inbox") == [name]  # killed here: nothing lost
    elsewhere = tmp_path / "elsewhere"
    assert fetch_requests(store, elsewhere) == [name]
    assert fetch_requests(store, elsewhere, logged={name}) == []
    assert store.list("inbox") == []  # a log that records it: only deleted
    post_to_store(store, StopTrialRequest(trial_id="t2"))
    ship.tick()  # the log reaches storage, then the taken request goes
    assert len(store.list("inbox")) == 1


# -- the lease -------------------------------------------------------------------


def test_a_driver_whose_lease_another_took_stops_before_writing_anything_more(
    target: StorageTarget, staging: Staging
) -> None:
    """Driver A is frozen past its lease's lapse; driver B takes it over.
    When A thaws, its next round finds B's token: it stops, naming B, and
    never overwrites B's lease or ships another byte."""
    store = Recorder(within(target.store, "exp"))
    a = LeaseKeeper(store)
    a.take()
    lost: list[LeaseLostError] = []
    ship = StateShipper(store, staging.dir, staging.size, lag_s=0.01, lease=a, on_lost=lost.append)
    staging.append(2)
    ship.tick()
    b = LeaseKeeper(within(target.store, "exp"))
    frozen = msgspec.json.decode(store.read_bytes("driver.lease"), type=Lease)
    store.inner.write_bytes(
        "driver.lease",
        msgspec.json.encode(msgspec.structs.replace(frozen, renewed=frozen.renewed - 62)),
    )
    b.take()  # A's lease lapsed 62 s ago: B takes it, as designed
    writes = len(store.writes)
    staging.append(3)

    assert ship.renewer is not None
    for _ in range(2):  # what each of the thread's rounds does first
        assert not ship.renewer.renew_now()
        ship.tick(force=True)

    assert store.writes[writes:] == []  # nothing more from A
    [error] = lost
    assert f"pid {os.getpid()}" in str(error)
    assert "generation 2" in str(error)
    assert read_lease(store.inner) == read_lease(within(target.store, "exp"))
    held = read_lease(store.inner)
    assert held is not None
    assert held.token == b.token
    with pytest.raises(LeaseLostError):
        a.renew()


def test_the_lease_is_renewed_on_its_own_schedule_while_a_round_is_stuck(
    file_store: StorageTarget, staging: Staging
) -> None:
    """A round stuck in storage (2,000 requests took one 59 s on the local
    S3 server) must not let the lease lapse."""
    release, renewed = threading.Event(), threading.Event()
    renewals = []

    class SlowInbox(Recorder):
        def list(self, rel: str = "") -> builtins.list[str]:
            if rel == "inbox":
                release.wait(timeout=30)
            return super().list(rel)

        def write_bytes(self, rel: str, data: bytes) -> None:
            super().write_bytes(rel, data)
            if rel == "driver.lease":
                renewals.append(data)
                if len(renewals) >= 4:
                    renewed.set()

    store = SlowInbox(within(file_store.store, "exp"))
    keeper = LeaseKeeper(store)
    keeper.take()
    ship = StateShipper(store, staging.dir, staging.size, lag_s=0.02, lease=keeper)
    ship.start()
    try:
        assert renewed.wait(timeout=20), "the lease was not renewed while the round was stuck"
    finally:
        release.set()
        ship.close(timeout=5)


def test_a_tick_only_ships_and_a_round_renews_the_lease_and_fetches_requests_first(
    file_store: StorageTarget, staging: Staging
) -> None:
    """Each job on its own: `tick` neither renews the lease nor copies a
    request; the thread's `round` renews the lease, fetches the requests,
    then ticks."""
    store = Recorder(within(file_store.store, "exp"))
    keeper = LeaseKeeper(store)
    keeper.take()
    post_to_store(store.inner, StopTrialRequest(trial_id="t1"))
    ship = StateShipper(store, staging.dir, staging.size, lag_s=60.0, lease=keeper)
    staging.append(1)
    writes = len(store.writes)

    assert ship.tick()

    shipped = [rel for rel, _ in store.writes[writes:]]
    assert "driver.lease" not in shipped
    assert any(rel.startswith("events/seg_") for rel in shipped), shipped
    assert Inbox(staging.dir).take(at=1.0) == []
    writes = len(store.writes)

    assert ship.round()

    assert [rel for rel, _ in store.writes[writes:]] == ["driver.lease"]  # nothing new to ship
    [request] = Inbox(staging.dir).take(at=1.0)
    assert isinstance(request, StopRequested)


def test_the_renewer_renews_on_demand_and_tells_a_loss(
    file_store: StorageTarget, staging: Staging
) -> None:
    """`Renewer.renew_now`, alone (no thread, no shipper): it writes the
    lease at once while this driver holds it; once another driver took the
    experiment over it writes nothing, says False and tells `on_lost`."""
    store = Recorder(within(file_store.store, "exp"))
    a = LeaseKeeper(store)
    a.take()
    lost: list[LeaseLostError] = []
    renewer = Renewer(a, 3600.0, lost.append)
    writes = len(store.writes)

    assert renewer.renew_now()

    assert [rel for rel, _ in store.writes[writes:]] == ["driver.lease"]
    assert lost == []
    held = msgspec.json.decode(store.read_bytes("driver.lease"), type=Lease)
    store.inner.write_bytes(
        "driver.lease",
        msgspec.json.encode(msgspec.structs.replace(held, renewed=held.renewed - 62)),
    )
    b = LeaseKeeper(within(file_store.store, "exp"))
    b.take()
    writes = len(store.writes)

    assert not renewer.renew_now()

    assert store.writes[writes:] == []
    [error] = lost
    assert "took this experiment over" in str(error)
    stored = read_lease(store.inner)
    assert stored is not None
    assert stored.token == b.token
    renewer.close()  # never started: nothing to join
