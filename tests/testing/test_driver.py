"""`PolicyDriver`: a scheduler driven by hand meets the protocol a real run
gives it, with statuses, queues and the stop/complete/remove calls kept by
tunecore's own core."""

from __future__ import annotations

import pytest

from tests.core.experiment.policies import ScriptedScheduler
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.base import PAUSE, STOP
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.model import Decision, Mode, TrialStatus
from tunecore.testing import PolicyDriver, RejectedCallError


def test_three_lines_per_event_with_a_built_in_policy() -> None:
    driver = PolicyDriver(ASHAScheduler(metric="loss", mode=Mode.MIN, max_t=9), cpus=2)
    a, b, c = driver.add({"lr": 0.1}), driver.add({"lr": 0.2}), driver.add({"lr": 0.3})
    assert driver.trial_ids(TrialStatus.RUNNING) == [a, b]
    assert driver.trial_ids(TrialStatus.PENDING) == [c]
    assert driver.result(a, loss=0.5) is Decision.CONTINUE
    # b is worse than a at ASHA's first rung (reduction factor 4 keeps the
    # top quarter): stopped, and c starts in its place.
    assert driver.result(b, loss=0.9) is Decision.STOP
    assert driver.started() == [c]
    assert driver.trial_ids(TrialStatus.RUNNING) == [a, c]


def test_a_stop_verdict_is_followed_by_on_trial_complete_and_a_pause_can_resume() -> None:
    scripted = ScriptedScheduler(verdicts={"t_00000": [PAUSE], "t_00001": [STOP]})
    driver = PolicyDriver(scripted, cpus=1)
    first, second = driver.add(), driver.add()
    assert driver.result(first, loss=1.0) is Decision.PAUSE
    assert driver.started() == [second]  # the pause freed the CPU
    assert driver.result(second, loss=1.0) is Decision.STOP
    assert driver.started() == [first]  # resumed from its pause
    scheduler = driver.scheduler
    assert isinstance(scheduler, ScriptedScheduler)
    assert scheduler.calls[-2:] == ("result t_00001", "complete t_00001")
    driver.complete(first)
    assert driver.done


def test_hyperband_halves_its_bracket_through_the_driver() -> None:
    driver = PolicyDriver(
        HyperBandScheduler(metric="loss", mode=Mode.MIN, max_t=9, reduction_factor=3), cpus=9
    )
    trials = [driver.add() for _ in range(9)]
    # Its brackets here halve at 3 iterations (and end at 9): three rounds
    # of results, the lower trial ids the better.
    for _ in range(3):
        for n, trial in enumerate(trials):
            if driver.status(trial) is TrialStatus.RUNNING:
                driver.result(trial, loss=float(n))
    ended = [t for t in trials if driver.status(t) is TrialStatus.TERMINATED]
    assert ended, "HyperBand halved nothing"
    assert trials[0] not in ended  # the best trial of each bracket goes on
    assert driver.restore(driver.snapshot()) == driver.state


def test_a_result_for_a_trial_that_is_not_running_is_refused_naming_its_status() -> None:
    driver = PolicyDriver(ASHAScheduler(metric="loss", mode=Mode.MIN), cpus=1)
    running, waiting = driver.add(), driver.add()
    with pytest.raises(RejectedCallError, match="PENDING"):
        driver.result(waiting, loss=1.0)
    driver.fail(running)
    assert driver.status(running) is TrialStatus.ERROR
    with pytest.raises(RejectedCallError, match="ERROR"):
        driver.result(running, loss=1.0)
    assert driver.status(waiting) is TrialStatus.RUNNING  # the failure freed the CPU
    driver.result(waiting, loss=2.0)  # the refused call counted no iteration
    assert driver.trial(waiting).last_result["training_iteration"] == 1


def test_the_same_calls_replay_to_the_same_state() -> None:
    def asha() -> ASHAScheduler:
        return ASHAScheduler(metric="loss", mode=Mode.MIN, max_t=9, reduction_factor=3)

    driver = PolicyDriver(asha(), cpus=2)
    trials = [driver.add() for _ in range(4)]
    for round_ in range(3):
        for trial in trials:
            if driver.status(trial) is TrialStatus.RUNNING:
                driver.result(trial, loss=float(round_ - len(trial)))
    assert driver.replay_on(asha()) == driver.state
