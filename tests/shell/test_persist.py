"""Workers persist a mirrored experiment's files themselves (issue 11).

A `TrialContext` with a store names the driver's experiment directory,
which does not exist here (as on a worker node of its own): the host runs
the trainable in node-local scratch, uploads checkpoints, exports and
`log_to_file` output to the store, and restores by downloading. Every test
runs on a `file://` store and on S3 (a moto server)."""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pytest

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore.model import CheckpointSaved, JsonDict, Resources, TrialFailed
from tunecore.shell.executors.host import TrialHost
from tunecore.shell.executors.inprocess import InProcessExecutor
from tunecore.shell.mirror import upload_fence
from tunecore.shell.mirror.claims import TakenOverError, check_not_taken_over, claim_name
from tunecore.shell.mirror.lease import LEASE_FILE, LeaseKeeper
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.storage.resolve import within
from tunecore.shell.storage.store import Store
from tunecore.shell.trainable import Checkpoint, get_checkpoint, make_worker_trainable, report
from tunecore.shell.trainable.persist import SCRATCH_ENV, scratch_root
from tunecore.shell.trainable.worker import TrialContext

MARKER = ".tunecore_checkpoint.json"
SEEN: list[TrialContext] = []


class Counter(tunecore.Trainable):
    """Counts; saves and loads its count as a file; exports a `model`."""

    def setup(self, config: JsonDict) -> None:
        SEEN.append(self._context)
        self.count = 0

    def step(self) -> Mapping[str, object]:
        self.count += 1
        print(f"step {self.count}")
        return {"count": self.count, "cwd": os.getcwd()}

    def save_checkpoint(self, checkpoint_dir: str) -> str:
        path = os.path.join(checkpoint_dir, "count.txt")
        Path(path).write_text(str(self.count))
        return path

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        assert isinstance(checkpoint, str)
        self.count = int(Path(checkpoint).read_text())

    def export_model(self, export_formats: list[str], export_dir: str) -> dict[str, str]:
        path = os.path.join(export_dir, "model.txt")
        Path(path).write_text(f"model {self.count}")
        return {"model": path}


def counting(config: JsonDict) -> None:
    start = 0
    checkpoint = get_checkpoint()
    if checkpoint is not None:
        start = int((Path(checkpoint.path) / "n.txt").read_text())
    for n in range(start + 1, 100):
        directory = Path(tunecore.get_context().get_trial_dir()) / f"mine_{n}"
        directory.mkdir()
        (directory / "n.txt").write_text(str(n))
        report({"n": n}, checkpoint=Checkpoint.from_directory(str(directory)))


def make_host(hosts: list[TrialHost], target: object) -> TrialHost:
    host = TrialHost(lambda config, ctx: make_worker_trainable(target, config, ctx))  # type: ignore[arg-type]
    hosts.append(host)
    return host


def context(storage: StorageTarget, driver_dir: Path, **changes: object) -> TrialContext:
    base = TrialContext(
        trial_id="t1",
        trial_name="t1",
        trial_dir=str(driver_dir / "t1"),
        experiment_dir=str(driver_dir),
        storage_token="0123456789abcdef",
        store=within(storage.store, "exp"),
    )
    return msgspec.structs.replace(base, **changes)


def stored(store: Store, rel: str) -> list[str]:
    """Every object under `rel`, as '/'-joined relative paths."""
    names: list[str] = []
    for name in store.list(rel):
        path = f"{rel}/{name}"
        inner = stored(store, path)
        names.extend(f"{name}/{sub}" for sub in inner) if inner else names.append(name)
    return names


def test_the_trainable_works_in_scratch_never_in_the_driver_s_directories(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    SEEN.clear()
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir, chdir=True))
    result = host.train()
    [stay] = scratch.iterdir()  # <run token[:8]>-<random>: this stay of the trial
    assert stay.name.startswith("01234567-")
    trial_dir = stay / "exp" / "t1"
    assert SEEN[-1].trial_dir == str(trial_dir)
    assert SEEN[-1].get_experiment_name() == "exp"
    assert result["cwd"] == str(trial_dir)
    assert not (driver_dir.parent).exists()
    host.release()
    assert not list(scratch.iterdir())


