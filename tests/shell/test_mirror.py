"""`Mirror`: the driver's staging directory against the storage (issue 11).
A resume keeps a staging log that extends the stored one (the shipper's
last lag is only there), replaces one that does not, and says so when
neither exists; a new run with a name the storage holds sets the earlier
one aside there."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.shell.test_shipper import header
from tests.storage_fixtures import StorageTarget
from tunecore.model import Tick
from tunecore.shell.eventlog import CorruptLogError, EventLogWriter, LogError
from tunecore.shell.lock import ExperimentLockedError
from tunecore.shell.mirror.claims import TakenOverError, check_not_taken_over
from tunecore.shell.mirror.lease import read_lease
from tunecore.shell.mirror.mirror import Mirror
from tunecore.shell.mirror.shipper import StateShipper
from tunecore.shell.mirror.stored_state import segment_name
from tunecore.shell.mirror.upload_fence import upload_dir
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.storage.resolve import resolve_storage


def real_log(events: int) -> bytes:
    """The bytes of an event log holding a header and `events` ticks."""
    with tempfile.TemporaryDirectory() as scratch:
        writer = EventLogWriter.create(Path(scratch), header())
        for at in range(events):
            writer.append(Tick(at=float(at)))
        writer.close()
        return (Path(scratch) / "events.log").read_bytes()


STORED = real_log(2)
LONGER = real_log(40)  # the same log, further on (the driver's staging copy)
assert LONGER.startswith(STORED)


def mirror_of(target: StorageTarget) -> Mirror:
    spec, root = resolve_storage(target.uri, target.filesystem)
    return Mirror(spec, root, "exp")


def store_log(mirror: Mirror, data: bytes) -> None:
    mirror.store.write_bytes(segment_name(0, len(data)), data)
    mirror.store.write_bytes("trial_1/params.json", b'{"x": 1}')


def local_log(mirror: Mirror) -> Path:
    return mirror.staging_dir / "events.log"


@pytest.fixture(params=["file_store", "s3_store"])
def target(request: pytest.FixtureRequest) -> StorageTarget:
    given: StorageTarget = request.getfixturevalue(request.param)
    return given


def test_a_staging_log_that_extends_the_stored_one_is_kept(target: StorageTarget) -> None:
    mirror = mirror_of(target)
    store_log(mirror, STORED)
    mirror.staging_dir.mkdir(parents=True)
    local_log(mirror).write_bytes(LONGER)
    mirror.sync_down()
    assert local_log(mirror).read_bytes() == LONGER
    assert not (mirror.staging_dir / "trial_1").exists()  # nothing fetched


def test_a_staging_log_that_diverges_is_replaced_by_the_stored_state(
    target: StorageTarget,
) -> None:
    mirror = mirror_of(target)
    store_log(mirror, STORED)
    mirror.staging_dir.mkdir(parents=True)
    local_log(mirror).write_bytes(b"another run's log")
    (mirror.staging_dir / "stale.txt").write_text("left by another run")
    mirror.sync_down()
    assert local_log(mirror).read_bytes() == STORED
    assert (mirror.staging_dir / "trial_1" / "params.json").read_bytes() == b'{"x": 1}'
    assert not (mirror.staging_dir / "stale.txt").exists()
    # Kept whole beside it, never deleted.
    [aside] = mirror.staging_root.glob("exp.quarantine-*")
    assert (aside / "events.log").read_bytes() == b"another run's log"
    assert (aside / "stale.txt").read_text() == "left by another run"


@pytest.mark.parametrize(
    "planted", ["events.log/x", "driver.lock/x", "driver.lease/x", "pbt_global.txt/x"]
)
def test_a_stored_directory_named_as_tunecores_own_file_is_not_fetched(
    target: StorageTarget, planted: str
) -> None:
    """A stored directory `events.log/` (or one named as the lock) was
    fetched as a trial directory, and the resume failed on it with an
    `IsADirectoryError` (`tunecore status` exited 2 naming a temporary
    file). It is no trial directory: left in storage, not fetched."""
    mirror = mirror_of(target)
    store_log(mirror, STORED)
    mirror.store.write_bytes(planted, b"x")

    mirror.sync_down()

    assert local_log(mirror).read_bytes() == STORED
    assert (mirror.staging_dir / "trial_1" / "params.json").read_bytes() == b'{"x": 1}'
    assert not (mirror.staging_dir / planted).exists()


def test_a_damaged_stored_log_leaves_the_staging_log_whole(
    target: StorageTarget, caplog: pytest.LogCaptureFixture
) -> None:
    """The driver was killed with its staging log ahead of storage, and a
    stored byte is damaged: the resume says where, and destroys nothing."""
    mirror = mirror_of(target)
    damaged = bytearray(STORED)
    damaged[-2] ^= 0xFF
    store_log(mirror, bytes(damaged))
    mirror.staging_dir.mkdir(parents=True)
    local_log(mirror).write_bytes(LONGER)
    with pytest.raises(CorruptLogError, match=r"byte offset \d+ is corrupt \(checksum mismatch"):
        mirror.sync_down()
    assert local_log(mirror).read_bytes() == LONGER
    assert "the staging log" in caplog.text
    assert sorted(p.name for p in mirror.staging_dir.iterdir()) == ["events.log"]


def test_a_driver_that_died_before_its_first_shipment_resumes_from_staging(
    target: StorageTarget,
) -> None:
    mirror = mirror_of(target)
    mirror.staging_dir.mkdir(parents=True)
    local_log(mirror).write_bytes(STORED)
    mirror.sync_down()
    assert local_log(mirror).read_bytes() == STORED


def test_nothing_stored_and_nothing_staged_names_the_uri(target: StorageTarget) -> None:
    mirror = mirror_of(target)
    with pytest.raises(LogError, match="holds no tunecore experiment") as raised:
        mirror.sync_down()
    assert mirror.store.uri() in str(raised.value)


def test_an_earlier_run_is_set_aside_in_the_storage(target: StorageTarget) -> None:
    mirror = mirror_of(target)
    assert mirror.set_aside_earlier_run() is None  # nothing there yet
    store_log(mirror, STORED)
    aside = mirror.set_aside_earlier_run()
    assert aside is not None
    name = aside.split("?")[0].rstrip("/").rpartition("/")[2]
    assert name.startswith("exp_")
    assert not mirror.holds_experiment()
    assert target.store.read_bytes(f"{name}/{segment_name(0, len(STORED))}") == STORED


def test_setting_an_earlier_run_aside_keeps_the_new_drivers_claim_and_lease(
    target: StorageTarget,
) -> None:
    """A run under a name the storage holds moves the earlier run aside
    with the lease already held: copied, then deleted there. The deletion
    took this driver's lease, claim (and, on `file://`, its upload
    directory) with it, and until the driver renewed, the experiment
    looked free: a second driver then started on it (generation 1, as on
    fresh storage) and a worker of the earlier run, found by no later
    claim, stored its checkpoint into the new run."""
    earlier = mirror_of(target)
    earlier.take_lease(lag_s=5)
    store_log(earlier, STORED)
    earlier.drop_lease()  # it ended; its workers may still be finishing

    driver = mirror_of(target)
    driver.take_lease(lag_s=5)
    assert driver.set_aside_earlier_run() is not None
    # Another machine starts in that instant, before this driver renews.
    with pytest.raises(ExperimentLockedError):
        mirror_of(target).take_lease(lag_s=5)
    driver.renew_lease()  # the driver still holds the experiment
    held = read_lease(driver.store)
    assert held is not None
    assert held.token == driver.lease.token
    with pytest.raises(TakenOverError):
        check_not_taken_over(driver.store, earlier.lease.generation, "store a checkpoint")
    if isinstance(driver.store, LocalStore):
        assert os.path.isdir(os.path.join(driver.store.root, upload_dir(driver.lease.generation)))


# -- the driver's lease -------------------------------------------------------------------


def held_by(mirror: Mirror, host: str, pid: int, age_s: float) -> None:
    lease = {"host": host, "pid": pid, "token": "theirs", "renewed": time.time() - age_s}
    mirror.store.write_bytes("driver.lease", json.dumps(lease).encode())


def test_a_driver_on_another_machine_keeps_the_experiment(target: StorageTarget) -> None:
    mirror = mirror_of(target)
    held_by(mirror, "other-host", 4242, age_s=3)
    with pytest.raises(ExperimentLockedError, match="pid 4242 on host 'other-host'"):
        mirror.take_lease(lag_s=5)
    assert b"theirs" in mirror.store.read_bytes("driver.lease")  # untouched


def test_a_lease_nobody_renews_is_taken_over(target: StorageTarget) -> None:
    mirror = mirror_of(target)
    held_by(mirror, "other-host", 4242, age_s=61)
    mirror.take_lease(lag_s=5)
    assert json.loads(mirror.store.read_bytes("driver.lease"))["pid"] == os.getpid()


def test_a_dead_driver_on_this_host_is_taken_over_at_once(target: StorageTarget) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    mirror = mirror_of(target)
    held_by(mirror, socket.gethostname(), int(dead.stdout), age_s=1)
    mirror.take_lease(lag_s=5)
    assert json.loads(mirror.store.read_bytes("driver.lease"))["pid"] == os.getpid()


def test_a_driver_gives_up_only_its_own_lease(target: StorageTarget) -> None:
    mirror = mirror_of(target)
    mirror.take_lease(lag_s=5)
    mirror.drop_lease()
    assert not mirror.store.exists("driver.lease")
    held_by(mirror, "other-host", 4242, age_s=1)
    mirror.drop_lease()
    assert mirror.store.exists("driver.lease")


def staged(mirror: Mirror) -> dict[str, bytes]:
    """A staging directory as a run leaves it, shipped whole to the storage."""
    files = {
        "events.log": STORED,
        "trial_1/params.json": b'{"x": 1}',
        "trial_1/result.json": b'{"score": 1}\n',
        "snapshots/snapshot_000000000002.msgpack": b"state",
    }
    for rel, data in files.items():
        path = mirror.staging_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (mirror.staging_dir / "driver.lock").touch()
    assert StateShipper(mirror.store, mirror.staging_dir, lambda: len(STORED), lag_s=60.0).close()
    return files


def test_a_staging_copy_the_local_storage_holds_whole_is_dropped(
    file_store: StorageTarget,
) -> None:
    mirror = mirror_of(file_store)
    staged(mirror)
    assert mirror.not_stored() == []
    assert mirror.drop_staging() == Path(file_store.store.local_path("exp") or "")
    assert [p.name for p in mirror.staging_dir.iterdir()] == ["driver.lock"]


@pytest.mark.parametrize(
    "change",
    [
        "trial_1/result.json",  # written after it was shipped
        "trial_1/.hidden",  # a file storage never gets
        "events.log",  # a record storage does not have
    ],
)
def test_a_staging_copy_the_storage_lacks_anything_of_is_kept_with_a_warning(
    file_store: StorageTarget, change: str, caplog: pytest.LogCaptureFixture
) -> None:
    mirror = mirror_of(file_store)
    files = staged(mirror)
    with (mirror.staging_dir / change).open("ab") as handle:
        handle.write(b"more")
    assert mirror.not_stored() == [change]
    assert mirror.drop_staging() is None
    assert change in caplog.text
    assert f"Kept the staging copy {mirror.staging_dir}" in caplog.text
    for rel in files:
        assert (mirror.staging_dir / rel).is_file()


def test_a_fetched_file_a_worker_replaced_since_keeps_no_staging_copy(
    file_store: StorageTarget,
) -> None:
    """A resume's staging copy holds the workers' outputs as it fetched
    them, and the shipper no longer ships them back (`fetched_files`): a
    worker's newer `out.txt` in storage is not something storage lacks,
    nor is the record of what was fetched."""
    mirror = mirror_of(file_store)
    staged(mirror)
    mirror.store.write_bytes("trial_1/out.txt", b"run 1\n")
    mirror.clear_staging()
    mirror.sync_down()  # a resume on a fresh staging directory
    mirror.store.write_bytes("trial_1/out.txt", b"run 1\nrun 2\n")  # the resumed worker's
    assert mirror.not_stored() == []
    (mirror.staging_dir / "trial_1" / "result.json").write_bytes(b"changed")
    assert mirror.not_stored() == ["trial_1/result.json"]


def test_a_staging_copy_of_remote_storage_is_kept(s3_store: StorageTarget) -> None:
    """The results read their histories from it: nothing else is local."""
    mirror = mirror_of(s3_store)
    files = staged(mirror)
    assert mirror.drop_staging() is None
    assert all((mirror.staging_dir / rel).is_file() for rel in files)


@pytest.mark.parametrize(
    ("renewed", "why"),
    [
        ("time.time() + 86400", "ahead of this machine's clock"),
        ("1e308", "ahead of this machine's clock"),
        ("float('nan')", "not a lease"),
        ("float('inf')", "not a lease"),
        ("'yesterday'", "not a lease"),
    ],
)
def test_a_lease_whose_time_is_no_valid_time_is_taken_over(
    target: StorageTarget, renewed: str, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A lease renewed in the future, at 1e308 or NaN would never lapse."""
    mirror = mirror_of(target)
    lease = {"host": "other-host", "pid": 4242, "token": "theirs", "renewed": eval(renewed)}
    mirror.store.write_bytes("driver.lease", json.dumps(lease).encode())
    mirror.take_lease(lag_s=5)
    assert json.loads(mirror.store.read_bytes("driver.lease"))["pid"] == os.getpid()
    assert why in caplog.text


