"""`SchedulerRuntime` translates a Ray-style scheduler object's answers
into events, over states the core made (no Ray, no loop): its verdicts,
Ray's NOOP after `tune_controller.stop_trial`/`pause_trial`, its notes in
order, its pick, and what it gets wrong, named."""

from __future__ import annotations

from typing import Any

import pytest

from tunecore.core.experiment import ExperimentConfig, ExperimentState, new_experiment, step
from tunecore.core.schedulers.imperative import ImperativeScheduler, decision_wanted
from tunecore.model import (
    AskScheduler,
    ClusterResourcesChanged,
    ExperimentEvent,
    Mode,
    PauseRequested,
    Resources,
    ResultReported,
    SchedulerAnswered,
    SchedulerFailed,
    StopRequested,
    TrialRequested,
)
from tunecore.shell.imperative import SchedulerRuntime, chooses, imperative_policy
from tunecore.shell.ray_schedulers import FIFOScheduler, TrialScheduler
from tunecore.shell.trial_view import Trial


def stepped(state: ExperimentState, event: ExperimentEvent) -> ExperimentState:
    outcome = step(state, event)
    assert isinstance(outcome, tuple), outcome
    return outcome[0]


def two_running(chooses: bool = False) -> ExperimentState:
    state = new_experiment(
        ExperimentConfig(trainable_name="train"), ImperativeScheduler(name="X", chooses=chooses)
    )
    state = stepped(state, ClusterResourcesChanged(at=1.0, total=Resources(cpu=2.0)))
    for x in (1, 2):
        state = stepped(state, TrialRequested(at=1.0, config={"x": x}))
    assert state.running == 2
    return state


class Recorder(FIFOScheduler):
    def __init__(self, answer: Any = TrialScheduler.CONTINUE, act: str = "") -> None:
        super().__init__()
        self.answer, self.act = answer, act
        self.calls: list[tuple[Any, ...]] = []

    def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
        self.calls.append(("add", trial.trial_id, trial.status))

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> Any:
        self.calls.append(("result", trial.trial_id, dict(trial.last_result), result["loss"]))
        others = [t for t in tune_controller.get_live_trials() if t.trial_id != trial.trial_id]
        if self.act == "stop others":
            for other in others:
                tune_controller.stop_trial(other)
        elif self.act == "pause self":
            tune_controller.pause_trial(trial)
        return self.answer


def judged(
    runtime: SchedulerRuntime, state: ExperimentState, loss: float
) -> tuple[str, list[ExperimentEvent]]:
    trial_id = sorted(state.trials)[0]
    event = ResultReported(at=2.0, trial_id=trial_id, result={"loss": loss})
    preview = step(state, event)
    assert isinstance(preview, tuple)
    assert decision_wanted(preview[0].scheduler) == trial_id  # the core asks for a verdict
    return runtime.decide(state, preview[0], trial_id, Trial, 2.0)


@pytest.mark.parametrize("answer", ["CONTINUE", "PAUSE", "STOP"])
def test_a_verdict_is_passed_through(answer: str) -> None:
    obj = Recorder(answer)
    decision, then = judged(SchedulerRuntime(obj), two_running(), 0.5)
    assert (decision, then) == (answer, [])
    # Ray's arguments: the trial as before its result (no last result yet), the flat result.
    assert obj.calls[0][2] == {}
    assert obj.calls[0][3] == 0.5


def test_noop_after_acting_on_the_controller_becomes_events() -> None:
    state = two_running()
    first, second = sorted(state.trials)
    decision, then = judged(SchedulerRuntime(Recorder("NOOP", "stop others")), state, 0.5)
    assert decision == "CONTINUE"
    assert then == [StopRequested(trial_id=second, at=2.0)]
    decision, then = judged(SchedulerRuntime(Recorder("NOOP", "pause self")), state, 0.5)
    assert (decision, then) == ("PAUSE", [])
    assert first != second


@pytest.mark.parametrize(("answer", "named"), [("MAYBE", "'MAYBE'"), (None, "None"), (1, "1")])
def test_an_answer_that_is_no_verdict_fails_naming_it(answer: object, named: str) -> None:
    runtime = SchedulerRuntime(Recorder(answer))
    decision, then = judged(runtime, two_running(), 0.5)
    assert decision == "CONTINUE"
    assert len(then) == 1
    assert isinstance(then[0], SchedulerFailed)
    assert f"Recorder.on_trial_result returned {named}" in then[0].error
    assert judged(runtime, two_running(), 0.5) == ("CONTINUE", [])  # never called again


def test_notes_are_told_in_order_then_the_pick_is_asked() -> None:
    class Picks(Recorder):
        def choose_trial_to_run(self, tune_controller: Any) -> Any:
            return tune_controller.get_trials()[-1]

    obj = Picks()
    state = two_running(chooses=True)
    scheduler = state.scheduler
    assert isinstance(scheduler, ImperativeScheduler)
    assert len(scheduler.untold) == 2
    answers = SchedulerRuntime(obj).answer(state, AskScheduler(told=2, choose=True), Trial, 3.0)
    ids = sorted(state.trials)
    assert answers == [SchedulerAnswered(at=3.0, told=2, chose=True, chosen=ids[-1])]
    assert [call[:2] for call in obj.calls] == [("add", ids[0]), ("add", ids[1])]


def test_a_pick_that_is_no_trial_fails_naming_it() -> None:
    class PicksAName(Recorder):
        def choose_trial_to_run(self, tune_controller: Any) -> Any:
            return "t_00000"

    state = two_running(chooses=True)
    answers = SchedulerRuntime(PicksAName()).answer(
        state, AskScheduler(told=0, choose=True), Trial, 3.0
    )
    assert len(answers) == 1
    assert isinstance(answers[0], SchedulerFailed)
    assert "choose_trial_to_run returned 't_00000'" in answers[0].error


def test_pause_trial_of_another_trial_is_an_event() -> None:
    class PausesOthers(Recorder):
        def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
            for other in tune_controller.get_trials():
                if other.trial_id != trial.trial_id:
                    tune_controller.pause_trial(other)

    state = two_running()
    first = sorted(state.trials)[0]
    answers = SchedulerRuntime(PausesOthers()).answer(
        state, AskScheduler(told=2, choose=False), Trial, 3.0
    )
    assert answers[0] == SchedulerAnswered(at=3.0, told=2)
    assert PauseRequested(trial_id=first, at=3.0) in answers[1:]


def test_the_object_takes_the_experiments_metric_and_keeps_its_own() -> None:
    assert imperative_policy(Recorder(), "loss", Mode.MIN).metric == "loss"

    class Own(Recorder):
        _metric = "acc"

    assert imperative_policy(Own(), "loss", Mode.MIN).metric == "acc"  # Ray's rule: its own stays


def test_only_a_class_that_overrides_rays_fifo_pick_is_asked_for_one() -> None:
    class Picks(FIFOScheduler):
        def choose_trial_to_run(self, tune_controller: Any) -> Any:
            return None

    assert not chooses(Recorder())
    assert chooses(Picks())