def test_a_trial_s_next_stay_never_shares_the_last_one_s_scratch(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    """A failed trial restarts on a new worker at once, while the old one
    may still be cleaning up its scratch (the in-process executor)."""
    SEEN.clear()
    old, new = make_host(hosts, Counter), make_host(hosts, Counter)
    old.assign({}, context(storage, driver_dir))
    new.assign({}, context(storage, driver_dir))
    old.release()
    assert Path(SEEN[-1].trial_dir).is_dir()
    assert new.train()["cwd"]


def test_a_relative_scratch_root_still_holds_after_the_trainable_changes_directory(
    storage: StorageTarget,
    driver_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hosts: list[TrialHost],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNECORE_SCRATCH", "relative")
    SEEN.clear()
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir, chdir=True))
    host.train()
    assert Path(SEEN[-1].trial_dir).is_relative_to(tmp_path / "relative")
    host.save(str(driver_dir / "t1" / "checkpoint_000001"))
    assert within(storage.store, "exp").read_bytes("t1/checkpoint_000001/count.txt") == b"1"


@pytest.mark.parametrize("target", [Counter, counting])
def test_a_save_lands_in_the_store_and_a_restore_elsewhere_continues_from_it(
    *,
    storage: StorageTarget,
    driver_dir: Path,
    scratch: Path,
    hosts: list[TrialHost],
    monkeypatch: pytest.MonkeyPatch,
    target: object,
) -> None:
    first = make_host(hosts, target)
    first.assign({}, context(storage, driver_dir))
    for _ in range(3):
        first.train()
    checkpoint_dir = str(driver_dir / "t1" / "checkpoint_000003")
    assert first.save(checkpoint_dir).path == checkpoint_dir
    assert not driver_dir.parent.exists()
    assert MARKER in stored(storage.store, "exp/t1/checkpoint_000003")
    assert not list(scratch.rglob("checkpoint_000003"))
    first.release()

    monkeypatch.setenv("TUNECORE_SCRATCH", str(scratch.parent / "other_node"))
    second = make_host(hosts, target)
    second.assign({}, context(storage, driver_dir))
    second.restore(checkpoint_dir)
    result = second.train()
    assert result["training_iteration"] == 4
    assert result.get("count", result.get("n")) == 4


def test_a_retried_save_replaces_what_a_failed_one_left(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    store = within(storage.store, "exp")
    store.write_bytes("t1/checkpoint_000001/stale.bin", b"from a cut upload")
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir))
    host.train()
    host.save(str(driver_dir / "t1" / "checkpoint_000001"))
    assert sorted(stored(store, "t1/checkpoint_000001")) == [MARKER, "count.txt"]


def test_a_checkpoint_missing_from_the_store_fails_the_restore_naming_its_uri(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir))
    with pytest.raises(FileNotFoundError) as caught:
        host.restore(str(driver_dir / "t1" / "checkpoint_000007"))
    assert within(storage.store, "exp").uri("t1/checkpoint_000007") in str(caught.value)


def test_a_path_outside_the_experiment_is_refused(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir))
    host.train()
    with pytest.raises(ValueError, match="not inside the experiment directory"):
        host.save(str(driver_dir.parent / "elsewhere" / "checkpoint_000001"))
    with pytest.raises(ValueError, match="not inside a trial directory"):
        host.restore(str(driver_dir / "t1"))


class SavesAFile:
    """A worker trainable whose checkpoint is a file inside the directory
    (`save` returns its path, as a `WorkerTrainable` may)."""

    def __init__(self) -> None:
        self.restored_from = ""

    def save(self, checkpoint_dir: str) -> str:
        path = Path(checkpoint_dir, "model", "weights.bin")
        path.parent.mkdir()
        path.write_bytes(b"weights")
        Path(checkpoint_dir, MARKER).write_text("{}")
        return str(path)

    def restore(self, path: str) -> None:
        self.restored_from = Path(path).read_bytes().decode()

    def stop(self) -> None:
        pass


