"""Fencing a stale driver (issue 37, item 4): driver A freezes in the middle
of a shipping round, past its lease's lapse; driver B takes the experiment
over and resumes it; then A thaws and its round goes on. Whatever A writes
after the take-over must not change what B's readers read (the log, the
snapshots, the stored inbox). The freeze is a hook in A's store that runs
B's whole take-over, in the same thread, when A reaches a given write: no
timing, no sleep. Against a `file://` store and an S3 server."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest

from tests.shell.test_shipper import Recorder, Staging
from tests.storage_fixtures import StorageTarget
from tunecore.model import Tick
from tunecore.shell.eventlog import LOG_FILE, EventLogWriter, read_log
from tunecore.shell.inbox import Inbox, StopTrialRequest, post_to_store, request_of
from tunecore.shell.journal import SnapshotStore
from tunecore.shell.lock import ExperimentLockedError
from tunecore.shell.mirror.claims import fence_name
from tunecore.shell.mirror.lease import Lease, LeaseKeeper, LeaseLostError, read_lease
from tunecore.shell.mirror.shipper import StateShipper
from tunecore.shell.mirror.shipping_rules import COMPACT_COUNT
from tunecore.shell.mirror.stored_state import (
    Segment,
    delete_taken,
    fetch_state,
    segment_name,
    stored_log,
    stored_objects,
)
from tunecore.shell.storage.resolve import within
from tunecore.shell.storage.store import Store


@pytest.fixture(params=["file", "s3"])
def target(request: pytest.FixtureRequest) -> StorageTarget:
    fixture: StorageTarget = request.getfixturevalue(f"{request.param}_store")
    return fixture


class Frozen(Recorder):
    """Driver A's store: `freeze(prefix, takeover)` runs `takeover` (A is
    frozen there) when A next writes under `prefix`, before that write
    lands, or just after it with `after=True`."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self._armed: tuple[str, Callable[[], None], bool] | None = None

    def freeze(self, prefix: str, takeover: Callable[[], None], *, after: bool = False) -> None:
        self._armed = prefix, takeover, after

    def write_bytes(self, rel: str, data: bytes) -> None:
        if self._armed is None or not rel.startswith(self._armed[0]):
            super().write_bytes(rel, data)
            return
        _prefix, takeover, after = self._armed
        self._armed = None
        if not after:
            takeover()
        super().write_bytes(rel, data)
        if after:
            takeover()


class Resumed:
    """Driver B: resumes the stored experiment on another machine, as
    `Tuner.restore(URI)` does: takes the lease, then reads the storage."""

    def __init__(self, store: Store, directory: Path) -> None:
        self.store = store
        self.lease = LeaseKeeper(store)
        self.lease.take()
        fetch_state(store, directory)
        self.dir = directory
        self.writer = EventLogWriter.reopen(read_log(directory), 0)
        self.shipper = StateShipper(store, directory, self.size, lag_s=0.01, lease=self.lease)
        self.shipper.tick()  # its start: the fence, before anything else

    def size(self) -> int:
        return self.writer.size

    def append(self, count: int) -> None:
        for number in range(count):
            self.writer.append(Tick(at=1000.0 + number))

    def log(self) -> bytes:
        return (self.dir / LOG_FILE).read_bytes()[: self.size()]


def lapse(store: Store) -> None:
    """A's lease as a driver frozen for 62 s leaves it."""
    held = msgspec.json.decode(store.read_bytes("driver.lease"), type=Lease)
    store.write_bytes(
        "driver.lease",
        msgspec.json.encode(msgspec.structs.replace(held, renewed=held.renewed - 62)),
    )


@pytest.fixture
def driver_a(
    target: StorageTarget, tmp_path: Path
) -> Iterator[tuple[Frozen, Staging, StateShipper]]:
    """Driver A, with `COMPACT_COUNT - 1` log objects stored: its next
    shipment also compacts."""
    store = Frozen(within(target.store, "exp"))
    lease = LeaseKeeper(store)
    lease.take()
    staging = Staging(tmp_path / "a" / "exp")
    ship = StateShipper(store, staging.dir, staging.size, lag_s=0.01, lease=lease)
    for _ in range(COMPACT_COUNT - 1):
        staging.append(1)
        ship.tick()
    yield store, staging, ship
    staging.writer.close()


