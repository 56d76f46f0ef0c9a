"""Every change of a trial in the experiment's step is the lifecycle
table's: the hottest path (a result the policies let go on), a failing
result and an interrupt included. A row whose handler leads off its row
raises `OffTableError` whichever path took it there."""

from __future__ import annotations

import pytest

from tests.core.experiment.test_step import T0, Run, config, searcher
from tunecore.core import lifecycle
from tunecore.core.lifecycle import JudgedResult, OffTableError, Rule
from tunecore.model import (
    ExperimentInterrupted,
    ResultReported,
    TrialStatus,
)

RUNNING = TrialStatus.RUNNING


def narrowed(
    monkeypatch: pytest.MonkeyPatch,
    key: tuple[TrialStatus, type[lifecycle.LifecycleEvent]],
    targets: tuple[TrialStatus, ...],
) -> None:
    """Make the row at `key` list only `targets`, keeping its handler."""
    rule = lifecycle.TRANSITIONS[key]
    table = dict(lifecycle.TRANSITIONS)
    table[key] = Rule(targets, rule.summary, rule.handle)
    monkeypatch.setattr(lifecycle, "TRANSITIONS", table)


def test_a_result_that_goes_on_is_checked_by_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    run = Run(config(metric="loss", mode="min"), searcher=searcher(1))
    run.cluster(cpu=1)
    narrowed(monkeypatch, (RUNNING, JudgedResult), (TrialStatus.TERMINATED,))
    with pytest.raises(OffTableError, match="JudgedResult took a RUNNING trial to RUNNING"):
        run.result(T0, loss=1.0)


def test_a_result_without_the_metric_fails_through_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = Run(config(metric="loss", mode="min"), searcher=searcher(1))
    run.cluster(cpu=1)
    narrowed(monkeypatch, (RUNNING, JudgedResult), (RUNNING,))
    with pytest.raises(OffTableError, match="to ERROR"):
        run.result(T0, accuracy=1.0)


def test_the_end_marker_ends_the_trial_through_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = Run(config(), searcher=searcher(1))
    run.cluster(cpu=1)
    narrowed(monkeypatch, (RUNNING, ResultReported), (RUNNING,))
    with pytest.raises(OffTableError, match="to TERMINATED"):
        run.feed(ResultReported(trial_id=T0, at=run.tick(), result={"__duplicate__": True}))


def test_an_interrupt_goes_through_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    run = Run(config(), searcher=searcher(1))
    run.cluster(cpu=1)
    narrowed(monkeypatch, (RUNNING, ExperimentInterrupted), (RUNNING,))
    with pytest.raises(OffTableError, match="to PENDING"):
        run.feed(ExperimentInterrupted(at=run.tick()))


def test_a_result_for_a_trial_that_is_not_running_is_rejected_by_the_table() -> None:
    run = Run(config(), searcher=searcher(2))
    run.cluster(cpu=1)
    rejection = run.reject(ResultReported(trial_id="trial_00001", at=run.tick(), result={}))
    assert rejection.event == "ResultReported"
    assert "a PENDING trial accepts" in rejection.reason
