"""`fit()` with a URI `storage_path` (issue 11): the driver stages locally
and ships, workers put their checkpoints in the storage, and the storage
alone is enough to resume. Run on `file://` (a directory other than the
staging one) and on a local S3 server, with the in-process executor (the
Ray executor runs the same host code: tests/integration/test_s3.py)."""

from __future__ import annotations

import datetime
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pydantic
import pytest

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore import (
    CheckpointConfig,
    FailureConfig,
    RunConfig,
    SyncConfig,
    TuneConfig,
    Tuner,
)
from tunecore.api import experiment_names
from tunecore.model import CheckpointSaved, JsonValue, TrialRequested
from tunecore.schedulers import PopulationBasedTraining
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import read_log
from tunecore.shell.inbox import AddTrialRequest, post_to_store
from tunecore.shell.lock import ExperimentLockedError, driver_lock
from tunecore.shell.mirror.lease import LeaseLostError
from tunecore.shell.mirror.mirror import Mirror
from tunecore.shell.mirror.stored_state import stored_log
from tunecore.shell.storage.resolve import resolve_storage, staging_root, within
from tunecore.shell.storage.store import Store
from tunecore.shell.trainable.checkpoint_files import META_FILE
from tunecore.shell.trainable.worker import TrialContext
from tunecore.shell.trial_view import Trial

TARGETS = ["file_store", "s3_store"]