def read_as_a_reader(store: Store, tmp_path: Path) -> bytes:
    """What `status`, a resume or `ResultGrid.from_path` read: the state
    fetched, the log read against its snapshots (`covered`)."""
    local = Path(tempfile.mkdtemp(dir=tmp_path))
    fetch_state(store, local)
    read_log(local, covered=SnapshotStore(local).covered())  # no snapshot past the log
    return (local / LOG_FILE).read_bytes()


@pytest.mark.parametrize(
    ("frozen_at", "after"),
    [
        ("driver.lease", True),  # just after its renewal: its whole round is stale
        ("events/seg_", False),  # with its next log object under way: and its compaction
    ],
)
def test_a_stale_drivers_writes_after_the_take_over_never_reach_the_readers(
    driver_a: tuple[Frozen, Staging, StateShipper],
    tmp_path: Path,
    frozen_at: str,
    after: bool,
) -> None:
    store, staging, ship = driver_a
    taken: list[Resumed] = []
    marks: list[int] = []

    def takeover() -> None:
        marks.append(len(store.writes))
        lapse(store.inner)
        b = Resumed(store.inner, tmp_path / "b" / "exp")
        b.append(2)
        b.shipper.tick()
        taken.append(b)

    staging.append(5)  # more than B will: A's object would be the longer one
    staging.snapshot()
    store.freeze(frozen_at, takeover, after=after)
    ship.round(force=True)  # thawed mid-round: the round goes on
    ship.round(force=True)
    [b] = taken
    assert ship.lost is not None
    late = [rel for rel, _ in store.writes[marks[0] :]]  # what A wrote after the take-over
    assert any(rel.startswith("events/seg_") for rel in late), late
    assert any(rel.startswith("snapshots/") for rel in late), late

    b.append(1)
    assert b.shipper.close()
    assert stored_log(store.inner) == b.log()
    assert read_as_a_reader(store.inner, tmp_path) == b.log()

    # The next driver deletes what the stale one left behind.
    b.lease.drop()
    c = Resumed(store.inner, tmp_path / "c" / "exp")
    assert stored_objects(store.inner.list("events")).stale == []
    assert c.shipper.close()
    assert stored_log(store.inner) == c.log() == b.log()
    for driver in (b, c):
        driver.writer.close()


def test_a_stale_driver_deletes_no_request_its_lost_log_records(
    driver_a: tuple[Frozen, Staging, StateShipper], tmp_path: Path
) -> None:
    """A took a stop request and logged it; its log object lands after B
    took over, so B's log does not record the request: A must not delete
    it from the stored inbox (B takes it instead)."""
    store, staging, ship = driver_a
    name = post_to_store(store.inner, StopTrialRequest(trial_id="t1")).rpartition("/")[2]
    ship.requests.fetch()
    [event] = Inbox(staging.dir).take(at=1.0)
    staging.writer.append(event)
    ship.after_shipped(lambda: delete_taken(store, [request_of(event)]))
    taken: list[Resumed] = []

    def takeover() -> None:
        lapse(store.inner)
        taken.append(Resumed(store.inner, tmp_path / "b" / "exp"))

    store.freeze("events/seg_", takeover)
    ship.round(force=True)
    assert f"inbox/{name}" not in store.deletes
    assert store.inner.list("inbox") == [name]
    [b] = taken
    assert request_of(event) not in {request_of(e) for e in read_log(b.dir).events}
    b.shipper.close()
    b.writer.close()


def test_a_stale_renewal_that_lands_on_the_new_lease_stops_the_stale_driver_only(
    target: StorageTarget,
) -> None:
    """Storage has no compare-and-swap: A's renewal read its own lease,
    then B took over, then A's write landed on B's lease. A's checks must
    still find that it lost (B's claim), and B keeps the experiment."""
    store = within(target.store, "exp")
    a = LeaseKeeper(store)
    a.take()
    renewal = store.read_bytes("driver.lease")  # what A's renewal is about to write
    lapse(store)
    b = LeaseKeeper(store)
    b.take()
    store.write_bytes("driver.lease", renewal)  # A's write lands after B's

    with pytest.raises(LeaseLostError, match="generation 2"):
        a.check()
    with pytest.raises(LeaseLostError):
        a.renew()
    b.check()
    b.renew()
    held = read_lease(store)
    assert held is not None
    assert held.token == b.token


