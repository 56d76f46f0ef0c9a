"""A worker's run-ahead (`TrialHost.train_many` with a horizon): the
function passes the reports that cannot end the batch without waiting for
the host, yet never takes a step past where the batch must end: the
horizon, a checkpoint, or the trial's stopping criterion."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import pytest

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.executors.host import TrialHost
from tunecore.shell.storage.own_files import NotRegularFileError
from tunecore.shell.trainable import make_worker_trainable
from tunecore.shell.trainable.session import TrialSession
from tunecore.shell.trainable.worker import TrialContext

STEPS: list[int] = []
CHECKPOINT_AT = 5


def counts_steps(config: JsonDict) -> None:
    """Records each step before reporting it; reports a checkpoint at step 5."""
    for step in range(1, int(str(config["steps"])) + 1):
        STEPS.append(step)
        if step == CHECKPOINT_AT and config.get("checkpoint"):
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "state").write_text(str(step))
                tunecore.report(
                    {"step": step}, checkpoint=tunecore.Checkpoint.from_directory(directory)
                )
        else:
            tunecore.report({"step": step})


def host_for(
    tmp_path: Path, config: JsonDict, criterion: dict[str, float | bool] | None = None
) -> TrialHost:
    STEPS.clear()
    host = TrialHost(lambda cfg, ctx: make_worker_trainable(counts_steps, cfg, ctx))
    host.assign(
        config,
        TrialContext(
            trial_id="t0",
            trial_name="t0",
            trial_dir=str(tmp_path / "t0"),
            experiment_dir=str(tmp_path),
            stopping_criterion=criterion or {},
        ),
    )
    return host


def counting_resumes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The `ahead` of every resume the host gives the function."""
    resumes: list[int] = []
    resume = TrialSession.resume

    def counting(self: TrialSession, ahead: int = 0) -> None:
        resumes.append(ahead)
        resume(self, ahead)

    monkeypatch.setattr(TrialSession, "resume", counting)
    return resumes


def test_a_batch_to_the_horizon_costs_one_resume_and_no_step_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resumes = counting_resumes(monkeypatch)
    host = host_for(tmp_path, {"steps": 50})
    results, error, _ = host.train_many((256, None, ("training_iteration", 20)))
    assert error is None
    assert [r["step"] for r in results] == list(range(1, 21))
    assert list(range(1, 21)) == STEPS  # parked at the horizon, not a step beyond
    assert resumes == []  # the start let it run to the horizon: nothing waited on the way
    results, error, _ = host.train_many((256, None, ("training_iteration", 30)))
    assert [r["step"] for r in results] == list(range(21, 31))
    assert list(range(1, 31)) == STEPS
    assert resumes == [9]  # one resume, passing the 9 reports before the horizon
    host.release()


def test_a_report_with_a_checkpoint_waits_for_its_save(tmp_path: Path) -> None:
    host = host_for(tmp_path, {"steps": 50, "checkpoint": True})
    results, error, _ = host.train_many((256, None, ("training_iteration", 40)))
    assert error is None
    assert [r["step"] for r in results] == list(range(1, CHECKPOINT_AT + 1))
    assert results[-1]["should_checkpoint"] is True
    assert list(range(1, CHECKPOINT_AT + 1)) == STEPS  # the function waits in that report
    saved = host.save(str(tmp_path / "saved")).path
    assert Path(saved, "state").read_text() == str(CHECKPOINT_AT)
    results, _, _ = host.train_many((256, None, ("training_iteration", 40)))
    assert results[0]["step"] == CHECKPOINT_AT + 1
    host.release()