def counting(config: Mapping[str, JsonValue]) -> None:
    """Reports `steps` results, a checkpoint with each; resumes from the last."""
    start = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = json.loads(Path(directory, "state.json").read_text())["step"]
    steps = config["steps"]
    assert isinstance(steps, int)
    for step in range(start + 1, steps + 1):
        fail_at = config.get("fail_at")
        if fail_at == step and checkpoint is None:
            raise RuntimeError(f"planned failure at step {step}")
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state.json").write_text(json.dumps({"step": step}))
            tunecore.report(
                {"score": step, "started_at": start},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def run(target: StorageTarget, name: str, **space: JsonValue) -> tunecore.ResultGrid:
    return Tuner(
        counting,
        param_space={"steps": 3, **space},
        tune_config=TuneConfig(metric="score", mode="max"),
        run_config=RunConfig(
            name=name,
            storage_path=target.uri,
            storage_filesystem=None,
            checkpoint_config=CheckpointConfig(num_to_keep=1),
            failure_config=FailureConfig(max_failures=1),
            verbose=0,
            executor="in_process",
        ),
    ).fit()


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> StorageTarget:
    given: StorageTarget = request.getfixturevalue(request.param)
    return given


def run_failing(target: StorageTarget) -> None:
    """A run of one trial that fails at its second step, in `exp`."""
    grid = Tuner(
        counting,
        param_space={"steps": 3, "fail_at": 2},
        tune_config=TuneConfig(metric="score", mode="max"),
        run_config=RunConfig(name="exp", storage_path=target.uri, verbose=0, executor="in_process"),
    ).fit()
    assert grid.errors


def trial_dirs(target: StorageTarget, name: str) -> list[str]:
    return [entry for entry in target.store.list(name) if entry.startswith("counting_")]


def test_the_storage_holds_log_trial_files_and_only_kept_checkpoints(
    target: StorageTarget, staging: Path
) -> None:
    grid = run(target, "exp")
    assert not grid.errors
    store = target.store
    assert store.list("exp/events"), "the event log reached the storage"
    [trial] = trial_dirs(target, "exp")
    names = store.list(f"exp/{trial}")
    assert {"params.json", "result.json", "progress.csv"} <= set(names)
    # num_to_keep=1: retention deleted the older ones in the storage
    assert [n for n in names if n.startswith("checkpoint_")] == ["checkpoint_000003"]
    assert store.exists(f"exp/{trial}/checkpoint_000003/.tunecore_checkpoint.json")
    rows = store.read_bytes(f"exp/{trial}/result.json").decode().splitlines()
    assert [json.loads(row)["score"] for row in rows] == [1, 2, 3]
    # the staging directory never held a checkpoint
    assert not list(staging.rglob("checkpoint_*"))


def test_the_best_checkpoint_of_the_results_reads_from_the_storage(
    target: StorageTarget,
) -> None:
    grid = run(target, "exp")
    checkpoint = grid.get_best_result().checkpoint
    assert checkpoint is not None
    with checkpoint.as_directory() as directory:
        assert json.loads(Path(directory, "state.json").read_text()) == {"step": 3}


def test_a_failed_trial_restores_from_the_checkpoint_in_storage(target: StorageTarget) -> None:
    grid = run(target, "exp", fail_at=2)
    [result] = list(grid)
    assert result.error is None
    assert result.metrics["score"] == 3
    assert result.metrics["started_at"] == 1  # it went on from checkpoint 1


def test_a_fresh_machine_resumes_from_the_uri_alone(
    target: StorageTarget, staging: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_failing(target)  # no max_failures: the trial ended in ERROR
    shutil.rmtree(staging)  # nothing local is left: a second machine
    monkeypatch.setenv("TUNECORE_STAGING", str(tmp_path / "elsewhere"))
    uri = target.experiment_uri("exp")
    assert Tuner.can_restore(uri)
    restored = Tuner.restore(uri, counting, resume_errored=True).fit()
    [result] = list(restored)
    assert result.error is None
    assert result.metrics["score"] == 3
    assert result.metrics["started_at"] == 1
    rows = target.store.read_bytes(f"exp/{trial_dirs(target, 'exp')[0]}/result.json")
    assert [json.loads(row)["score"] for row in rows.decode().splitlines()] == [1, 2, 3]


def test_running_again_under_the_same_name_keeps_the_earlier_run(
    target: StorageTarget,
) -> None:
    run(target, "exp")
    with pytest.warns(UserWarning, match="held an earlier experiment"):
        run(target, "exp")
    names = target.store.list("")
    assert "exp" in names
    [aside] = [name for name in names if name.startswith("exp_")]
    assert target.store.list(f"{aside}/events")


def test_the_staging_directory_is_per_storage(file_store: StorageTarget, staging: Path) -> None:
    run(file_store, "exp")
    [stage] = os.listdir(staging)
    assert (staging / stage / "exp" / "driver.lock").is_file()


def test_a_local_storage_run_shows_its_uri_and_leaves_no_staging_copy(
    file_store: StorageTarget, staging: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The status names the place asked for, and once the storage holds
    everything the staging copy goes: the results read the storage."""
    grid = Tuner(
        counting,
        param_space={"steps": 3},
        run_config=RunConfig(name="exp", storage_path=file_store.uri, executor="in_process"),
    ).fit()
    out = capsys.readouterr().out
    uri = file_store.experiment_uri("exp")
    assert f"Result logdir: {uri}\n" in out
    assert str(staging) not in out
    [stage] = os.listdir(staging)
    assert os.listdir(staging / stage / "exp") == ["driver.lock"]  # a lock file stays
    [result] = grid
    assert Path(result.path).parent == Path(file_store.store.local_path("exp") or "")
    frame = result.metrics_dataframe
    assert frame is not None
    assert list(frame["score"]) == [1, 2, 3]
    again = Tuner.restore(uri, counting, resume_errored=True).fit()  # it had finished
    assert [r.metrics["score"] for r in again] == [3]
    assert f"The experiment in {uri} had already finished" in capsys.readouterr().out
    assert os.listdir(staging / stage / "exp") == ["driver.lock"]


class WritesAHiddenFile(Callback):
    """A logger of the user's own, writing a file the shipper never stores
    (a hidden one) into each trial's directory."""

    def on_trial_result(
        self, iteration: int, trials: object, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        assert trial.local_path is not None
        Path(trial.local_path, ".notes").write_text("mine")


def test_a_staging_copy_the_storage_does_not_hold_whole_is_kept_with_a_warning(
    file_store: StorageTarget, staging: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The only copy of a file storage lacks stays where it is, and the
    results read it there."""
    grid = Tuner(
        counting,
        param_space={"steps": 3},
        run_config=RunConfig(
            name="exp",
            storage_path=file_store.uri,
            verbose=0,
            executor="in_process",
            callbacks=[WritesAHiddenFile()],
        ),
    ).fit()
    assert "Kept the staging copy" in caplog.text
    assert ".notes" in caplog.text
    [notes] = list(staging.rglob(".notes"))
    assert notes.read_text() == "mine"
    assert (notes.parent / "result.json").is_file()
    frame = grid[0].metrics_dataframe
    assert frame is not None
    assert list(frame["score"]) == [1, 2, 3]


def test_a_remote_storage_run_keeps_its_staging_copy(
    s3_store: StorageTarget, staging: Path
) -> None:
    [result] = run(s3_store, "exp")
    [stage] = os.listdir(staging)
    assert (staging / stage / "exp" / "events.log").is_file()
    frame = result.metrics_dataframe
    assert frame is not None
    assert list(frame["score"]) == [1, 2, 3]


def test_a_checkpoint_in_storage_can_be_reported_again(target: StorageTarget) -> None:
    """Fine-tuning from an earlier experiment's best checkpoint, as Ray
    users do: reporting the stored checkpoint downloads it into the new
    trial's own checkpoint."""
    best = run(target, "first").get_best_result().checkpoint
    assert best is not None

    def reports_it(config: Mapping[str, JsonValue]) -> None:
        tunecore.report({"score": 1}, checkpoint=best)

    [result] = list(
        Tuner(
            reports_it,
            run_config=RunConfig(
                name="second", storage_path=target.uri, verbose=0, executor="in_process"
            ),
        ).fit()
    )
    assert result.error is None
    assert result.checkpoint is not None
    with result.checkpoint.as_directory() as directory:
        assert json.loads(Path(directory, "state.json").read_text()) == {"step": 3}


class _Gate:
    """Orders the PBT test's trials (all four run at once, in threads of the
    in-process executor) so that its exploit does not depend on how the
    threads are scheduled: the slowest trial (rate 0.5) reports its step 2
    only once every other trial's step 2 has been judged (its `report()`
    returned, or it was exploited and started again from a checkpoint), and
    no other trial reports past step 2 before the slowest one's step 2 has
    been judged; and the others report their step 2 in the order of their
    rates (each waits for those of every lower rate to be judged), so each
    but the first, ranked alone, is the top trial at its perturbation and
    PBT asks it to save (as Ray's, it clones only such a save). PBT then
    ranks the slowest trial, at its first perturbation, against three live
    trials that all scored more: it is in the lower quantile and exploits
    one of the two best, each with its step-2 save."""

    def __init__(self, others: int) -> None:
        self._others = others
        self._changed = threading.Condition()
        self.reset()

    def reset(self) -> None:
        self._judged: set[str] = set()
        self._rates: dict[str, object] = {}
        self._slowest: str | None = None
        self._slowest_judged = False

    def _wait_for(self, condition: Callable[[], bool]) -> None:
        with self._changed:
            if not self._changed.wait_for(condition, timeout=60.0):
                raise RuntimeError("the PBT test's trials never all reached step 2")

    def judged(self, trial_id: str) -> None:
        with self._changed:
            if trial_id == self._slowest:
                self._slowest_judged = True
            else:
                self._judged.add(trial_id)
            self._changed.notify_all()

    def before_report(self, trial_id: str, rate: object, step: int, restored: bool) -> None:
        if rate == 0.5 and not restored:
            with self._changed:
                self._slowest = trial_id
        if not restored:
            with self._changed:
                self._rates[trial_id] = rate
        if step == 2 and trial_id == self._slowest and not restored:
            self._wait_for(lambda: len(self._judged) >= self._others)
        elif step == 2 and not restored and isinstance(rate, float | int):
            lower = {r for r in OTHER_RATES if r < rate}
            self._wait_for(lambda: lower <= {self._rates.get(t) for t in self._judged})
        elif step > 2 and trial_id != self._slowest:
            self._wait_for(lambda: self._slowest_judged)


OTHER_RATES = (1.0, 2.0, 3.0)
_GATE = _Gate(others=len(OTHER_RATES))


def climbs(config: Mapping[str, JsonValue]) -> None:
    """Adds `rate` per step to the score it restores; a checkpoint each
    step; through `_GATE` at step 2."""
    trial_id = tunecore.get_context().get_trial_id()
    score, step = 0.0, 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            score, step = json.loads(Path(directory, "state.json").read_text())
        _GATE.judged(trial_id)  # exploited: its step 2 was judged
    rate = config["rate"]
    assert isinstance(rate, float | int)
    while step < 8:
        score, step = score + rate, step + 1
        _GATE.before_report(trial_id, rate, step, restored=checkpoint is not None)
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state.json").write_text(json.dumps([score, step]))
            tunecore.report(
                {"score": score, "step": step},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )
        if step == 2:
            _GATE.judged(trial_id)


def climbing_under_pbt(storage_path: str, *callbacks: Callback) -> tunecore.ResultGrid:
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=2,
        hyperparam_mutations={"rate": [0.5, 1.0, 2.0]},
        quantile_fraction=0.5,
        seed=1,
    )
    _GATE.reset()
    return Tuner(
        # All four at once on any machine: the gate waits for each of them.
        tunecore.with_resources(climbs, {"cpu": 0.25}),
        param_space={"rate": tunecore.grid_search([0.5, *OTHER_RATES])},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt),
        run_config=RunConfig(
            name="pbt",
            storage_path=storage_path,
            verbose=0,
            executor="in_process",
            callbacks=list(callbacks),
        ),
    ).fit()


class StoredExploitCopies(Callback):
    """The exploit copies in the store at each result, and whether each
    holds its checkpoint's marker (a whole copy) when first seen. Every copy
    is seen: the exploited trial reports from it before its next exploit,
    and a copy is deleted only at that trial's next restore (no hook marks a
    restore: Ray Tune never calls `on_trial_restore`)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen: dict[tuple[str, str], bool] = {}

    def on_trial_result(self, iteration: int, trials: object, trial: Trial, result: object) -> None:
        for name, entry in exploit_copies_in(self.store):
            marker = f"pbt/{name}/{entry}/{META_FILE}"
            self.seen.setdefault((name, entry), self.store.exists(marker))


def exploit_copies_in(store: Store) -> list[tuple[str, str]]:
    return [
        (name, entry)
        for name in store.list("pbt")
        if "climbs_" in name  # with_resources may prefix the name
        for entry in store.list(f"pbt/{name}")
        if entry.startswith("exploit_")
    ]


def test_pbt_exploits_copy_the_donor_within_the_storage(target: StorageTarget) -> None:
    copies = StoredExploitCopies(target.store)
    grid = climbing_under_pbt(target.uri, copies)
    assert [r.error for r in grid] == [None] * 4
    exploited = list(copies.seen)
    assert exploited, "PBT exploited no trial"
    assert all(copies.seen.values()), copies.seen
    assert exploit_copies_in(target.store) == []  # deleted as the run ended
    # The slowest trial was exploited at its first perturbation and went on
    # from a better trial's checkpoint: without it, it would end at 8 x 0.5.
    assert any(name.endswith("rate=0.5") for name, _ in exploited)
    assert all(r.metrics["step"] == 8 for r in grid)
    scores = [r.metrics["score"] for r in grid]
    assert all(isinstance(s, float | int) for s in scores)
    assert min(s for s in scores if isinstance(s, float | int)) > 0.5 * 8


def test_pbt_never_writes_over_a_recorded_checkpoint(tmp_path: Path) -> None:
    """An exploited trial goes back to its donor's iteration and saves those
    iterations again: into new directories, never over one the log has
    recorded, which another trial's exploit may be copying at that moment
    (it once found the donor's newest checkpoint emptied, or copied it
    without its marker)."""
    # Which trial exploits which, and when, depends on how the trials
    # interleave: a run in which no exploit went back far enough to save an
    # iteration again shows nothing, so up to three runs are made (each is
    # checked whole).
    again: list[Path] = []
    for attempt in range(3):
        storage = tmp_path / f"run_{attempt}"
        grid = climbing_under_pbt(str(storage))
        assert [r.error for r in grid] == [None] * 4
        saved: dict[str, list[Path]] = {}
        for event in read_log(storage / "pbt").events:
            if isinstance(event, CheckpointSaved):
                # Recorded relative to the experiment directory (portable).
                saved.setdefault(event.trial_id, []).append(storage / "pbt" / event.checkpoint.path)
        for paths in saved.values():
            assert len(paths) == len(set(paths)), "a recorded checkpoint was written over"
            assert all((path / META_FILE).is_file() for path in paths)
        again = [path for paths in saved.values() for path in paths if path.name.endswith("_1")]
        if again:
            break
    assert again, "no trial saved an iteration a second time: the test shows nothing"


def writes_an_artifact(config: Mapping[str, JsonValue]) -> None:
    """Writes a file in its trial directory, as Ray's artifact examples do."""
    trial_dir = Path(tunecore.get_context().get_trial_dir())
    (trial_dir / "plots").mkdir(exist_ok=True)
    (trial_dir / "plots" / "curve.txt").write_text("a curve")
    tunecore.report({"score": 1})


@pytest.mark.parametrize("sync_artifacts", [True, False])
def test_sync_artifacts_uploads_what_the_trial_wrote_in_its_directory(
    file_store: StorageTarget, sync_artifacts: bool
) -> None:
    [result] = list(
        Tuner(
            writes_an_artifact,
            run_config=RunConfig(
                name="artifacts",
                storage_path=file_store.uri,
                sync_config=SyncConfig(sync_artifacts=sync_artifacts),
                verbose=0,
                executor="in_process",
            ),
        ).fit()
    )
    assert result.error is None
    trial_dir = Path(result.path).name
    stored = file_store.store.exists(f"artifacts/{trial_dir}/plots/curve.txt")
    assert stored is sync_artifacts


def test_a_restore_keeps_the_sync_config(file_store: StorageTarget) -> None:
    sync = SyncConfig(sync_period=2.5, sync_timeout=30, sync_artifacts=True)
    Tuner(
        writes_an_artifact,
        run_config=RunConfig(
            name="kept",
            storage_path=file_store.uri,
            sync_config=sync,
            verbose=0,
            executor="in_process",
        ),
    ).fit()
    restored = Tuner.restore(file_store.experiment_uri("kept"), writes_an_artifact)
    assert restored._run.sync_config == sync


def test_a_sync_period_of_nothing_is_refused_naming_it() -> None:
    with pytest.raises(pydantic.ValidationError, match="sync_period"):
        SyncConfig(sync_period=0)


def test_rows_the_stored_result_file_lacks_are_put_back_from_the_log(
    target: StorageTarget, staging: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A killed driver's result.json in storage may lag its stored log (it
    is shipped less often): a resume from the URI writes back every row the
    log holds, so none is lost."""
    Tuner(
        counting,
        param_space={"steps": 3, "fail_at": 2},
        run_config=RunConfig(name="exp", storage_path=target.uri, verbose=0, executor="in_process"),
    ).fit()
    [trial] = trial_dirs(target, "exp")
    target.store.write_bytes(f"exp/{trial}/result.json", b"")  # as if not shipped yet
    target.store.delete_file(f"exp/{trial}/progress.csv")
    shutil.rmtree(staging)
    monkeypatch.setenv("TUNECORE_STAGING", str(tmp_path / "elsewhere"))
    Tuner.restore(target.experiment_uri("exp"), counting, resume_errored=True).fit()
    rows = target.store.read_bytes(f"exp/{trial}/result.json").decode().splitlines()
    assert [json.loads(row)["score"] for row in rows] == [1, 2, 3]
    progress = target.store.read_bytes(f"exp/{trial}/progress.csv").decode().splitlines()
    assert len(progress) == 1 + 3  # the header and a row per result


def every_other(config: Mapping[str, JsonValue]) -> None:
    """Reports steps 1..5, a checkpoint with the even ones; the first run
    fails at step 4, after step 3 was reported past checkpoint 2."""
    start = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = json.loads(Path(directory, "state.json").read_text())["step"]
    for step in range(start + 1, 6):
        if step == 4 and start == 0:
            raise RuntimeError("planned failure at step 4")
        if step % 2:
            tunecore.report({"score": step})
            continue
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state.json").write_text(json.dumps({"step": step}))
            tunecore.report(
                {"score": step}, checkpoint=tunecore.Checkpoint.from_directory(directory)
            )


def test_rows_put_back_from_the_log_leave_out_what_an_earlier_resume_dropped(
    target: StorageTarget, staging: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log holds the results an earlier resume dropped from the files
    (those after the checkpoint it went on from, which the trial reported
    again): rows put back from the log must leave them out too."""
    run_config = RunConfig(name="exp", storage_path=target.uri, verbose=0, executor="in_process")
    Tuner(every_other, run_config=run_config).fit()  # 1, 2, 3, then fails
    uri = target.experiment_uri("exp")
    Tuner.restore(uri, every_other, resume_errored=True).fit()  # from 2: 3, 4, 5
    [trial] = [name for name in target.store.list("exp") if name.startswith("every_other_")]

    def scores() -> list[JsonValue]:
        rows = target.store.read_bytes(f"exp/{trial}/result.json").decode().splitlines()
        return [json.loads(row)["score"] for row in rows]

    assert scores() == [1, 2, 3, 4, 5]
    target.store.write_bytes(f"exp/{trial}/result.json", b"")  # as if not shipped yet
    shutil.rmtree(staging)
    monkeypatch.setenv("TUNECORE_STAGING", str(tmp_path / "elsewhere"))
    Tuner.restore(uri, every_other).fit()
    assert scores() == [1, 2, 3, 4, 5]


def test_a_driver_on_another_machine_keeps_a_second_one_out(target: StorageTarget) -> None:
    """The staging lock only sees this machine; the lease in the storage
    refuses a driver on another one while the first renews it, and a run
    that ends gives it up."""
    run(target, "exp")
    assert not target.store.exists("exp/driver.lease")
    lease = {"host": "other-host", "pid": 4242, "token": "theirs", "renewed": time.time()}
    target.store.write_bytes("exp/driver.lease", json.dumps(lease).encode())
    target.store.write_bytes("exp/inbox/0001-1-000001.json", b'{"type": "stop"}')
    with pytest.raises(ExperimentLockedError, match="pid 4242 on host 'other-host'"):
        Tuner.restore(target.experiment_uri("exp"), counting).fit()
    assert target.store.list("exp/events"), "the stored experiment is untouched"
    # The running driver's request stays for it: a refused one takes nothing.
    assert target.store.list("exp/inbox") == ["0001-1-000001.json"]


def test_a_stored_trial_directory_linked_elsewhere_is_never_used(
    file_store: StorageTarget, tmp_path: Path
) -> None:
    """A `file://` storage whose trial directory is a symbolic link to
    someone else's: a resume neither deletes their checkpoints nor writes
    into it, and readers never read through it."""
    run_failing(file_store)
    [trial] = trial_dirs(file_store, "exp")
    stored = Path(file_store.store.local_path(f"exp/{trial}") or "")
    theirs = tmp_path / "someone_else"
    shutil.copytree(stored, theirs)
    (theirs / "result.json").write_text('{"score": 999, "trial_id": "theirs"}\n')
    before = {p.relative_to(theirs): p.read_bytes() for p in theirs.rglob("*") if p.is_file()}
    shutil.rmtree(stored)
    stored.symlink_to(theirs, target_is_directory=True)

    with pytest.raises(OSError, match=f"symbolic link.*{trial}"):
        Tuner.restore(file_store.experiment_uri("exp"), counting, resume_errored=True).fit()
    assert {
        p.relative_to(theirs): p.read_bytes() for p in theirs.rglob("*") if p.is_file()
    } == before

    scores = [
        r.metrics.get("score")
        for r in tunecore.ResultGrid.from_path(file_store.experiment_uri("exp"))
    ]
    assert 999 not in scores


@pytest.mark.parametrize("subtree", [False, True])
def test_a_storage_on_pyarrows_local_filesystem_never_writes_through_a_link(
    tmp_path: Path, staging: Path, subtree: bool
) -> None:
    """`storage_filesystem=pyarrow.fs.LocalFileSystem()` names the same
    local directory as a `file://` URI, and keeps its promises: a resume
    wrote its trial's files and checkpoints into the directory a stored
    trial directory was linked to. So does a `SubTreeFileSystem` over it
    (the directory `storage_path` names inside its base directory): the
    resume deleted the linked directory's checkpoint and stored its own
    there."""
    import pyarrow.fs  # noqa: PLC0415 - optional, and slow to import

    root = tmp_path / "storage"
    filesystem: pyarrow.fs.FileSystem = pyarrow.fs.LocalFileSystem()
    path = str(root)
    if subtree:
        filesystem = pyarrow.fs.SubTreeFileSystem(str(tmp_path), filesystem)  # type: ignore[attr-defined]
        path = "storage"
    config = RunConfig(
        name="exp",
        storage_path=path,
        storage_filesystem=filesystem,
        verbose=0,
        executor="in_process",
    )
    assert Tuner(counting, param_space={"steps": 3, "fail_at": 2}, run_config=config).fit().errors
    [stored] = (root / "exp").glob("counting_*")
    theirs = tmp_path / "someone_else"
    stored.rename(theirs)
    stored.symlink_to(theirs, target_is_directory=True)
    before = {p.relative_to(theirs): p.read_bytes() for p in theirs.rglob("*") if p.is_file()}

    with pytest.raises(OSError, match=f"symbolic link.*{stored.name}"):
        Tuner.restore(
            f"{path}/exp", counting, resume_errored=True, storage_filesystem=filesystem
        ).fit()
    assert {
        p.relative_to(theirs): p.read_bytes() for p in theirs.rglob("*") if p.is_file()
    } == before


def test_a_stored_result_file_linked_elsewhere_is_not_read(
    file_store: StorageTarget, tmp_path: Path
) -> None:
    run(file_store, "exp")
    [trial] = trial_dirs(file_store, "exp")
    stored = Path(file_store.store.local_path(f"exp/{trial}/result.json") or "")
    theirs = tmp_path / "theirs.json"
    theirs.write_text(stored.read_text().replace('"score":3', '"score":999'))
    stored.unlink()
    stored.symlink_to(theirs)

    results = tunecore.ResultGrid.from_path(file_store.experiment_uri("exp"))
    [result] = list(results)
    assert result.metrics["score"] == 3  # from the log, not the linked file
    rows = result.metrics_dataframe
    assert rows is None or 999 not in list(rows["score"])


def test_a_resume_takes_stored_requests_once_past_a_bad_entry(
    target: StorageTarget, caplog: pytest.LogCaptureFixture
) -> None:
    """A directory in the stored inbox (`inbox/0.json/x` on S3) is skipped
    and removed; the request after it is taken once, and leaves storage
    only with the log that records it."""
    Tuner(
        counting,
        param_space={"steps": 3, "fail_at": 2},
        tune_config=TuneConfig(metric="score", mode="max"),
        run_config=RunConfig(name="exp", storage_path=target.uri, verbose=0, executor="in_process"),
    ).fit()
    store = within(target.store, "exp")
    store.write_bytes("inbox/00000000000000000000-1-000000.json/x", b"{}")
    name = post_to_store(store, AddTrialRequest(config={"steps": 2})).rpartition("/")[2]
    uri = target.experiment_uri("exp")
    restored = Tuner.restore(uri, counting, resume_errored=True).fit()
    assert len(restored) == 2
    assert "skipped a request that is a directory" in caplog.text
    assert store.list("inbox") == []
    requested = [e for e in read_log_of(target, "exp") if isinstance(e, TrialRequested)]
    assert [e.request for e in requested] == [name]


def read_log_of(target: StorageTarget, name: str) -> list[object]:
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "events.log").write_bytes(stored_log(within(target.store, name)))
        return list(read_log(Path(scratch)).events)


def reports_until_stopped(config: Mapping[str, JsonValue]) -> None:
    step = 0
    while True:
        step += 1
        tunecore.report({"score": step})


class TakenOverAtFirstResult(Callback):
    """Another driver takes the lease over (this one was frozen past its
    lapse, as far as the other could tell) and renews it, as drivers do."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.renewed = 0.0

    def on_trial_result(self, iteration: int, trials: object, trial: Trial, result: object) -> None:
        if time.monotonic() - self.renewed > 0.05:
            self.renewed = time.monotonic()
            theirs = {
                "host": "other-host",
                "pid": 4242,
                "token": "theirs",
                "renewed": time.time(),
                "generation": 9,
            }
            self.store.write_bytes("driver.lease", json.dumps(theirs).encode())


def test_a_driver_whose_experiment_another_took_over_stops_naming_it(
    target: StorageTarget,
) -> None:
    store = within(target.store, "exp")
    with pytest.raises(LeaseLostError, match=r"pid 4242 on host 'other-host', generation 9"):
        Tuner(
            reports_until_stopped,
            tune_config=TuneConfig(time_budget_s=30),  # bounds it even if it never stops
            run_config=RunConfig(
                name="exp",
                storage_path=target.uri,
                sync_config=SyncConfig(sync_period=0.1),
                callbacks=[TakenOverAtFirstResult(store)],
                verbose=0,
                executor="in_process",
            ),
        ).fit()
    assert json.loads(store.read_bytes("driver.lease"))["token"] == "theirs"  # never overwritten


def test_a_link_planted_in_a_kept_staging_copy_sets_it_aside(
    s3_store: StorageTarget, staging: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An S3 run keeps its staging copy (the results read their histories
    from it), and the next resume on this machine went on in it when its
    log extended the stored one. A trial directory there replaced by a
    link to someone else's made the resume fail for good, naming the link
    (and a link planted while it ran, raced, had it write there). tunecore
    makes no link there, so such a copy is set aside, as a diverging one
    is, and the resume goes on from the storage: nothing is written or
    read there, and the trial's stored files are its own."""
    run_failing(s3_store)
    [stage] = os.listdir(staging)
    [kept] = (staging / stage / "exp").glob("counting_*")
    theirs = tmp_path / "someone_else"
    theirs.mkdir()
    planted = b'{"score": 999, "trial_id": "theirs"}\n'
    (theirs / "result.json").write_bytes(planted)
    shutil.rmtree(kept)
    kept.symlink_to(theirs, target_is_directory=True)

    with caplog.at_level(logging.WARNING):
        [result] = Tuner.restore(
            s3_store.experiment_uri("exp"), counting, resume_errored=True
        ).fit()

    assert result.error is None
    assert result.metrics["score"] == 3
    assert {p.name: p.read_bytes() for p in theirs.iterdir()} == {"result.json": planted}
    stored = s3_store.store.read_bytes(f"exp/{kept.name}/result.json")
    assert b'"theirs"' not in stored
    assert f"The staging directory holds {kept} (a symbolic link)" in caplog.text
    [aside] = (staging / stage).glob("exp.quarantine-*")
    assert (aside / kept.name).is_symlink()
    assert not kept.is_symlink()


def reporting_the_lease(config: Mapping[str, JsonValue]) -> None:
    context = tunecore.get_context()
    assert isinstance(context, TrialContext)
    tunecore.report({"generation": context.lease_generation})


def test_each_worker_knows_its_driver_s_lease_generation(file_store: StorageTarget) -> None:
    """What a worker checks before it stores a checkpoint (a later
    driver's claim: `persist.MirroredTrial`) needs its driver's generation."""
    grid = Tuner(
        reporting_the_lease,
        run_config=RunConfig(
            name="exp", storage_path=file_store.uri, verbose=0, executor="in_process"
        ),
    ).fit()
    [claim] = [n for n in file_store.store.list("exp/events") if n.startswith("claim_")]
    assert claim.startswith("claim_g00000001_")
    assert grid[0].metrics["generation"] == 1


class _FixedClock:
    """`datetime` as `experiment_names` reads it, stopped at one second."""

    class datetime:
        @staticmethod
        def now() -> datetime.datetime:
            return datetime.datetime(2026, 1, 2, 3, 4, 5)


def test_a_default_name_another_driver_holds_goes_on_to_the_next(
    file_store: StorageTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two drivers started in the same second, with a URI and no name,
    picked one default name: the second failed with ExperimentLockedError
    though the user had named nothing. (Locally, `_2` was taken.) Now it
    runs as `<name>_2`, and the first keeps its experiment."""
    monkeypatch.setattr(experiment_names, "datetime", _FixedClock)
    spec, root = resolve_storage(file_store.uri)
    first = Mirror(spec, root, "counting_2026-01-02_03-04-05")
    first.staging_dir.mkdir(parents=True, exist_ok=True)
    with driver_lock(first.staging_dir):  # the first driver, still starting
        grid = Tuner(
            counting,
            param_space={"steps": 1},
            run_config=RunConfig(storage_path=file_store.uri, verbose=0, executor="in_process"),
        ).fit()
    assert not grid.errors
    assert grid.experiment_path.endswith("/counting_2026-01-02_03-04-05_2")
    assert not file_store.store.exists("counting_2026-01-02_03-04-05/events")


def stale_checkpoint(store: Store, trial: str, name: str) -> None:
    """A checkpoint of step 99 in `trial`'s directory, as a worker of the
    first driver, paused past its lease, stores it once it thaws."""
    store.write_bytes(f"{trial}/{name}/state.json", json.dumps({"step": 99}).encode())
    store.write_bytes(f"{trial}/{name}/{META_FILE}", b"{}")


def dirname(uri: str) -> str:
    """The last component of `uri`'s path (its query left out)."""
    return Path(uri.partition("?")[0]).name


def test_a_resume_on_an_object_store_names_its_generation_s_checkpoints(
    s3_store: StorageTarget, staging: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On S3 a stale worker's upload cannot be refused, so each lease
    generation after the first stores its checkpoints under names of its
    own (`checkpoint_000002_g2`), which its log records. Generation 1's
    `checkpoint_000002` and `checkpoint_000003` (step 99), which no log
    names, go with the resume's claim; landing again after it (a paused
    worker thawing late) they replace nothing the resume stored, and
    every reader (the results, `best_checkpoints`, `ResultGrid.from_path`,
    the checkpoint's download) reads only what the log names. The next
    resume deletes them again."""
    run_failing(s3_store)  # generation 1: checkpoint_000001, then the trial failed
    [trial] = trial_dirs(s3_store, "exp")
    store = within(s3_store.store, "exp")
    stale = ("checkpoint_000002", "checkpoint_000003")
    for name in stale:
        stale_checkpoint(store, trial, name)
    monkeypatch.setenv("TUNECORE_STAGING", str(tmp_path / "elsewhere"))
    uri = s3_store.experiment_uri("exp")
    resumed = ["checkpoint_000002_g2", "checkpoint_000003_g2"]

    [result] = Tuner.restore(uri, counting, resume_errored=True).fit()

    left = sorted(n for n in store.list(trial) if n.startswith("checkpoint_"))
    assert left == ["checkpoint_000001", *resumed]
    for name in stale:  # a stale worker thaws after the claim
        stale_checkpoint(store, trial, name)
    assert result.error is None
    assert result.checkpoint is not None
    assert dirname(result.checkpoint.path) == "checkpoint_000003_g2"
    for read in (result, tunecore.ResultGrid.from_path(uri)[0]):
        named = {dirname(c.path): c for c, _ in read.best_checkpoints}
        assert sorted(named) == ["checkpoint_000001", *resumed]
        for name, checkpoint in named.items():
            with checkpoint.as_directory() as directory:
                step = json.loads(Path(directory, "state.json").read_text())["step"]
            assert step == int(name[len("checkpoint_") :][:6])
        copy = read.best_checkpoints[-1][0].to_directory(str(tmp_path / f"copy_{id(read)}"))
        assert json.loads(Path(copy, "state.json").read_text()) == {"step": 3}

    Tuner.restore(uri, counting, resume_errored=True).fit()

    left = sorted(n for n in store.list(trial) if n.startswith("checkpoint_"))
    assert left == ["checkpoint_000001", *resumed]


def noting(config: Mapping[str, JsonValue]) -> None:
    """`counting`, having written `notes.txt` (an artifact) saying which
    step it started after."""
    checkpoint = tunecore.get_checkpoint()
    start = 0
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = json.loads(Path(directory, "state.json").read_text())["step"]
    Path(tunecore.get_context().get_trial_dir(), "notes.txt").write_text(f"after {start}")
    counting(config)


def test_a_resume_on_an_object_store_puts_back_an_output_a_stale_worker_replaced(
    s3_store: StorageTarget, staging: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker of the first driver, paused past its lease, stores its
    `notes.txt` (`sync_artifacts`) once it thaws, over the one the
    resume's worker stored, with no check after it. The resume's worker
    had kept its own under `.tunecore_kept_g2/`, which the next resume
    puts back at Ray's name."""
    Tuner(
        noting,
        param_space={"steps": 3, "fail_at": 2},
        run_config=RunConfig(
            name="exp",
            storage_path=s3_store.uri,
            verbose=0,
            executor="in_process",
            sync_config=SyncConfig(sync_artifacts=True),
        ),
    ).fit()
    [trial] = [name for name in s3_store.store.list("exp") if name.startswith("noting_")]
    store = within(s3_store.store, "exp")
    assert store.read_bytes(f"{trial}/notes.txt") == b"after 0"
    monkeypatch.setenv("TUNECORE_STAGING", str(tmp_path / "elsewhere"))
    uri = s3_store.experiment_uri("exp")
    Tuner.restore(uri, noting, resume_errored=True).fit()
    assert store.read_bytes(f"{trial}/notes.txt") == b"after 1"
    assert store.read_bytes(f".tunecore_kept_g00000002/{trial}/notes.txt") == b"after 1"

    store.write_bytes(f"{trial}/notes.txt", b"after 0")  # the stale worker thaws
    Tuner.restore(uri, noting, resume_errored=True).fit()

    assert store.read_bytes(f"{trial}/notes.txt") == b"after 1"


def test_a_new_run_keeps_a_staging_log_the_storage_never_got(
    target: StorageTarget, staging: Path
) -> None:
    """A run whose storage was unreachable (or full) the whole time, or
    whose driver was killed before its first shipment, is only in the
    staging directory. Running the script again under the same name then
    emptied the staging directory for the new run: the one copy of the
    earlier log was deleted. It is set aside beside it instead; a staging
    log the storage holds is not (a re-run sets nothing aside)."""
    spec, _ = resolve_storage(target.uri, target.filesystem)
    root = Path(staging_root(spec))
    Tuner(
        counting,
        param_space={"steps": 2},
        run_config=RunConfig(name="exp", storage_path=str(root), verbose=0, executor="in_process"),
    ).fit()
    log = (root / "exp" / "events.log").read_bytes()

    assert not run(target, "exp").errors
    [kept] = [entry for entry in root.iterdir() if entry.name.startswith("exp.quarantine-")]
    assert (kept / "events.log").read_bytes() == log

    with pytest.warns(UserWarning, match="held an earlier experiment"):
        assert not run(target, "exp").errors
    assert [entry for entry in root.iterdir() if entry.name.startswith("exp.quarantine-")] == [kept]
