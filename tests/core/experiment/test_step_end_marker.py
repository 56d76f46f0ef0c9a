"""The end marker of a function trainable (`{"done": True, "__duplicate__":
True}`, Ray's key) in the pure core: the trial ends on its last result, and
the marker counts as no result of its own (issue 9, bug 6)."""

from __future__ import annotations

import pytest

from tests.core.experiment.policies import ListSearcher, ScriptedScheduler
from tests.core.experiment.test_step import T0, Run, config, searcher
from tunecore.core import apply, new_trial
from tunecore.model import (
    Applied,
    CheckpointPolicy,
    CheckpointStorage,
    ExperimentDone,
    JsonDict,
    ResultReported,
    SaveCheckpoint,
    StartRequested,
    StopTrial,
    TrialSpec,
    TrialStatus,
)

END: JsonDict = {"done": True, "__duplicate__": True}
LOSSES = [4.0, 1.0, 3.0, 2.0, 5.0, 6.0]


def end(run: Run, marker: JsonDict = END) -> tuple[object, ...]:
    return run.feed(ResultReported(trial_id=T0, at=run.tick(), result=marker))


def test_the_end_marker_is_not_analysed_and_the_last_result_is_marked_done() -> None:
    run = Run(config(metric="loss", mode="min"), ScriptedScheduler(), searcher(1))
    run.cluster(cpu=1)
    for iteration, loss in enumerate(LOSSES, start=1):
        run.result(T0, loss=loss, training_iteration=iteration)
    last = run.state.trials[T0].last_result
    assert end(run) == (StopTrial(trial_id=T0), ExperimentDone())

    trial = run.state.trials[T0]
    assert trial.status is TrialStatus.TERMINATED
    assert trial.last_result == {**last, "done": True}
    assert trial.metric_analysis["loss"].avg == pytest.approx(3.5)
    assert trial.metric_analysis["loss"].last == 6.0
    scheduler = run.state.scheduler
    assert isinstance(scheduler, ScriptedScheduler)
    assert scheduler.calls == (f"add {T0}", *[f"result {T0}"] * 6, f"complete {T0}")
    found = run.state.searcher
    assert isinstance(found, ListSearcher)
    assert found.results == (T0,) * 6
    assert found.completed == ((T0, True, False),)


def test_the_end_marker_passes_strict_metric_checking_and_stopping_criteria() -> None:
    run = Run(
        config(metric="loss", mode="min", stopping_criterion={"loss": 100.0}),
        searcher=searcher(1),
    )
    run.cluster(cpu=1)
    run.result(T0, loss=1.0, training_iteration=1)
    end(run)
    trial = run.state.trials[T0]
    assert trial.status is TrialStatus.TERMINATED
    assert trial.error_message is None


def test_a_trial_that_never_reported_ends_without_a_result() -> None:
    run = Run(config(metric="loss", mode="min"), searcher=searcher(1))
    run.cluster(cpu=1)
    assert end(run) == (StopTrial(trial_id=T0), ExperimentDone())
    trial = run.state.trials[T0]
    assert (trial.status, trial.last_result, trial.metric_analysis) == (
        TrialStatus.TERMINATED,
        {},
        {},
    )


@pytest.mark.parametrize(
    ("policy", "marker", "saves"),
    [
        (CheckpointPolicy(frequency=1), END, False),  # the last iteration was saved already
        (CheckpointPolicy(at_end=True), END, True),
        (CheckpointPolicy(), {**END, "should_checkpoint": True}, True),
    ],
)
def test_a_save_at_the_end_is_due_for_at_end_or_a_flagged_checkpoint(
    policy: CheckpointPolicy, marker: JsonDict, saves: bool
) -> None:
    run = Run(config(checkpoint_policy=policy), searcher=searcher(1))
    run.cluster(cpu=1)
    run.result(T0, training_iteration=1, should_checkpoint=True)
    save = SaveCheckpoint(trial_id=T0, storage=CheckpointStorage.PERSISTENT)
    commands = end(run, marker)
    assert (save in commands) is saves
    assert StopTrial(trial_id=T0) in commands


def test_apply_on_its_own_ends_the_trial_on_the_marker() -> None:
    trial = new_trial(TrialSpec(trial_id=T0, trainable_name="train"))
    started = apply(trial, StartRequested(trial_id=T0, at=1.0))
    assert isinstance(started, Applied)
    reported = apply(started.state, ResultReported(trial_id=T0, at=2.0, result={"loss": 1.0}))
    assert isinstance(reported, Applied)
    ended = apply(reported.state, ResultReported(trial_id=T0, at=3.0, result=END))
    assert isinstance(ended, Applied)
    assert ended.state.status is TrialStatus.TERMINATED
    assert ended.state.metric_analysis == reported.state.metric_analysis
    assert ended.state.last_result["done"] is True
