"""The end marker of a function trainable (`{"done": True, "__duplicate__":
True}`, Ray's key) in the pure core: the trial ends on its last result, and
the marker counts as no result of its own (issue 9, bug 6)."""

from __future__ import annotations

from typing import Self

import msgspec
import pytest

from tests.core.experiment.policies import ListSearcher, ScriptedScheduler
from tests.core.experiment.test_step import T0, T1, T2, T3, Run, config, searcher
from tunecore.core import apply, new_trial
from tunecore.core.stoppers import (
    AnyOf,
    ExperimentPlateauStopper,
    MaximumIterationStopper,
    TrialPlateauStopper,
)
from tunecore.model import (
    Applied,
    CheckpointPolicy,
    CheckpointStorage,
    ExperimentDone,
    JsonDict,
    JsonValue,
    Mode,
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


# -- the end as Ray 2.60's controller takes it: the last result again --------


class DoneHeard(ListSearcher, frozen=True, tag=True):
    """A `ListSearcher` that also keeps the `done` of each completion's result."""

    done_heard: tuple[JsonValue, ...] = ()

    def on_trial_complete(self, trial_id: str, result: JsonDict | None, *, error: bool) -> Self:
        told = super().on_trial_complete(trial_id, result, error=error)
        done = None if result is None else result.get("done")
        return msgspec.structs.replace(told, done_heard=(*told.done_heard, done))


def falling(run: Run, trial_id: str, offset: float, results: int = 8) -> None:
    """`results` falling losses, then the function returns (the end marker)."""
    for iteration in range(1, results + 1):
        run.result(trial_id, loss=1.0 / iteration + offset, training_iteration=iteration)
    run.feed(ResultReported(trial_id=trial_id, at=run.tick(), result=END))


def plateau_run(repeats: bool | None) -> Run:
    """Row 165 of docs/ray-examples.md: four trials, one at a time, under
    `ExperimentPlateauStopper(top=2, patience=1)`."""
    stopper = ExperimentPlateauStopper("loss", std=0.0001, top=2, mode=Mode.MIN, patience=1)
    run = Run(config(end_repeats_result=repeats), searcher=searcher(4), stopper=stopper)
    run.cluster(cpu=1)
    return run


def test_a_new_experiments_stoppers_hear_the_last_result_again_when_a_function_returns() -> None:
    """Ray 2.60: the plateau stopper sees trial 0's best loss twice (std 0)
    and stops the experiment after it; the waiting trials end unrun."""
    run = plateau_run(None)
    assert run.state.config.end_repeats_result is True
    falling(run, T0, 0.01)
    stopper = run.state.stopper
    assert isinstance(stopper, ExperimentPlateauStopper)
    assert stopper.best == (1 / 8 + 0.01, 1 / 8 + 0.01)
    assert run.state.done
    assert run.statuses() == dict.fromkeys((T0, T1, T2, T3), TrialStatus.TERMINATED)
    assert not any(run.state.trials[t].has_result for t in (T1, T2, T3))


def test_an_experiment_from_before_the_field_keeps_its_stoppers_deaf_to_the_end() -> None:
    """A log from before `end_repeats_result` (or False): all four trials
    run, as they did when it was written."""
    run = plateau_run(False)
    for number, trial_id in enumerate((T0, T1, T2, T3), start=1):
        falling(run, trial_id, 0.01 * number)
    stopper = run.state.stopper
    assert isinstance(stopper, ExperimentPlateauStopper)
    assert stopper.best == (1 / 8 + 0.01, 1 / 8 + 0.02)
    assert run.state.done
    assert {t.last_result["training_iteration"] for t in run.state.trials.values()} == {8}


@pytest.mark.parametrize(("repeats", "counted"), [(True, 4), (False, 3)])
def test_a_per_trial_stopper_counts_the_end_once_more(repeats: bool, counted: int) -> None:
    stoppers = (MaximumIterationStopper(max_iter=10), TrialPlateauStopper("loss"))
    run = Run(config(end_repeats_result=repeats), searcher=searcher(1), stopper=AnyOf(stoppers))
    run.cluster(cpu=1)
    falling(run, T0, 0.0, results=3)
    combined = run.state.stopper
    assert isinstance(combined, AnyOf)
    iterations, plateau = combined.stoppers
    assert isinstance(iterations, MaximumIterationStopper)
    assert isinstance(plateau, TrialPlateauStopper)
    assert (iterations.seen.get(T0), plateau.seen.get(T0)) == (counted, counted)
    assert plateau.recent.get(T0) == (1.0, 0.5, 1 / 3, 1 / 3)[:counted]


def test_a_trial_that_never_reported_is_heard_as_its_id_marked_done() -> None:
    """Ray hands its stopper the trial's default result, which has no
    metric: a counting stopper counts it, the plateau stopper passes it over."""
    stoppers = (MaximumIterationStopper(max_iter=10), ExperimentPlateauStopper("loss"))
    run = Run(config(), searcher=searcher(1), stopper=AnyOf(stoppers))
    run.cluster(cpu=1)
    end(run)
    combined = run.state.stopper
    assert isinstance(combined, AnyOf)
    iterations, plateau = combined.stoppers
    assert isinstance(iterations, MaximumIterationStopper)
    assert iterations.seen.get(T0) == 1
    assert plateau == stoppers[1]
    assert run.state.trials[T0].last_result == {}


@pytest.mark.parametrize(("repeats", "done"), [(True, True), (False, False)])
def test_the_policies_hear_the_trial_complete_with_its_last_result_marked_done(
    repeats: bool, done: bool
) -> None:
    """Ray's controller marks the last result `done` before its searcher
    and scheduler hear the trial complete; nothing else hears the repeat."""
    found = DoneHeard(configs=({"x": 0},))
    run = Run(config(end_repeats_result=repeats), ScriptedScheduler(), found)
    run.cluster(cpu=1)
    falling(run, T0, 0.0, results=2)
    heard = run.state.searcher
    assert isinstance(heard, DoneHeard)
    assert heard.done_heard == (done,)
    assert heard.results == (T0, T0)
    scheduler = run.state.scheduler
    assert isinstance(scheduler, ScriptedScheduler)
    assert scheduler.calls == (f"add {T0}", f"result {T0}", f"result {T0}", f"complete {T0}")
