"""Checkpoint directories deleted behind tunecore's back (a user's `rm`, a
lost disk): the trial that needs one fails with the path in its error, and
the experiment and its results survive (issue 10, item 5); and those a
killed driver left behind, which a resume deletes. In-process executor
throughout."""

from __future__ import annotations

import itertools
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore
from tunecore import CheckpointConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.model import CheckpointRef, JsonValue, TrialStatus
from tunecore.schedulers import PopulationBasedTraining
from tunecore.shell.callbacks import Callback
from tunecore.shell.replay import replay
from tunecore.shell.trial_view import Trial

STEPS = 4


class Crash(BaseException):
    """Not an Exception: callbacks' errors are contained, this one is not."""


class CrashAtSecondCheckpoint(Callback):
    """Kills the driver once the second checkpoint is saved."""

    def on_checkpoint(
        self, iteration: int, trials: object, trial: Trial, checkpoint: CheckpointRef
    ) -> None:
        if checkpoint.training_iteration == 2:
            raise Crash


class DeleteCheckpointsOfRate(Callback):
    """Deletes, as soon as it is saved, every checkpoint of the trials whose
    rate is `rate`: PBT's donors, when they score best."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def on_checkpoint(
        self, iteration: int, trials: object, trial: Trial, checkpoint: CheckpointRef
    ) -> None:
        if trial.config["rate"] == self.rate:
            shutil.rmtree(checkpoint.path)


def counting(config: Mapping[str, JsonValue]) -> None:
    """Reports STEPS steps, each with a checkpoint; resumes from its own."""
    start = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = int(Path(directory, "step").read_text())
    for step in range(start + 1, STEPS + 1):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            checkpoint = tunecore.Checkpoint.from_directory(directory)
            tunecore.report({"loss": 1.0 / step}, checkpoint=checkpoint)


class Pace:
    """Holds the `slow` trial's second report until the `fast` trial's
    second one was answered, so PBT, at the slow trial's first perturbation,
    has both trials' scores: the in-process executor's threads may run one
    trial ahead of the other on a loaded machine."""

    def __init__(self, slow: float, fast: float) -> None:
        self.slow, self.fast = slow, fast
        self._fast_answered = threading.Event()

    def before_report(self, rate: float, step: int) -> None:
        if rate == self.slow and step == 2:
            assert self._fast_answered.wait(60), "the fast trial never reported twice"

    def after_report(self, rate: float, step: int) -> None:
        if rate == self.fast and step == 2:
            self._fast_answered.set()


PACE: Pace | None = None
"""Set by a test that needs the two trials of `scoring` in step."""


def scoring(config: Mapping[str, JsonValue]) -> None:
    """Adds its rate to a score kept in its checkpoint, every step."""
    score = 0.0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            score = float(Path(directory, "score").read_text())
    rate = config["rate"]
    assert isinstance(rate, float)
    for step in itertools.count(1):
        score += rate
        if PACE is not None:
            PACE.before_report(rate, step)
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "score").write_text(str(score))
            checkpoint = tunecore.Checkpoint.from_directory(directory)
            tunecore.report({"score": score}, checkpoint=checkpoint)
        if PACE is not None:
            PACE.after_report(rate, step)


def run_config(tmp_path: Path, *callbacks: Callback, **settings: object) -> RunConfig:
    return RunConfig(
        name="gone",
        storage_path=str(tmp_path),
        verbose=0,
        executor="in_process",
        callbacks=list(callbacks),
        **settings,  # type: ignore[arg-type]
    )


def test_results_leave_out_a_deleted_checkpoint_with_a_warning(tmp_path: Path) -> None:
    settings = run_config(tmp_path, checkpoint_config=CheckpointConfig(num_to_keep=2))
    [result] = Tuner(counting, run_config=settings).fit()
    assert result.checkpoint is not None
    newest = result.checkpoint.path
    older = result.best_checkpoints[0][0].path
    shutil.rmtree(newest)

    with pytest.warns(UserWarning, match=re.escape(newest)):
        [read] = ResultGrid.from_path(tmp_path / "gone")
    with pytest.warns(UserWarning, match=re.escape(newest)):
        [resumed] = Tuner.restore(str(tmp_path / "gone"), counting).fit()

    for again in (read, resumed):
        assert again.status is TrialStatus.TERMINATED
        assert again.checkpoint is None
        assert [checkpoint.path for checkpoint, _ in again.best_checkpoints] == [older]
        assert again.best_checkpoints[0][1]["training_iteration"] == STEPS - 1


def test_a_restore_from_a_deleted_checkpoint_fails_the_trial_naming_it(tmp_path: Path) -> None:
    with pytest.raises(Crash):
        Tuner(counting, run_config=run_config(tmp_path, CrashAtSecondCheckpoint())).fit()
    [newest] = (tmp_path / "gone").glob("counting_*/checkpoint_000002")
    shutil.rmtree(newest)

    with pytest.warns(UserWarning, match=re.escape(str(newest))):
        [result] = Tuner.restore(str(tmp_path / "gone"), counting).fit()

    assert result.status is TrialStatus.ERROR
    assert result.error is not None
    assert f"the checkpoint directory {newest} to restore from does not exist" in str(result.error)
    assert result.checkpoint is None
    replay(tmp_path / "gone")  # verifies against the snapshots: no mismatch


def exploiting(rates: list[JsonValue]) -> PopulationBasedTraining:
    """PBT over two trials: every 2 iterations the worse takes the better's
    checkpoint, its rate resampled from `rates`."""
    return PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=2,
        hyperparam_mutations={"rate": rates},
        quantile_fraction=0.5,
        seed=1,
    )


def test_pbt_fails_the_trial_whose_donor_checkpoint_was_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "PACE", Pace(slow=0.5, fast=3.0))
    pbt = exploiting([0.5, 1.0])
    settings = run_config(tmp_path, DeleteCheckpointsOfRate(3.0), stop={"training_iteration": 6})
    tuner = Tuner(
        scoring,
        param_space={"rate": tunecore.grid_search([0.5, 3.0])},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt),
        run_config=settings,
    )
    with pytest.warns(UserWarning, match="is gone"):
        slow, fast = tuner.fit()

    assert fast.status is TrialStatus.TERMINATED
    assert fast.metrics["training_iteration"] == 6
    assert fast.checkpoint is None
    assert fast.best_checkpoints == []
    assert slow.status is TrialStatus.ERROR
    assert slow.error is not None
    assert "PBT's exploit could not copy the checkpoint" in str(slow.error)
    assert re.search(re.escape(fast.path) + r"/checkpoint_\d{6}", str(slow.error))
    assert not list(Path(slow.path).glob("exploit_*"))  # no half copy left behind
    replayed = replay(tmp_path / "gone")
    assert replayed.state.trials[slow.trial_id].status is TrialStatus.ERROR


def test_a_resume_deletes_the_checkpoints_retention_dropped_and_nothing_newer(
    tmp_path: Path,
) -> None:
    settings = run_config(
        tmp_path, CrashAtSecondCheckpoint(), checkpoint_config=CheckpointConfig(num_to_keep=1)
    )
    with pytest.raises(Crash):
        Tuner(counting, run_config=settings).fit()
    [trial_dir] = (tmp_path / "gone").glob("counting_*")
    # What a killed driver leaves: an old checkpoint retention dropped but
    # did not delete (put back by hand), and a newer save never logged (the
    # trial saves iteration 3 again; 7 it never reaches, and a newer one
    # may be what records cut by `replay --truncate` named: it stays).
    # The same for the names of an iteration saved again after a restore to
    # an earlier one (`checkpoint_NNNNNN_n`, see `ExperimentStorage.checkpoint_path`).
    for stray in (
        "checkpoint_000000",
        "checkpoint_000000_1",
        "checkpoint_000003",
        "checkpoint_000007",
        "checkpoint_000007_2",
    ):
        (trial_dir / stray).mkdir(exist_ok=True)
        (trial_dir / stray / "step").write_text("7")
    (trial_dir / "checkpoint_notes").mkdir()  # not a name tunecore gives
    (trial_dir / "checkpoint_0000001").symlink_to("checkpoint_0000001")  # a loop: left alone

    [result] = Tuner.restore(str(tmp_path / "gone"), counting).fit()

    assert result.status is TrialStatus.TERMINATED
    assert result.checkpoint is not None
    assert Path(result.checkpoint.path).name == "checkpoint_000004"
    left = sorted(p.name for p in trial_dir.iterdir() if p.name.startswith("checkpoint_"))
    assert left == [
        "checkpoint_0000001",
        "checkpoint_000004",
        "checkpoint_000007",
        "checkpoint_000007_2",
        "checkpoint_notes",
    ]
    assert (trial_dir / "checkpoint_0000001").is_symlink()