def test_a_report_with_its_own_training_iteration_waits_at_the_horizon(
    tmp_path: Path,
) -> None:
    """A function counting in tens reaches the horizon at its second
    report, where the count of results (which the run-ahead is granted
    by) stands at 2: it waits there, not a step beyond."""
    STEPS.clear()

    def counts_in_tens(config: JsonDict) -> None:
        for step in range(1, 50):
            STEPS.append(step)
            tunecore.report({"training_iteration": 10 * step})

    host = TrialHost(lambda cfg, ctx: make_worker_trainable(counts_in_tens, cfg, ctx))
    host.assign({}, host_context(tmp_path))
    results, error, _ = host.train_many((256, None, ("training_iteration", 20)))
    assert error is None
    assert [r["training_iteration"] for r in results] == [10, 20]
    assert STEPS == [1, 2]
    host.release()


def test_with_a_stopping_criterion_every_report_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resumes = counting_resumes(monkeypatch)
    host = host_for(tmp_path, {"steps": 50}, criterion={"step": 12})
    results, _, _ = host.train_many((256, None, ("training_iteration", 40)))
    assert [r["step"] for r in results] == list(range(1, 13))
    assert list(range(1, 13)) == STEPS
    assert resumes == [0] * 11
    host.release()


def test_one_result_per_call_never_runs_ahead(tmp_path: Path) -> None:
    host = host_for(tmp_path, {"steps": 50})
    host.train_many((256, None, ("training_iteration", 10)))
    assert host.train()["step"] == 11  # a plain call after a batch grants nothing
    assert list(range(1, 12)) == STEPS
    host.release()


def test_a_stop_while_running_ahead_unwinds_at_the_next_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop_requested = threading.Event()
    request_stop = TrialSession.request_stop

    def requesting(self: TrialSession) -> None:
        request_stop(self)
        stop_requested.set()

    monkeypatch.setattr(TrialSession, "request_stop", requesting)
    STEPS.clear()

    def slow_at_four(config: JsonDict) -> None:
        for step in range(1, 100):
            STEPS.append(step)
            if step == 4:
                stop_requested.wait()  # step 4 outlasts the batch's time
            tunecore.report({"step": step})

    host = TrialHost(lambda cfg, ctx: make_worker_trainable(slow_at_four, cfg, ctx))
    host.assign({}, host_context(tmp_path))
    results, _, _ = host.train_many((256, 0.05, ("training_iteration", 90)))
    assert [r["step"] for r in results] == [1, 2, 3]  # the batch's time was up in step 4
    host.release()  # the function, allowed to run ahead, is stopped in step 4...
    assert STEPS == [1, 2, 3, 4]  # ...and unwinds at its next report


def host_context(tmp_path: Path) -> TrialContext:
    return TrialContext(
        trial_id="t0", trial_name="t0", trial_dir=str(tmp_path / "t0"), experiment_dir=str(tmp_path)
    )


@pytest.mark.parametrize("linked", ["checkpoint", "trial"])
def test_a_save_never_writes_through_a_link_planted_in_place_of_its_directory(
    tmp_path: Path, linked: str
) -> None:
    """The driver makes the checkpoint's directory empty, then the worker
    saves into it: a link planted there in between (or in place of the
    trial directory) had the save copy the checkpoint into the directory
    linked to. The save is refused, naming the link, and writes nothing."""
    host = host_for(tmp_path, {"steps": 10, "checkpoint": True})
    _, error, _ = host.train_many((256, None, ("training_iteration", CHECKPOINT_AT)))
    assert error is None
    trial_dir = tmp_path / "t0"
    checkpoint_dir = trial_dir / "checkpoint_000005"
    checkpoint_dir.mkdir(parents=True)
    if linked == "checkpoint":
        theirs = tmp_path / "someone_else"
        theirs.mkdir()
        checkpoint_dir.rmdir()
        checkpoint_dir.symlink_to(theirs, target_is_directory=True)
        planted = checkpoint_dir
    else:  # the trial directory moved elsewhere and linked back
        moved = tmp_path / "elsewhere"
        trial_dir.rename(moved)
        trial_dir.symlink_to(moved, target_is_directory=True)
        theirs, planted = moved / "checkpoint_000005", trial_dir

    with pytest.raises(NotRegularFileError, match=f"symbolic link.*{planted}"):
        host.save(str(checkpoint_dir))
    assert list(theirs.iterdir()) == []
    host.release()