@pytest.mark.parametrize(
    "content",
    [b"[" * 100_000 + b"]" * 100_000, b'{"host": "h", "pid": 1, "token": "t"}', b"\xff" * 10],
)
def test_a_lease_that_is_garbage_or_too_deep_is_taken_over(
    target: StorageTarget, content: bytes
) -> None:
    mirror = mirror_of(target)
    mirror.store.write_bytes("driver.lease", content)
    mirror.take_lease(lag_s=5)
    assert json.loads(mirror.store.read_bytes("driver.lease"))["pid"] == os.getpid()
    mirror.renew_lease()
    mirror.drop_lease()
    assert not mirror.store.exists("driver.lease")


def test_each_take_over_is_the_next_generation(target: StorageTarget) -> None:
    mirror = mirror_of(target)
    held_by(mirror, "other-host", 4242, age_s=61)
    mirror.take_lease(lag_s=5)
    assert json.loads(mirror.store.read_bytes("driver.lease"))["generation"] == 1
    again = mirror_of(target)
    mirror.store.write_bytes(
        "driver.lease",
        json.dumps(
            {"host": "h", "pid": 1, "token": "x", "renewed": time.time() - 99, "generation": 7}
        ).encode(),
    )
    again.take_lease(lag_s=5)
    assert json.loads(mirror.store.read_bytes("driver.lease"))["generation"] == 8
