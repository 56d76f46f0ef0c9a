"""`ImperativeScheduler`, the core's place for a Ray-style scheduler object:
it returns the logged verdict it is handed, asks for one it lacks, keeps
the notes owed in order until they are answered, and starts trials as Ray
does (the object's fresh pick first, then pending trials in order)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunecore.core import new_trial
from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.core.experiment.requests import after_step
from tunecore.core.schedulers.base import CONTINUE, PAUSE, STOP
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.imperative import (
    ImperativeScheduler,
    Note,
    choice_wanted,
    decision_wanted,
    take_decision,
)
from tunecore.model import AskScheduler, TrialSpec, TrialState, TrialStatus
from tunecore.model.codec import from_msgpack, to_msgpack


def trial(trial_id: str, status: TrialStatus = TrialStatus.PENDING) -> TrialState:
    spec = TrialSpec(trial_id=trial_id, trainable_name="train")
    return msgspec.structs.replace(new_trial(spec), status=status)


def fits(_trial: TrialState) -> bool:
    return True


def test_a_result_without_a_logged_verdict_is_wanted_and_continues() -> None:
    scheduler, verdict = ImperativeScheduler(name="Mine").on_trial_result(trial("a"), {}, {})
    assert verdict is CONTINUE
    assert decision_wanted(scheduler) == "a"


@pytest.mark.parametrize(
    ("logged", "verdict"), [("CONTINUE", CONTINUE), ("PAUSE", PAUSE), ("STOP", STOP)]
)
def test_the_logged_verdict_is_returned_and_dropped(logged: str, verdict: object) -> None:
    held = take_decision(ImperativeScheduler(name="Mine"), "a", logged)
    assert isinstance(held, ImperativeScheduler)
    scheduler, answer = held.on_trial_result(trial("a"), {}, {})
    assert answer is verdict
    assert scheduler == ImperativeScheduler(name="Mine")


def test_a_verdict_for_another_trial_is_not_taken() -> None:
    held = take_decision(ImperativeScheduler(name="Mine"), "b", "STOP")
    assert isinstance(held, ImperativeScheduler)
    _, verdict = held.on_trial_result(trial("a"), {}, {})
    assert verdict is CONTINUE


def test_other_schedulers_are_left_alone() -> None:
    fifo = FIFOScheduler()
    assert take_decision(fifo, "a", "STOP") is fifo
    assert decision_wanted(fifo) is None
    assert not choice_wanted(fifo, waiting=True)


HOOKS = st.lists(
    st.tuples(st.sampled_from(["add", "complete", "error", "remove"]), st.sampled_from("abc")),
    max_size=12,
)


@given(HOOKS, st.data())
def test_notes_are_kept_in_order_and_an_answer_drops_exactly_what_it_told(
    hooks: list[tuple[str, str]], data: st.DataObject
) -> None:
    scheduler = ImperativeScheduler(name="Mine")
    for hook, trial_id in hooks:
        t = trial(trial_id)
        if hook == "complete":
            scheduler = scheduler.on_trial_complete(t, {})
        else:
            scheduler = getattr(scheduler, f"on_trial_{hook}")(t)
    assert scheduler.untold == tuple(Note(hook, trial_id) for hook, trial_id in hooks)  # type: ignore[arg-type]
    told = data.draw(st.integers(0, len(hooks)))
    answered = scheduler.answered(told, chose=False, chosen=None)
    assert answered is not None
    assert answered.untold == scheduler.untold[told:]
    assert scheduler.answered(len(hooks) + 1, chose=False, chosen=None) is None
    assert from_msgpack(to_msgpack(scheduler), ImperativeScheduler) == scheduler


def test_without_a_pick_of_its_own_it_starts_pending_then_paused_trials_in_order() -> None:
    scheduler = ImperativeScheduler(name="Mine")
    paused = [trial("p", TrialStatus.PAUSED)]
    assert scheduler.choose_trial_to_run([trial("a"), trial("b")], paused, fits) == "a"
    assert scheduler.choose_trial_to_run([], paused, fits) == "p"
    assert not choice_wanted(scheduler.on_trial_add(trial("a")), waiting=True)


def test_a_fresh_pick_goes_first_and_only_a_pick_resumes_a_paused_trial() -> None:
    scheduler = ImperativeScheduler(name="Mine", chooses=True).on_trial_add(trial("a"))
    assert choice_wanted(scheduler, waiting=True)
    assert not choice_wanted(scheduler, waiting=False)
    pending, paused = [trial("a"), trial("b")], [trial("p", TrialStatus.PAUSED)]
    assert scheduler.choose_trial_to_run([], paused, fits) is None  # stale: not resumed
    assert scheduler.choose_trial_to_run(pending, paused, fits) == "a"  # pending start, as in Ray
    picked = scheduler.answered(1, chose=True, chosen="p")
    assert picked is not None
    assert not choice_wanted(picked, waiting=True)
    assert picked.choose_trial_to_run(pending, paused, fits) == "p"
    assert picked.choose_trial_to_run(pending, paused, lambda t: t.trial_id != "p") == "a"
    assert picked.on_trial_add(trial("c")).choose_trial_to_run([], paused, fits) is None


def test_a_scheduler_that_never_picks_cannot_be_answered_with_a_pick() -> None:
    assert ImperativeScheduler(name="Mine").answered(0, chose=True, chosen="a") is None


def test_the_step_asks_the_shell_for_the_notes_and_the_pick() -> None:
    before = new_experiment(
        ExperimentConfig(trainable_name="train"), ImperativeScheduler(name="Mine", chooses=True)
    )
    scheduler = before.scheduler.on_trial_add(trial("a"))
    after = msgspec.structs.replace(before, scheduler=scheduler, pending=("a",))
    assert after_step(before, after) == [AskScheduler(told=1, choose=True)]
    stopping = msgspec.structs.replace(after, stopping="stop requested")
    assert after_step(before, stopping) == [AskScheduler(told=1, choose=False)]