class RacingStart(Recorder):
    """A store on which another driver's whole start runs just before
    this driver's first write lands (`before=True`) or just after: two
    drivers starting in the same instant, in the two orders that matter."""

    def __init__(self, inner: Store, rival: Callable[[], None], *, before: bool) -> None:
        super().__init__(inner)
        self.rival: Callable[[], None] | None = rival
        self.before = before

    def write_bytes(self, rel: str, data: bytes) -> None:
        rival, self.rival = self.rival, None
        if rival is not None and self.before:
            rival()
        super().write_bytes(rel, data)
        if rival is not None and not self.before:
            rival()


@pytest.mark.parametrize("before", [True, False])
def test_of_two_drivers_starting_in_the_same_instant_at_most_one_runs(
    target: StorageTarget, before: bool
) -> None:
    """Both read the lease before either wrote one, so both took
    generation 1 and both started: the loser found out only at its first
    renewal, and what it shipped meanwhile was of the winner's generation,
    which no fence tells apart (two drivers' log objects of one
    generation). Each driver now claims its generation under its own
    token before it writes its lease, and one that finds another's claim
    of that generation does not start; a later start takes the next."""
    store = within(target.store, "exp")
    started: list[LeaseKeeper] = []
    refused: list[ExperimentLockedError] = []

    def start(keeper: LeaseKeeper) -> None:
        try:
            keeper.take()
        except ExperimentLockedError as error:
            refused.append(error)
        else:
            started.append(keeper)

    rival = LeaseKeeper(store)
    first = LeaseKeeper(RacingStart(store, lambda: start(rival), before=before))
    start(first)

    assert len(started) + len(refused) == 2
    # Two that start are of two generations: the later one's fence cuts
    # what the earlier ships, and the earlier stops at its first check.
    assert len({keeper.generation for keeper in started}) == len(started)
    running = []
    for keeper in started:
        with contextlib.suppress(LeaseLostError):
            keeper.check()
            running.append(keeper)
    assert len(running) <= 1
    if not running:  # both saw each other's claim: the next start is alone
        again = LeaseKeeper(store)
        again.take()
        running.append(again)
    [winner] = running
    assert winner.generation == max(k.generation for k in [*started, winner])
    winner.check()
    winner.renew()
    held = read_lease(store)
    assert held is not None
    assert held.token == winner.token


def test_the_generation_goes_on_past_every_fence_when_the_lease_was_dropped(
    file_store: StorageTarget,
) -> None:
    """A driver that ends drops its lease; the next must still be of a later
    generation than every driver that fenced the log, or a stale driver's
    generation would come back."""
    store = within(file_store.store, "exp")
    store.write_bytes(fence_name(7, 0), b"")
    keeper = LeaseKeeper(store)
    keeper.take()
    assert keeper.generation == 8
    held = read_lease(store)
    assert held is not None
    assert held.generation == 8


def test_objects_of_a_fenced_off_generation_are_cut_at_the_fence_or_left_out() -> None:
    names = [
        segment_name(0, 10),  # before fencing: generation 0
        segment_name(10, 30, 1),
        segment_name(10, 50, 1),  # generation 1 wrote on past generation 2's fence...
        segment_name(30, 60, 1),  # ...and after it
        segment_name(30, 40, 2),
        fence_name(1, 10),
        fence_name(2, 30),
    ]
    listing = stored_objects([name.rpartition("/")[2] for name in names])
    assert listing.chain() == [Segment(0, 10), Segment(10, 30, 1), Segment(30, 40, 2)]
    assert listing.found[10][0].end == 30  # the longer object, cut at the fence
    assert listing.stale == [Segment(30, 60, 1)]
    assert listing.fences.limit(0) == 10
    assert listing.fences.limit(2) is None


def test_a_stored_log_from_before_fencing_reads_and_a_fenced_driver_goes_on_from_it(
    target: StorageTarget, tmp_path: Path
) -> None:
    store = within(target.store, "exp")
    old = Staging(tmp_path / "old" / "exp")
    old.append(3)
    StateShipper(store, old.dir, old.size, lag_s=0.01).close()  # no lease: names as before
    assert store.list("events") == [segment_name(0, old.size()).rpartition("/")[2]]
    b = Resumed(store, tmp_path / "b" / "exp")
    b.append(2)
    assert b.shipper.close()
    assert stored_log(store) == b.log()
    assert fence_name(1, old.size()).rpartition("/")[2] in store.list("events")
    b.writer.close()
    old.writer.close()