def test_a_checkpoint_saved_as_a_file_in_its_directory_restores_from_that_file(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    trainable = SavesAFile()
    host = TrialHost(lambda config, ctx: trainable)  # type: ignore[arg-type, return-value]
    hosts.append(host)
    host.assign({}, context(storage, driver_dir))
    checkpoint_dir = driver_dir / "t1" / "checkpoint_000001"
    saved = host.save(str(checkpoint_dir)).path
    assert saved == str(checkpoint_dir / "model" / "weights.bin")
    host.restore(saved)
    assert trainable.restored_from == "weights"


def test_exports_are_uploaded_and_named_as_the_driver_sees_them(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir))
    host.train()
    export_dir = driver_dir / "t1" / "export"
    written = host.export(["checkpoint", "model"], str(export_dir))
    assert written == {
        "checkpoint": str(export_dir / "checkpoint"),
        "model": str(export_dir / "model.txt"),
    }
    store = within(storage.store, "exp")
    assert store.read_bytes("t1/export/model.txt") == b"model 1"
    assert store.read_bytes("t1/export/checkpoint/count.txt") == b"1"
    assert not driver_dir.parent.exists()


def test_log_to_file_output_reaches_the_store_and_accumulates_over_runs(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    host = make_host(hosts, Counter)
    logged = context(storage, driver_dir, stdout_file="out.txt", stderr_file="out.txt")
    host.assign({}, logged)
    host.train()
    host.release()
    store = within(storage.store, "exp")
    assert store.read_bytes("t1/out.txt") == b"step 1\n"
    host.assign({}, logged)  # the trial again (a resume), maybe on another node
    host.train()
    print("to stderr", file=sys.stderr)
    host.release()
    assert store.read_bytes("t1/out.txt") == b"step 1\nstep 1\nto stderr\n"
    assert not list(scratch.iterdir())


def test_log_to_file_output_up_to_a_checkpoint_is_stored_with_it(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir, stdout_file="out.txt"))
    host.train()
    host.train()
    host.save(str(driver_dir / "t1" / "checkpoint_000002"))
    # the worker may die now (a lost node, a killed actor): the output is safe
    assert within(storage.store, "exp").read_bytes("t1/out.txt") == b"step 1\nstep 2\n"


class FailingStore(LocalStore):
    """A local store whose uploads break off after the first file."""

    def upload_dir(self, local: str, rel: str, *, marker: str | None = None) -> int:
        first = sorted(name for name in os.listdir(local) if name != marker)[0]
        self.write_bytes(f"{rel}/{first}", Path(local, first).read_bytes())
        raise OSError(f"{self.uri(rel)}: connection reset")


def test_a_save_whose_upload_fails_is_a_trial_failure_never_a_saved_checkpoint(
    tmp_path: Path, driver_dir: Path, scratch: Path
) -> None:
    store = FailingStore(str(tmp_path / "storage" / "exp"))
    executor = InProcessExecutor(
        lambda config, ctx: make_worker_trainable(Counter, config, ctx),
        resources=Resources(cpu=1),
    )
    trial_context = TrialContext(
        trial_id="t1",
        trial_name="t1",
        trial_dir=str(driver_dir / "t1"),
        experiment_dir=str(driver_dir),
        store=store,
    )
    try:
        executor.start("t1", Resources(cpu=1), {}, trial_context, None)
        executor.save("t1", str(driver_dir / "t1" / "checkpoint_000001"), 1, {})
        events = collect(executor, until=TrialFailed)
    finally:
        executor.shutdown()
    assert not [e for e in events if isinstance(e, CheckpointSaved)]
    failure = events[-1]
    assert isinstance(failure, TrialFailed)
    assert store.uri("t1/checkpoint_000001") in failure.error
    assert store.list("t1/checkpoint_000001") == ["count.txt"]  # no marker: not a checkpoint


def collect(executor: InProcessExecutor, until: type) -> list[object]:
    events: list[object] = []
    deadline = time.monotonic() + 30
    while not any(isinstance(e, until) for e in events) and time.monotonic() < deadline:
        events.extend(executor.next_events(1.0))
    return events


def test_a_context_with_a_store_survives_pickling_for_ray(s3_store: StorageTarget) -> None:
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    trial_context = TrialContext(
        trial_id="t1",
        trial_name="t1",
        trial_dir="/driver/exp/t1",
        experiment_dir="/driver/exp",
        store=within(s3_store.store, "exp"),
    )
    for dumps in (pickle.dumps, cloudpickle.dumps):
        copy = pickle.loads(dumps(trial_context))
        assert copy.store is not None
        copy.store.write_bytes("t1/probe", b"through the copy")
        assert s3_store.store.read_bytes("exp/t1/probe") == b"through the copy"


def reports_without_checkpoints(config: JsonDict) -> None:
    for n in range(1, 100):
        report({"n": n, "restored": get_checkpoint() is not None})


