"""Trials stuck in the user's code on a real Ray: a trainable that never
comes back to `report()` must not hold the experiment, or the next trial,
past a short grace period; its actor is killed (issue 10, item 9)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import tunecore
from tests.integration import trainables
from tunecore import ResultGrid, RunConfig, Stopper, TuneConfig, Tuner
from tunecore.model import JsonValue, TrialStatus
from tunecore.shell.callbacks import Callback
from tunecore.shell.inbox import Inbox, StopTrialRequest
from tunecore.shell.trial_view import Trial

pytestmark = pytest.mark.usefixtures("ray_cluster")

BUDGET_S = 5.0
SLACK_S = 15.0
"""fit() must return within the budget plus this (it took 60 s more before)."""


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie left for its parent to reap
    counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def gone_soon(pid: int, within_s: float = 30.0) -> bool:
    """Whether process `pid` ends within `within_s` (ray.kill returns
    before the process is gone)."""
    deadline = time.monotonic() + within_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(pid)


def worker_pids(results: ResultGrid) -> list[int]:
    pids = [r.metrics["pid"] for r in results]
    assert all(isinstance(pid, int) for pid in pids)
    return [pid for pid in pids if isinstance(pid, int)]


class StopAllOnFirstResult(Stopper):
    """Stops the whole experiment once any trial has reported."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        self.seen = True
        return False

    def stop_all(self) -> bool:
        return self.seen


class LastResults(Callback):
    """The last result each trial reported, as the driver received it."""

    def __init__(self) -> None:
        self.last: dict[str, Mapping[str, JsonValue]] = {}

    def on_trial_result(
        self,
        iteration: int,
        trials: Sequence[Trial],
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        self.last[trial.trial_id] = result


@pytest.mark.parametrize("how", ["time_budget_s", "stopper"])
def test_stopping_the_experiment_kills_a_trial_stuck_in_user_code(tmp_path: Path, how: str) -> None:
    tune_config = TuneConfig(time_budget_s=BUDGET_S if how == "time_budget_s" else None)
    stop = StopAllOnFirstResult() if how == "stopper" else None
    seen = LastResults()
    started = time.monotonic()
    results = Tuner(
        trainables.reports_then_blocks,
        tune_config=tune_config,
        run_config=RunConfig(
            name="stuck", storage_path=str(tmp_path), verbose=0, stop=stop, callbacks=[seen]
        ),
    ).fit()
    assert time.monotonic() - started < BUDGET_S + SLACK_S
    (result,) = results
    # Ray Tune ends the trials the budget (or stop_all) stops TERMINATED,
    # with the results they reported: under the budget, on a loaded machine
    # the trial may not have reached its report before the budget ran out.
    assert result.status is TrialStatus.TERMINATED
    assert result.error is None
    if how == "stopper" or seen.last:
        assert seen.last[result.trial_id]["loss"] == 1.0
        assert result.metrics["loss"] == 1.0
    else:
        assert "loss" not in result.metrics
    assert results.experiment_error is None
    assert all(gone_soon(pid) for pid in worker_pids(results))


class InterruptAtFirstResult(Callback):
    def on_trial_result(self, *args: object) -> None:
        raise KeyboardInterrupt


def test_ctrl_c_kills_a_trial_stuck_in_user_code(tmp_path: Path) -> None:
    started = time.monotonic()
    results = Tuner(
        trainables.reports_then_blocks,
        run_config=RunConfig(
            name="stuck",
            storage_path=str(tmp_path),
            verbose=0,
            callbacks=[InterruptAtFirstResult()],
        ),
    ).fit()
    assert time.monotonic() - started < SLACK_S
    (result,) = results
    assert result.status is TrialStatus.PENDING  # an interrupt finishes no trial
    assert results.experiment_error is None
    assert cpus_freed_soon()


def cpus_freed_soon(within_s: float = 30.0) -> bool:
    """Whether Ray sees both CPUs free within `within_s` (a killed actor's
    resources come back once Ray notices it is gone)."""
    import ray  # noqa: PLC0415

    def free() -> float:
        # Ray leaves available_resources unannotated; it maps names to amounts.
        amounts: dict[str, float] = ray.available_resources()  # type: ignore[no-untyped-call]
        return amounts.get("CPU", 0.0)

    deadline = time.monotonic() + within_s
    while free() < 2.0 and time.monotonic() < deadline:
        time.sleep(0.1)
    return free() == 2.0


class StopTheFirstTrialAtItsResult(Callback):
    """Posts `tunecore stop` for the first trial once it has reported: it
    is stopped while blocked in its function, holding the whole cluster."""

    def __init__(self, experiment_dir: Path) -> None:
        self.inbox = Inbox(experiment_dir)
        self.stopped: list[str] = []

    def on_trial_result(
        self,
        iteration: int,
        trials: Sequence[Trial],
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        if not self.stopped:
            self.stopped.append(trial.trial_id)
            self.inbox.post(StopTrialRequest(trial_id=trial.trial_id))


@pytest.mark.slow  # some 10 s: the `slow` session
def test_a_stuck_trial_stopped_mid_experiment_gives_its_resources_to_the_next(
    tmp_path: Path,
) -> None:
    """Each trial needs the whole cluster: the second can only start once
    the first one's actor is gone. The time budget only ends a failure
    early (before the fix the second trial waited for the first forever)."""
    stop_first = StopTheFirstTrialAtItsResult(tmp_path / "stuck")
    started = time.monotonic()
    results = Tuner(
        tunecore.with_resources(trainables.reports_then_blocks, {"cpu": 2}),
        param_space={"blocks": tunecore.grid_search([True, False])},
        tune_config=TuneConfig(time_budget_s=60),
        run_config=RunConfig(
            name="stuck", storage_path=str(tmp_path), verbose=0, callbacks=[stop_first]
        ),
    ).fit()
    assert time.monotonic() - started < 60
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 2
    assert [r.metrics["loss"] for r in results] == [1.0, 1.0]  # both ran and reported
    assert all(gone_soon(pid) for pid in worker_pids(results))
