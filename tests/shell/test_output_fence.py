"""A paused driver's worker never leaves its outputs over the new driver's
(`shell.mirror.output_fence`): `log_to_file` files, `sync_artifacts`
artifacts and `export/`, which users read at Ray's names.

Driver A's worker checks the lease before it stores its outputs and
freezes there (a gate: its driver paused past its lease). B takes over and
B's worker stores the same outputs. A's worker thaws. Before, its writes
landed over B's and stayed. On `file://` they are now refused (renames
out of A's fenced upload directory); on S3 they land, and A's worker, at
its check after them, puts back the copy B's worker kept under
`.tunecore_kept_g2/`. A worker that never makes that check leaves its
write until the next resume, which puts B's copy back."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from tests.shell.test_persist import SEEN, Counter, context, make_host, stored
from tests.storage_fixtures import StorageTarget
from tunecore.shell.executors.host import TrialHost
from tunecore.shell.mirror import output_fence
from tunecore.shell.mirror.claims import TakenOverError, check_not_taken_over
from tunecore.shell.mirror.lease import LEASE_FILE, LeaseKeeper
from tunecore.shell.mirror.output_fence import kept_dir, put_back_outputs
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.storage.resolve import within
from tunecore.shell.storage.store import Store


class Noting(Counter):
    """A `Counter` that also writes `notes.txt` in its trial directory (an
    artifact) at each step."""

    def step(self) -> Mapping[str, object]:
        result = super().step()
        Path(self.logdir, "notes.txt").write_text(f"count {self.count}")
        return result


class Gate:
    """Freezes the first writer of generation `generation` at the point
    the test arms, until `thaw`."""

    def __init__(self) -> None:
        self.at_gate, self.thawed = threading.Event(), threading.Event()

    def freeze(self) -> None:
        self.at_gate.set()
        assert self.thawed.wait(60), "never thawed"


def host_of(
    storage: StorageTarget, driver_dir: Path, hosts: list[TrialHost], steps: int
) -> tuple[LeaseKeeper, TrialHost]:
    """A driver that took the lease, and its worker of trial t1 (stdout
    to `out.txt`, artifacts synced) trained `steps` steps."""
    keeper = LeaseKeeper(within(storage.store, "exp"))
    keeper.take()
    worker = make_host(hosts, Noting)
    worker.assign(
        {},
        context(
            storage,
            driver_dir,
            lease_generation=keeper.generation,
            stdout_file="out.txt",
            sync_artifacts=True,
        ),
    )
    for _ in range(steps):
        worker.train()
    return keeper, worker


# What each kind of output is stored as, and how a worker stores it.
OUTPUTS: dict[str, tuple[str, Callable[[TrialHost, Path, int], object]]] = {
    "log_to_file": (
        "t1/out.txt",
        lambda host, exp, n: host.save(str(exp / "t1" / f"checkpoint_{n:06d}")),
    ),
    "artifact": (
        "t1/notes.txt",
        lambda host, exp, n: host.save(str(exp / "t1" / f"checkpoint_{n:06d}")),
    ),
    "export": (
        "t1/export/model.txt",
        lambda host, exp, n: host.export(["model"], str(exp / "t1" / "export")),
    ),
}
CONTENT = {
    "log_to_file": lambda n: "".join(f"step {i}\n" for i in range(1, n + 1)).encode(),
    "artifact": lambda n: f"count {n}".encode(),
    "export": lambda n: f"model {n}".encode(),
}


def stale_and_new(
    storage: StorageTarget,
    driver_dir: Path,
    hosts: list[TrialHost],
    monkeypatch: pytest.MonkeyPatch,
    *,
    kind: str,
    after_write: Gate | None = None,
) -> tuple[Store, threading.Thread, Gate, list[object]]:
    """A (4 steps) frozen after its check before storing its `kind`
    output; B (3 steps) took over and stored its own. With `after_write`,
    A freezes again once its stale write has landed, before its second
    check. Returns the store, A's thread, its first gate (to thaw) and
    where A's outcome goes."""
    store = within(storage.store, "exp")
    a, stale = host_of(storage, driver_dir, hosts, steps=4)
    gate = Gate()

    def check(store: Store, generation: int, what: str) -> None:
        check_not_taken_over(store, generation, what)
        if generation == a.generation and not gate.at_gate.is_set():
            gate.freeze()

    monkeypatch.setattr(output_fence, "check_not_taken_over", check)
    if after_write is not None:
        real_write = type(store).write_bytes
        name = OUTPUTS[kind][0]

        def write(self: Store, rel: str, data: bytes) -> None:
            real_write(self, rel, data)
            if rel == name and data == CONTENT[kind](4):
                after_write.freeze()

        monkeypatch.setattr(type(store), "write_bytes", write)
    outcome: list[object] = []
    store_it = OUTPUTS[kind][1]

    def stale_writes() -> None:
        try:
            outcome.append(store_it(stale, driver_dir, 4))
        except BaseException as error:  # the test reads it
            outcome.append(error)

    thread = threading.Thread(target=stale_writes)
    thread.start()
    assert gate.at_gate.wait(60), "the stale worker never reached its gate"
    store.delete_file(LEASE_FILE)  # A's lease lapsed: nobody renewed it
    _, new = host_of(storage, driver_dir, hosts, steps=3)
    store_it(new, driver_dir, 3)
    return store, thread, gate, outcome