def test_a_null_checkpoint_round_trips_through_the_store(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    """A function saved before it reported any checkpoint restores as a
    fresh start (the null marker is a dot file: it must be uploaded too)."""
    host = make_host(hosts, reports_without_checkpoints)
    host.assign({}, context(storage, driver_dir))
    host.train()
    checkpoint_dir = str(driver_dir / "t1" / "checkpoint_000001")
    host.save(checkpoint_dir)
    assert ".null_marker" in stored(within(storage.store, "exp"), "t1/checkpoint_000001")
    host.assign({}, context(storage, driver_dir))
    host.restore(checkpoint_dir)
    result = host.train()
    assert (result["n"], result["restored"], result["training_iteration"]) == (1, False, 1)


@pytest.mark.parametrize("planted", ["link", "shared"])
def test_the_default_scratch_root_is_this_users_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    """The default scratch root was `/tmp/tunecore`, shared by every user
    of the node: whoever made it first (0o777, or a link to somewhere of
    theirs) could rename a worker's directory in it and plant a link in
    its place, and the worker's fresh checkpoint directory (deleted, then
    written) went through it. It is now `<tmp>/tunecore-<uid>`, made
    0o700, and one that is a link or open to others is refused, naming it."""
    monkeypatch.delenv(SCRATCH_ENV, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    expected = tmp_path / f"tunecore-{os.getuid()}"
    assert scratch_root() == str(expected)
    assert expected.stat().st_mode & 0o777 == 0o700
    expected.rmdir()
    if planted == "link":
        elsewhere = tmp_path / "theirs"
        elsewhere.mkdir(mode=0o700)
        expected.symlink_to(elsewhere, target_is_directory=True)
    else:
        expected.mkdir()
        expected.chmod(0o777)
    with pytest.raises(PermissionError, match=f"{expected}.*{SCRATCH_ENV}"):
        scratch_root()


def driver_and_worker(
    storage: StorageTarget, driver_dir: Path, hosts: list[TrialHost], steps: int
) -> tuple[LeaseKeeper, TrialHost]:
    """A driver that took the experiment's lease, and its worker of trial
    t1 trained `steps` steps."""
    keeper = LeaseKeeper(within(storage.store, "exp"))
    keeper.take()
    worker = make_host(hosts, Counter)
    worker.assign({}, context(storage, driver_dir, lease_generation=keeper.generation))
    for _ in range(steps):
        worker.train()
    return keeper, worker


def test_a_paused_driver_s_worker_never_replaces_what_the_new_driver_stored(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    """Driver A is paused (SIGSTOP) past its lease; its workers go on. B
    takes the experiment over, and B's worker stores `checkpoint_000003`
    and exports. Then A's worker saves and exports at the same places:
    before, it deleted B's and stored its own (the trial's count 4 where
    B's log says 3). Now each of its writes is refused and stores nothing."""
    store = within(storage.store, "exp")
    a, stale = driver_and_worker(storage, driver_dir, hosts, steps=4)
    store.delete_file(LEASE_FILE)  # A's lease lapsed: nobody renewed it
    b, new = driver_and_worker(storage, driver_dir, hosts, steps=3)
    assert b.generation == a.generation + 1
    checkpoint_dir = str(driver_dir / "t1" / "checkpoint_000003")
    export_dir = str(driver_dir / "t1" / "export")
    saved = Path(new.save(checkpoint_dir).path).name  # the name B's log records
    new.export(["model"], export_dir)

    with pytest.raises(TakenOverError, match=rf"generation {b.generation}\) took"):
        stale.save(checkpoint_dir)
    with pytest.raises(TakenOverError, match="upload the exports"):
        stale.export(["model"], export_dir)
    assert store.read_bytes(f"t1/{saved}/count.txt") == b"3"
    assert MARKER in stored(store, f"t1/{saved}")
    assert store.read_bytes("t1/export/model.txt") == b"model 3"
    # The new driver's own worker still saves.
    new.train()
    saved = Path(new.save(str(driver_dir / "t1" / "checkpoint_000004")).path).name
    assert store.read_bytes(f"t1/{saved}/count.txt") == b"4"


def test_a_worker_with_no_lease_generation_checks_nothing(
    storage: StorageTarget, driver_dir: Path, scratch: Path, hosts: list[TrialHost]
) -> None:
    """Generation 0 is a context made without a lease (older drivers):
    its saves are not refused whatever the storage claims."""
    store = within(storage.store, "exp")
    store.write_bytes(claim_name(5, "later"), b"")
    host = make_host(hosts, Counter)
    host.assign({}, context(storage, driver_dir))
    host.train()
    host.save(str(driver_dir / "t1" / "checkpoint_000001"))
    assert store.read_bytes("t1/checkpoint_000001/count.txt") == b"1"


@pytest.mark.parametrize(
    ("storage", "frozen"),
    [
        ("file", "after its check"),
        ("file", "after its copy"),
        ("s3", "after its check"),
        ("s3", "after its upload"),
    ],
    indirect=["storage"],
)
@pytest.mark.usefixtures("scratch")
def test_a_worker_frozen_inside_its_save_replaces_nothing_the_new_driver_stored(
    storage: StorageTarget,
    driver_dir: Path,
    hosts: list[TrialHost],
    monkeypatch: pytest.MonkeyPatch,
    frozen: str,
) -> None:
    """Driver A's worker checks the lease before its save of
    `checkpoint_000003` and freezes there (a gate: its driver paused past
    its lease). B takes over and B's worker stores `checkpoint_000003`.
    A's worker thaws. Before, its save went on: it deleted B's checkpoint
    and stored its own (count 4 where B's log says 3). On `file://` its
    save now goes through renames B's take-over fenced; on S3 B's worker
    stores under generation 2's own name (`checkpoint_000003_g2`, the
    path its log records) and A's upload lands beside it, under A's. A
    raises `TakenOverError` either way, and B's checkpoint is whole and
    B's."""
    store = within(storage.store, "exp")
    a, stale = driver_and_worker(storage, driver_dir, hosts, steps=4)
    checkpoint_dir = str(driver_dir / "t1" / "checkpoint_000003")

    at_gate, thaw = threading.Event(), threading.Event()
    real_check, real_copy = check_not_taken_over, upload_fence._copy_into
    real_upload = type(store).upload_dir

    def freeze() -> None:
        at_gate.set()
        assert thaw.wait(60), "never thawed"

    def check(store: Store, generation: int, what: str) -> None:
        real_check(store, generation, what)
        if generation == a.generation and frozen == "after its check" and not at_gate.is_set():
            freeze()

    def copy(root: int, staged: str, local: str, files: list[str]) -> None:
        real_copy(root, staged, local, files)
        if files and Path(local).joinpath("count.txt").read_text() == "4":
            freeze()

    def upload(self: Store, local: str, rel: str, *, marker: str | None = None) -> None:
        real_upload(self, local, rel, marker=marker)
        if frozen == "after its upload" and Path(local, "count.txt").read_text() == "4":
            freeze()

    monkeypatch.setattr(upload_fence, "check_not_taken_over", check)
    monkeypatch.setattr(upload_fence, "_copy_into", copy)
    monkeypatch.setattr(type(store), "upload_dir", upload)
    outcome: list[BaseException | str] = []

    def save_stale() -> None:
        try:
            outcome.append(stale.save(checkpoint_dir).path)
        except BaseException as error:  # the test reads it
            outcome.append(error)

    thread = threading.Thread(target=save_stale)
    thread.start()
    assert at_gate.wait(60), "the stale save never reached its gate"
    store.delete_file(LEASE_FILE)  # A's lease lapsed: nobody renewed it
    b, new = driver_and_worker(storage, driver_dir, hosts, steps=3)
    saved = Path(new.save(checkpoint_dir).path).name
    own_name = "checkpoint_000003" if isinstance(store, LocalStore) else "checkpoint_000003_g2"
    assert saved == own_name
    thaw.set()
    thread.join(60)

    (result,) = outcome
    assert isinstance(result, TakenOverError), result
    assert f"generation {b.generation}" in str(result)
    assert store.read_bytes(f"t1/{saved}/count.txt") == b"3"
    assert sorted(stored(store, "t1")) == [f"{saved}/{MARKER}", f"{saved}/count.txt"]
    # B's next take-over (a resume) deletes what A's worker left in its fenced uploads.
    store.delete_file(LEASE_FILE)
    LeaseKeeper(store).take()
    assert not [n for n in store.list() if "upload_g" in n and f"g{a.generation:08d}" in n]
    assert not [n for n in store.list() if "fenced" in n]
