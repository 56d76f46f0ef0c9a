"""Trials stuck in the user's code, on the in-process executor: the time
budget still ends the experiment within a grace period of its end, and a
save queued behind the stuck step does not hold the end forever (issue 10,
item 9). A thread cannot be killed: it is abandoned (and released here,
at teardown, by setting the event it waits for). The Ray executor, which
kills the actor, is tested in tests/integration/test_stuck_trials.py."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import tunecore
from tunecore import CheckpointConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.model import JsonDict, TrialStatus

BUDGET_S = 2.0
SLACK_S = 15.0
_blocked = threading.Event()  # what the stuck trainables wait for


@pytest.fixture(autouse=True)
def _unblock_at_teardown() -> Iterator[None]:
    _blocked.clear()
    yield
    _blocked.set()  # the abandoned threads return and end


def reports_then_blocks(config: JsonDict) -> None:
    tunecore.report({"loss": 1.0})
    _blocked.wait()


class StepsThenBlocks(tunecore.Trainable):
    """A class trainable whose second step never returns."""

    def step(self) -> JsonDict:
        if self.iteration >= 1:
            _blocked.wait()
        return {"loss": 1.0}

    def save_checkpoint(self, checkpoint_dir: str) -> JsonDict:
        return {"iteration": self.iteration}

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        pass


def fit_in_thread(tuner: Tuner, within_s: float) -> ResultGrid:
    """`tuner.fit()`, failing the test if it takes longer than `within_s`
    (in a thread, so a fit that would hang fails instead of hanging the run)."""
    grids: list[ResultGrid] = []
    thread = threading.Thread(target=lambda: grids.append(tuner.fit()), daemon=True)
    thread.start()
    thread.join(within_s)
    assert not thread.is_alive(), f"fit() did not return within {within_s} s"
    return grids[0]


def test_the_time_budget_ends_a_trial_stuck_in_its_function(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        grid = Tuner(
            reports_then_blocks,
            tune_config=TuneConfig(time_budget_s=BUDGET_S),
            run_config=RunConfig(
                name="stuck", storage_path=str(tmp_path), verbose=0, executor="in_process"
            ),
        ).fit()
    assert time.monotonic() - started < BUDGET_S + SLACK_S
    (result,) = grid
    assert result.status is TrialStatus.TERMINATED
    assert result.metrics["loss"] == 1.0
    assert grid.experiment_error is None
    assert "did not return from its step or report() within 5 s" in caplog.text
    assert "abandoned" in caplog.text


def test_a_checkpoint_at_end_queued_behind_a_stuck_step_does_not_hold_the_end(
    tmp_path: Path,
) -> None:
    """The budget stops the trial mid-step and asks for its checkpoint at
    the end, which can never be taken: the trial ends TERMINATED with its
    results but without that checkpoint, and error.txt says why."""
    tuner = Tuner(
        StepsThenBlocks,
        tune_config=TuneConfig(time_budget_s=BUDGET_S),
        run_config=RunConfig(
            name="stuck",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            checkpoint_config=CheckpointConfig(checkpoint_at_end=True),
        ),
    )
    grid = fit_in_thread(tuner, BUDGET_S + SLACK_S)
    (result,) = grid
    assert result.status is TrialStatus.TERMINATED
    assert result.metrics["training_iteration"] == 1
    assert result.checkpoint is None
    assert result.path is not None
    error = (Path(result.path) / "error.txt").read_text()
    assert "The checkpoint taken as the trial ended failed" in error
    assert "did not return from its step or report()" in error
