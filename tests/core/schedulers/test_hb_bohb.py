"""HyperBand for BOHB: brackets filled largest first, trials held at the
milestone of a bracket that is not filled, and Ray's release when nothing
runs. The numbers come from Ray's formulas, worked out by hand in the
comments (see test_hyperband.py for the formulas themselves)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.schedulers.test_hyperband import iterations, make_trial, run_experiment
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.hyperband import HyperBandScheduler, Member, band_plan
from tunecore.model import Decision, InvalidFieldError, JsonDict, TrialStatus
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.schedulers import HyperBandForBOHB

CONTINUE, PAUSE, STOP = Decision.CONTINUE, Decision.PAUSE, Decision.STOP
TRIALS = {name: make_trial(name) for name in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}

# What the experiment snapshot's union holds (tunecore.core.experiment.snapshot).
Schedulers: TypeAlias = HyperBandScheduler | HyperBandForBOHB


def bohb(**overrides: object) -> HyperBandForBOHB:
    settings_: dict[str, object] = {"time_attr": "t", "metric": "acc", "mode": "max"}
    settings_.update(overrides)
    return HyperBandForBOHB(**settings_)  # type: ignore[arg-type]


def small() -> HyperBandForBOHB:
    # max_t=4, eta=2: round(log 4 / log 2) + 1 = 3 brackets per band, filled
    # s=2 first: 4 trials, milestones 1 2 4, keeping 4 2 1;
    # then s=1: ceil(3/2 * 2) = 3 trials, milestones 2 4, keeping 3 2;
    # then s=0: 3 trials, milestone 4.
    return bohb(max_t=4, reduction_factor=2)


def added(scheduler: HyperBandForBOHB, names: Iterable[str]) -> HyperBandForBOHB:
    for name in names:
        scheduler = scheduler.on_trial_add(TRIALS[name])
    return scheduler


def report(
    scheduler: HyperBandForBOHB, name: str, t: float, value: float
) -> tuple[HyperBandForBOHB, Decision]:
    result: JsonDict = {"t": t, "acc": value}
    scheduler, verdict = scheduler.on_trial_result(TRIALS[name], result, TRIALS)
    return scheduler, verdict.decision


def choose(scheduler: HyperBandForBOHB, pending: str, paused: str) -> str | None:
    return scheduler.choose_trial_to_run(
        [TRIALS[n] for n in pending], [TRIALS[n] for n in paused], lambda _: True
    )


def member(scheduler: HyperBandForBOHB, name: str) -> Member:
    found = scheduler.members.get(name)
    assert found is not None
    return found


def brackets(scheduler: HyperBandForBOHB) -> list[tuple[int, int, int, int]]:
    """(band, s, size, milestone) of every bracket, in creation order."""
    found = [scheduler.brackets.get(i) for i in range(scheduler.bracket_count)]
    return [(b.band, b.s, b.size, b.milestone) for b in found if b is not None]


def test_it_follows_the_scheduler_protocol_under_rays_name() -> None:
    scheduler: TrialScheduler = bohb()
    assert scheduler.debug_string().startswith("Using HyperBand")
    assert HyperBandForBOHB().time_attr == "training_iteration"


def test_brackets_fill_largest_first_and_bands_repeat() -> None:
    # max_t=9, eta=3: 3 brackets per band. Ray's BOHB fills s=2 (9 trials from
    # milestone 1), then s=1 (ceil(3/2 * 3) = 5 from 3), then s=0 (3 from 9).
    scheduler = added(bohb(max_t=9), "ABCDEFGHIJKLMNOPQR")
    assert brackets(scheduler) == [(0, 2, 9, 1), (0, 1, 5, 3), (0, 0, 3, 9), (1, 2, 9, 1)]
    assert [member(scheduler, n).bracket for n in "AIJNOQR"] == [0, 0, 1, 1, 2, 2, 3]


def test_a_bracket_whose_first_milestone_rounds_to_0_is_skipped() -> None:
    # max_t=8, eta=3: 3 slots; s=2 has r0 = int(8/9) = 0 and is skipped, so the
    # band starts with s=1 (5 trials from 2), then s=0 (3 trials from 8).
    assert [p.s for p in band_plan(8, 3)] == [0, 1]
    scheduler = added(bohb(max_t=8), "ABCDEFGHI")
    assert brackets(scheduler) == [(0, 1, 5, 2), (0, 0, 3, 8), (1, 1, 5, 2)]


def test_errors_name_this_scheduler() -> None:
    with pytest.raises(InvalidFieldError, match=r"HyperBandForBOHB\.max_t"):
        bohb(max_t=0)
    with pytest.raises(InvalidFieldError, match=r"HyperBandForBOHB\.metric"):
        HyperBandForBOHB().on_trial_add(TRIALS["A"])


def test_a_bracket_that_is_not_filled_holds_its_trials_at_the_milestone() -> None:
    scheduler = added(small(), "AB")
    scheduler, a = report(scheduler, "A", 1, 1.0)
    scheduler, b = report(scheduler, "B", 1, 2.0)
    # Plain HyperBand would halve now (every live trial is at r=1); BOHB waits
    # for the two trials the bracket still has room for.
    assert (a, b) == (PAUSE, PAUSE)
    # With C and D pending, they run first (they may still be added later:
    # until then nothing runs and the release would resume B, see below).
    scheduler = added(scheduler, "CD")
    assert choose(scheduler, "CD", "AB") == "C"
    scheduler, c = report(scheduler, "C", 1, 4.0)
    assert c is PAUSE
    # D fills the bracket and is the last to arrive: it halves to the best
    # ceil(4/2) = 2 (C and D); A and B are dropped where they are paused.
    scheduler, d = report(scheduler, "D", 1, 3.0)
    assert d is CONTINUE
    assert scheduler.trials_to_stop() == ("A", "B")
    assert choose(scheduler, "", "ABC") == "A"  # doomed first, to be stopped
    scheduler = scheduler.on_trial_remove(TRIALS["A"]).on_trial_remove(TRIALS["B"])
    assert choose(scheduler, "", "C") == "C"


def test_the_release_resumes_the_best_trial_when_nothing_runs() -> None:
    scheduler = added(small(), "ABC")
    for name, value in zip("ABC", [1.0, 3.0, 2.0], strict=True):
        scheduler, decision = report(scheduler, name, 1, value)
        assert decision is PAUSE
    # Something still runs (D, added but in neither queue): no release yet.
    assert choose(added(scheduler, "D"), "", "ABC") is None
    # Nothing runs and the searcher adds nothing: B, the best, goes on.
    assert choose(scheduler, "", "ABC") == "B"
    # Its next result releases the bracket: it keeps B and C (ceil(4/2) = 2)
    # at the new milestone 2, where B already is; A is dropped.
    scheduler, b = report(scheduler, "B", 2, 3.5)
    assert b is PAUSE
    assert scheduler.trials_to_stop() == ("A",)
    scheduler = scheduler.on_trial_remove(TRIALS["A"])
    assert choose(scheduler, "", "BC") == "C"
    # The bracket is filled now (2 live of size 2): C's arrival halves it to
    # the best one, which runs to max_t.
    scheduler, c = report(scheduler, "C", 2, 9.0)
    assert c is CONTINUE
    assert scheduler.trials_to_stop() == ("B",)
    scheduler, c = report(scheduler.on_trial_remove(TRIALS["B"]), "C", 4, 9.0)
    assert c is STOP


def test_a_trial_that_joins_during_the_release_is_waited_for() -> None:
    scheduler = added(small(), "AB")
    scheduler, _ = report(scheduler, "A", 1, 1.0)
    scheduler, _ = report(scheduler, "B", 1, 2.0)
    assert choose(scheduler, "", "AB") == "B"
    scheduler = added(scheduler, "C")  # the searcher suggested one more meanwhile
    scheduler, b = report(scheduler, "B", 2, 2.0)
    assert b is PAUSE  # C has to reach the milestone first
    assert scheduler.trials_to_stop() == ()
    assert choose(scheduler, "C", "AB") == "C"


def test_a_removal_halves_a_bracket_that_is_not_filled() -> None:
    scheduler = added(small(), "ABC")
    scheduler, _ = report(scheduler, "A", 1, 1.0)
    scheduler, _ = report(scheduler, "B", 1, 2.0)
    scheduler = scheduler.on_trial_error(TRIALS["C"])
    # A and B are all that is left and both are at r=1: Ray's on_trial_remove
    # processes the bracket, which keeps ceil(4/2) = 2 of them.
    assert choose(scheduler, "", "AB") == "A"
    assert member(scheduler, "A").live
    assert member(scheduler, "B").live


def test_trials_are_chosen_bracket_by_bracket_in_creation_order() -> None:
    # Bracket 0 (s=2) holds A-D, bracket 1 (s=1) E-G. HyperBand would choose
    # the least complete bracket; Ray's BOHB takes them in order.
    scheduler = added(small(), "ABCDEFG")
    scheduler, _ = report(scheduler, "A", 1, 1.0)
    assert choose(scheduler, "EFG", "") == "E"
    assert choose(scheduler, "GEB", "") == "B"


def test_it_round_trips_in_a_union_and_continues_identically() -> None:
    script = [("A", 1, 1.0), ("B", 1, 3.0), ("C", 1, 2.0), ("D", 1, 0.0), ("C", 2, 5.0)]
    live = added(small(), "ABCDE")
    decisions = []
    for cut, (name, t, value) in enumerate(script):
        decoded = from_msgpack(to_msgpack(live), Schedulers)
        assert isinstance(decoded, HyperBandForBOHB)
        assert decoded == live, cut
        live, decision = report(live, name, t, value)
        decoded, again = report(decoded, name, t, value)
        assert again is decision
        assert to_msgpack(decoded) == to_msgpack(live)
        decisions.append(decision)
    assert decisions == [PAUSE, PAUSE, PAUSE, STOP, PAUSE]  # D is dropped at once


# -- liveness and budgets, over random runs ---------------------------------------------


@settings(max_examples=120, deadline=None)
@given(
    data=st.data(),
    trials=st.integers(1, 30),
    slots=st.integers(1, 5),
    setting=st.sampled_from([(4, 2), (9, 3), (8, 3), (16, 2)]),
)
def test_every_trial_ends_at_a_budget_of_its_bracket(
    data: st.DataObject, trials: int, slots: int, setting: tuple[int, int]
) -> None:
    """Trials arrive over time (as a searcher suggests them), report steps of
    1, error or are removed at random: every trial ends, a stopped trial is
    never continued, and a trial the scheduler stops stands at a milestone of
    its bracket as Ray computes them (`band_plan`)."""
    max_t, eta = setting
    scheduler = bohb(max_t=max_t, reduction_factor=eta)
    milestones = {plan.s: plan.milestones for plan in band_plan(max_t, eta)}
    names = [f"trial_{n:02d}" for n in range(trials)]
    status: dict[str, str] = {}
    time: dict[str, int] = {}
    ended_at: dict[str, tuple[int, int]] = {}  # trial -> (its bracket's s, time)

    def s_of(name: str) -> int:
        bracket = scheduler.brackets.get(member(scheduler, name).bracket)
        assert bracket is not None
        return bracket.s

    def add_one() -> None:
        nonlocal scheduler
        name = names[len(status)]
        scheduler = scheduler.on_trial_add(make_trial(name))
        status[name], time[name] = "pending", 0

    for _ in range(60 * trials):
        if len(status) < trials and data.draw(st.booleans()):
            add_one()
        for doomed in scheduler.trials_to_stop():
            ended_at[doomed] = (s_of(doomed), time[doomed])
            scheduler = scheduler.on_trial_remove(make_trial(doomed))
            status[doomed] = "done"
        while sum(1 for s in status.values() if s == "running") < slots:
            pending = [make_trial(n) for n in status if status[n] == "pending"]
            paused = [make_trial(n) for n in status if status[n] == "paused"]
            chosen = scheduler.choose_trial_to_run(pending, paused, lambda _: True)
            if chosen is None:
                break
            status[chosen] = "running"
        running = [n for n in status if status[n] == "running"]
        if not running:
            if len(status) < trials:  # the searcher suggests one at last
                add_one()
                continue
            break
        name = data.draw(st.sampled_from(running))
        action = data.draw(st.integers(0, 29))
        if action == 0:
            scheduler = scheduler.on_trial_error(make_trial(name))
            status[name] = "done"
            continue
        time[name] += 1
        value = data.draw(st.sampled_from([0.0, 1.0, 2.0, 3.0]))
        result: JsonDict = {"t": time[name], "acc": value}
        s = s_of(name)
        scheduler, verdict = scheduler.on_trial_result(make_trial(name), result, {})
        if verdict.decision is STOP:
            ended_at[name] = (s, time[name])
            scheduler = scheduler.on_trial_complete(make_trial(name), result)
            status[name] = "done"
        elif verdict.decision is PAUSE:
            status[name] = "paused"
    assert len(status) == trials
    assert all(s == "done" for s in status.values()), (status, scheduler.debug_string())
    assert len(scheduler.members) == 0
    for name, (s, t) in ended_at.items():
        assert t in milestones[s], (name, s, t)


# -- through the real experiment step ---------------------------------------------------


def test_an_experiment_runs_its_brackets_largest_first() -> None:
    # small()'s brackets: s=2 takes trials 0-3, s=1 trials 4-6, s=0 trials 7-9;
    # trial n scores n + it/10, so the later trials of each bracket win.
    scheduler = bohb(time_attr="training_iteration", max_t=4, reduction_factor=2)
    state = run_experiment(scheduler, trials=10, cpus=2, score=lambda n, it: n + it / 10)
    reached = iterations(state)
    # s=2: 2 and 3 pass r=1, 3 passes r=2 and runs to 4. s=1: 5 and 6 pass r=2.
    # s=0: all three run to 4.
    assert [reached[n] for n in range(10)] == [1, 1, 2, 4, 2, 4, 4, 4, 4, 4]
    assert all(t.status is TrialStatus.TERMINATED for t in state.trials.values())


def test_an_experiment_whose_last_bracket_never_fills_is_released() -> None:
    # Trial 4 is alone in bracket s=1 (room for 3): it waits at r=2 until
    # nothing else runs and no trial comes, then goes on to max_t.
    scheduler = bohb(time_attr="training_iteration", max_t=4, reduction_factor=2)
    state = run_experiment(scheduler, trials=5, cpus=2, score=lambda n, it: n + it / 10)
    assert iterations(state) == {0: 1, 1: 1, 2: 2, 3: 4, 4: 4}