@pytest.mark.parametrize(
    ("storage", "kind"),
    [
        ("file", "log_to_file"),
        ("file", "artifact"),
        ("s3", "log_to_file"),
        ("s3", "artifact"),
        ("s3", "export"),
    ],
    indirect=["storage"],
)
@pytest.mark.usefixtures("scratch")
def test_a_worker_frozen_before_storing_its_output_leaves_the_new_driver_s(
    storage: StorageTarget,
    driver_dir: Path,
    hosts: list[TrialHost],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    """(`file://` exports: tests/shell/test_persist.py.) Before, A's
    output (count 4) stayed where B's (count 3) had been stored."""
    store, thread, gate, outcome = stale_and_new(storage, driver_dir, hosts, monkeypatch, kind=kind)
    name = OUTPUTS[kind][0]
    assert store.read_bytes(name) == CONTENT[kind](3)
    gate.thawed.set()
    thread.join(60)

    (result,) = outcome
    assert isinstance(result, TakenOverError), result
    assert "generation 2" in str(result)
    assert store.read_bytes(name) == CONTENT[kind](3)
    if isinstance(store, LocalStore):
        assert not store.exists(kept_dir(2)), "file:// is fenced by renames: no copies"
    else:
        assert store.read_bytes(f"{kept_dir(2)}/{name}") == CONTENT[kind](3)
        assert not store.exists(kept_dir(1)), "the first generation keeps no copy"


@pytest.mark.usefixtures("scratch")
def test_a_stale_output_without_a_check_after_it_lasts_until_the_next_resume(
    s3_store: StorageTarget,
    driver_dir: Path,
    hosts: list[TrialHost],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thaws, its `out.txt` lands over B's, and A freezes again before
    its second check (or is killed there): the one window left. B's
    copy is whole; the next take-over's resume (C) puts it back. A's
    check, when it comes, finds C's claim and puts B's back again."""
    again = Gate()
    store, thread, gate, outcome = stale_and_new(
        s3_store, driver_dir, hosts, monkeypatch, kind="log_to_file", after_write=again
    )
    gate.thawed.set()
    assert again.at_gate.wait(60), "the stale write never landed"
    assert store.read_bytes("t1/out.txt") == CONTENT["log_to_file"](4)  # the window
    assert store.read_bytes(f"{kept_dir(2)}/t1/out.txt") == CONTENT["log_to_file"](3)

    store.delete_file(LEASE_FILE)
    c = LeaseKeeper(store)
    c.take()
    assert put_back_outputs(store, c.generation, {"t1"}) == ["t1/notes.txt", "t1/out.txt"]
    assert store.read_bytes("t1/out.txt") == CONTENT["log_to_file"](3)

    again.thawed.set()
    thread.join(60)
    (result,) = outcome
    assert isinstance(result, TakenOverError), result
    assert f"generation {c.generation}" in str(result)
    assert store.read_bytes("t1/out.txt") == CONTENT["log_to_file"](3)
    assert store.read_bytes("t1/notes.txt") == CONTENT["artifact"](3)


def test_a_resume_puts_back_only_trials_outputs_from_their_newest_copy(
    s3_store: StorageTarget,
) -> None:
    """Generations 2 and 3 kept copies; the resume of generation 5 puts
    the newest back at each name (a whole `export/` as one: a stale file
    in it goes), deletes the copies they outrank, and never writes over
    tunecore's own files or outside the trials its log knows, whatever
    the copies hold."""
    store = within(s3_store.store, "exp")
    for rel, data in {
        f"{kept_dir(2)}/t1/out.txt": b"g2",
        f"{kept_dir(2)}/t1/sub/notes.txt": b"g2 notes",
        f"{kept_dir(3)}/t1/out.txt": b"g3",
        f"{kept_dir(3)}/t1/export/model.txt": b"model g3",
        f"{kept_dir(3)}/t1/result.json": b"not an output",
        f"{kept_dir(3)}/t1/checkpoint_000003_g2/x": b"not an output",
        f"{kept_dir(3)}/other/out.txt": b"no trial of the log",
        "t1/out.txt": b"stale",
        "t1/export/model.txt": b"stale model",
        "t1/export/extra.txt": b"stale extra",
        "t1/result.json": b"the driver's",
    }.items():
        store.write_bytes(rel, data)

    put = put_back_outputs(store, 5, {"t1"})

    assert sorted(put) == ["t1/export", "t1/out.txt", "t1/sub/notes.txt"]
    assert store.read_bytes("t1/out.txt") == b"g3"
    assert store.read_bytes("t1/sub/notes.txt") == b"g2 notes"
    assert stored(store, "t1/export") == ["model.txt"]
    assert store.read_bytes("t1/export/model.txt") == b"model g3"
    assert store.read_bytes("t1/result.json") == b"the driver's"
    assert not store.exists("t1/checkpoint_000003_g2")
    assert not store.exists("other")
    assert not store.exists(f"{kept_dir(2)}/t1/out.txt"), "outranked by generation 3's"
    assert store.read_bytes(f"{kept_dir(2)}/t1/sub/notes.txt") == b"g2 notes"


@pytest.mark.usefixtures("scratch")
def test_artifacts_never_replace_the_files_tunecore_keeps_in_the_trial_directory(
    storage: StorageTarget, driver_dir: Path, hosts: list[TrialHost]
) -> None:
    """A trainable writing `result.json` or a `checkpoint_000001_g2/`
    in its trial directory had them uploaded over the driver's result
    file and a stored checkpoint (`sync_artifacts`). They stay on the
    worker; other files, in directories too, are stored."""
    store = within(storage.store, "exp")
    store.write_bytes("t1/result.json", b"the driver's")
    _, host = host_of(storage, driver_dir, hosts, steps=1)
    trial_dir = Path(SEEN[-1].trial_dir)  # the trainable's (scratch) trial directory
    (trial_dir / "result.json").write_text("the trainable's")
    (trial_dir / "checkpoint_000001_g2").mkdir()
    (trial_dir / "checkpoint_000001_g2" / "x").write_text("the trainable's")
    (trial_dir / "mine").mkdir()
    (trial_dir / "mine" / "result.json").write_text("the trainable's")
    host.release()
    assert store.read_bytes("t1/result.json") == b"the driver's"
    assert not store.exists("t1/checkpoint_000001_g2")
    assert store.read_bytes("t1/mine/result.json") == b"the trainable's"
    assert store.read_bytes("t1/notes.txt") == b"count 1"
