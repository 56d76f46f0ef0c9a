"""ASHA, both variants, driven result by result.

Every expected verdict and number is worked out by hand in the comments
(milestones from Ray's formula, Ray's interpolated percentile, the paper's
top-k), never read back from the implementation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunecore.core import new_trial
from tunecore.core.persistent import ShardedMap, SortedChunks
from tunecore.core.schedulers.asha import (
    ASHAPromotionScheduler,
    ASHAScheduler,
    ASHAStoredBeforeSplit,
    interpolated_percentile,
    rung_milestones,
)
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.model import Decision, InvalidFieldError, JsonDict, Mode, TrialSpec, TrialState
from tunecore.model.codec import from_msgpack, to_msgpack

CONTINUE, PAUSE, STOP = Decision.CONTINUE, Decision.PAUSE, Decision.STOP


def make_trial(trial_id: str) -> TrialState:
    return new_trial(TrialSpec(trial_id=trial_id, trainable_name="train"))


TRIALS = {name: make_trial(name) for name in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


Asha = ASHAScheduler | ASHAPromotionScheduler
"""Either variant: the helpers below drive both."""


def asha(**overrides: object) -> ASHAScheduler:
    settings_: dict[str, object] = {"time_attr": "t", "metric": "acc", "mode": "max"}
    settings_.update(overrides)
    return ASHAScheduler(**settings_)  # type: ignore[arg-type]


def promoting(**overrides: object) -> ASHAPromotionScheduler:
    settings_: dict[str, object] = {"time_attr": "t", "metric": "acc", "mode": "max"}
    settings_.update(overrides)
    return ASHAPromotionScheduler(**settings_)  # type: ignore[arg-type]


VARIANTS: dict[str, Callable[..., Asha]] = {"stopping": asha, "promotion": promoting}


def added(scheduler: Asha, names: Iterable[str]) -> Asha:
    for name in names:
        scheduler = scheduler.on_trial_add(TRIALS[name])
    return scheduler


def report(scheduler: Asha, name: str, t: float, value: float) -> tuple[Asha, Decision]:
    """Trial `name` reports time `t` and `value` for the scheduler's metric."""
    assert scheduler.metric is not None
    result: JsonDict = {"t": t, scheduler.metric: value}
    scheduler, verdict = scheduler.on_trial_result(TRIALS[name], result, TRIALS)
    return scheduler, verdict.decision


def feed(
    scheduler: Asha, events: Iterable[tuple[str, float, float]]
) -> tuple[Asha, list[Decision]]:
    decisions = []
    for name, t, value in events:
        scheduler, decision = report(scheduler, name, t, value)
        decisions.append(decision)
    return scheduler, decisions


def choose(scheduler: Asha, pending: str, paused: str, fitting: str | None = None) -> str | None:
    """`pending`/`paused` are trial names in the order added; only the
    names in `fitting` fit (all of them when None)."""
    return scheduler.choose_trial_to_run(
        [TRIALS[n] for n in pending],
        [TRIALS[n] for n in paused],
        lambda trial: fitting is None or trial.trial_id in fitting,
    )


def chunks_of(values: Iterable[float]) -> SortedChunks[float]:
    chunks: SortedChunks[float] = SortedChunks()
    for value in values:
        chunks = chunks.insert(value)
    return chunks


# -- configuration --------------------------------------------------------------


def test_it_follows_the_scheduler_protocol() -> None:
    scheduler: TrialScheduler = asha()
    assert scheduler.debug_string().startswith("Using AsyncHyperBand")


def test_the_defaults_are_rays() -> None:
    scheduler = ASHAScheduler()
    assert scheduler.time_attr == "training_iteration"
    assert (scheduler.metric, scheduler.mode) == (None, None)
    assert (scheduler.max_t, scheduler.grace_period, scheduler.reduction_factor) == (100, 1, 4)
    assert (scheduler.brackets, scheduler.stop_last_trials) == (1, True)
    assert scheduler.variant == "stopping"


def test_milestones_for_max_t_100_grace_1_rf_4() -> None:
    # log(100)/log(4) = 3.32; int(3.32 - 0 + 1) = 4 rungs at 1 * 4**k: 1, 4, 16, 64.
    assert [r.milestone for r in asha().rungs[0]] == [1, 4, 16, 64]


def test_bracket_s_is_shifted_by_one_power_and_one_rung_fewer() -> None:
    # s=1: int(3.32 - 1 + 1) = 3 rungs at 1 * 4**(k+1): 4, 16, 64.
    rungs = asha(brackets=3).rungs
    assert [r.milestone for r in rungs[1]] == [4, 16, 64]
    # s=2: int(3.32 - 2 + 1) = 2 rungs: 16, 64.
    assert [r.milestone for r in rungs[2]] == [16, 64]


def test_milestones_of_other_settings() -> None:
    # Ray's own docstring example: _Bracket(min_t=1, max_t=10, rf=2, s=0):
    # log(10)/log(2) = 3.32 -> 4 rungs: 1, 2, 4, 8.
    assert rung_milestones(1, 10, 2, 0) == (1, 2, 4, 8)
    # grace 10, max_t 100, rf 3: log(10)/log(3) = 2.096 -> 3 rungs: 10, 30, 90.
    assert rung_milestones(10, 100, 3, 0) == (10, 30, 90)
    # An exact power: log(81)/log(3) = 4.000000000000001 -> 5 rungs, up to 81.
    assert rung_milestones(1, 81, 3, 0) == (1, 3, 9, 27, 81)
    # Float logs as Ray's: log(1000)/log(10) = 2.9999999999999996 -> 3 rungs.
    assert rung_milestones(1, 1000, 10, 0) == (1, 10, 100)


@pytest.mark.parametrize(
    ("overrides", "field", "value"),
    [
        ({"max_t": 0}, "ASHAScheduler.max_t", 0),
        ({"max_t": -5}, "ASHAScheduler.max_t", -5),
        ({"grace_period": 0}, "ASHAScheduler.grace_period", 0),
        ({"grace_period": 200}, "ASHAScheduler.grace_period", 200),
        ({"reduction_factor": 1}, "ASHAScheduler.reduction_factor", 1),
        ({"reduction_factor": 0.5}, "ASHAScheduler.reduction_factor", 0.5),
        ({"brackets": 0}, "ASHAScheduler.brackets", 0),
        ({"variant": "halving"}, "ASHAScheduler.variant", "halving"),
        ({"mode": "sideways"}, "ASHAScheduler.mode", "sideways"),
        ({"time_attr": ""}, "ASHAScheduler.time_attr", ""),
        ({"stop_last_trials": 1}, "ASHAScheduler.stop_last_trials", 1),
    ],
)
def test_invalid_settings_name_the_field_and_the_value(
    overrides: dict[str, object], field: str, value: object
) -> None:
    with pytest.raises(InvalidFieldError) as raised:
        asha(**overrides)
    assert raised.value.field == field
    assert raised.value.value == value
    assert field in str(raised.value)


def test_mode_accepts_its_plain_string() -> None:
    assert asha(mode="min").mode is Mode.MIN


def test_with_objective_fills_only_what_is_missing() -> None:
    scheduler = ASHAScheduler().with_objective("loss", Mode.MIN)
    assert (scheduler.metric, scheduler.mode) == ("loss", Mode.MIN)
    kept = asha().with_objective("loss", Mode.MIN)
    assert (kept.metric, kept.mode) == ("acc", Mode.MAX)


def test_a_mode_alone_takes_rays_anonymous_metric() -> None:
    """As Ray's `set_search_properties`: `_metric`, which a function's
    returned number is reported as."""
    for scheduler in (ASHAScheduler(mode=Mode.MAX), ASHAScheduler()):
        adopted = scheduler.with_objective(None, Mode.MAX)
        assert (adopted.metric, adopted.mode) == ("_metric", Mode.MAX)


def test_a_missing_objective_is_a_clear_error() -> None:
    with pytest.raises(InvalidFieldError, match=r"ASHAScheduler\.metric"):
        ASHAScheduler().with_objective(None, None)
    with pytest.raises(InvalidFieldError, match=r"ASHAScheduler\.mode"):
        ASHAScheduler(metric="acc").with_objective(None, None)
    with pytest.raises(InvalidFieldError, match=r"ASHAScheduler\.metric"):
        ASHAScheduler().on_trial_add(TRIALS["A"])


# -- Ray's percentile -------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "percent", "expected"),
    [
        # v = 3 * 0.75 = 2.25 -> 3 + (4 - 3) * 0.25
        ([1, 2, 3, 4], 75.0, 3.25),
        # v = 4 * 0.75 = 3.0 -> exactly the 4th: 4
        ([1, 2, 3, 4, 5], 75.0, 4.0),
        # v = 1 * 0.5 = 0.5 -> gamma >= 0.5: 4 - (4 - 2) * 0.5 (Ray's docstring: 3.0)
        ([4, 2], 50.0, 3.0),
        # one value: numpy takes it
        ([5], 75.0, 5.0),
        # sorted [10, 20, 30]: v = 2 * 0.75 = 1.5, between index 1 and 2,
        # gamma 0.5 -> 30 - (30 - 20) * 0.5
        ([30, 10, 20], 75.0, 25.0),
        ([-4, -3, -2, -1], 75.0, -1.75),
    ],
)
def test_interpolated_percentile_by_hand(
    values: list[float], percent: float, expected: float
) -> None:
    assert interpolated_percentile(chunks_of(map(float, values)), percent) == expected


def test_the_cutoff_of_a_third_is_interpolated_like_numpy() -> None:
    # rf=3: percent = (1 - 1/3) * 100 = 66.67; [0, 3, 6]: v = 2 * 0.6667 = 1.333,
    # gamma 0.333 < 0.5 -> 3 + 3 * 0.333 = 4.0 (up to rounding).
    rung = msgspec.structs.replace(
        asha(reduction_factor=3).rungs[0][0], recorded=3, scores=chunks_of([0.0, 3.0, 6.0])
    )
    assert rung.cutoff(3) == pytest.approx(4.0)
    # [0, 10]: v = 0.6667, gamma >= 0.5 -> 10 - 10 * (1 - 0.6667) = 6.667.
    two = msgspec.structs.replace(rung, recorded=2, scores=chunks_of([0.0, 10.0]))
    assert two.cutoff(3) == pytest.approx(20 / 3)


# -- the stopping variant ---------------------------------------------------------


def test_rays_worked_example() -> None:
    # Ray's _Bracket docstring: _Bracket(1, 10, 2, 0); trial1 (1, 2) CONTINUE,
    # trial2 (1, 4) CONTINUE, cutoff of the first rung == 3.0, trial3 (1, 1) STOP.
    scheduler = added(asha(max_t=10, reduction_factor=2), "ABC")
    scheduler, decisions = feed(scheduler, [("A", 1, 2), ("B", 1, 4)])
    assert decisions == [CONTINUE, CONTINUE]
    assert scheduler.rungs[0][0].cutoff(2) == 3.0
    scheduler, decision = report(scheduler, "C", 1, 1)
    assert decision is STOP


def test_a_trial_below_the_cutoff_of_what_the_rung_recorded_before_stops() -> None:
    scheduler = added(asha(), "ABCDEF")
    # A is first at rung 1: no cutoff. B: cutoff of [1] = 1; 2 >= 1.
    # C: [1, 2] -> v = 0.75 -> 1.75; 3 >= 1.75. D: [1, 2, 3] -> v = 1.5 -> 2.5.
    scheduler, decisions = feed(scheduler, [("A", 1, 1), ("B", 1, 2), ("C", 1, 3), ("D", 1, 4)])
    assert decisions == [CONTINUE] * 4
    assert scheduler.rungs[0][0].cutoff(4) == 3.25
    # [1, 2, 3, 4] -> 3.25: 3.2 is below it.
    stopped, decision = report(scheduler, "E", 1, 3.2)
    assert decision is STOP
    assert stopped.num_stopped == 1
    # The score equal to the cutoff continues (Ray compares with <).
    tied, decision = report(scheduler, "E", 1, 3.25)
    assert decision is CONTINUE
    # Stopped or not, the score was recorded: [1, 2, 3, 3.2, 4] -> v = 3.0 -> 3.2.
    assert stopped.rungs[0][0].recorded == 5
    assert stopped.rungs[0][0].cutoff(4) == 3.2
    assert tied.rungs[0][0].cutoff(4) == 3.25


def test_mode_min_flips_the_sign() -> None:
    scheduler = added(asha(metric="loss", mode="min"), "ABCDE")
    events = [("A", 1, 4.0), ("B", 1, 3.0), ("C", 1, 2.0), ("D", 1, 1.0)]
    scheduler, _ = feed(scheduler, events)
    # Signed [-4, -3, -2, -1]: cutoff -1.75, i.e. a loss above 1.75 stops.
    assert scheduler.rungs[0][0].cutoff(4) == -1.75
    assert report(scheduler, "E", 1, 1.8)[1] is STOP
    assert report(scheduler, "E", 1, 1.75)[1] is CONTINUE
    assert report(scheduler, "E", 1, 1.7)[1] is CONTINUE


def test_each_rung_judges_a_trial_once_against_its_own_cutoff() -> None:
    scheduler = added(asha(), "AB")
    # Rung 1: A first (no cutoff), B 5 vs cutoff [10] = 10 -> STOP ... but B is
    # only stopped there; A goes on to rung 4 where it is again first.
    scheduler, decisions = feed(
        scheduler, [("A", 1, 10), ("A", 2, 0), ("A", 3, 0), ("A", 4, 0), ("B", 1, 5)]
    )
    assert decisions == [CONTINUE, CONTINUE, CONTINUE, CONTINUE, STOP]
    assert [r.recorded for r in scheduler.rungs[0]] == [2, 1, 0, 0]


def test_nan_scores_are_recorded_but_left_out_of_the_percentile() -> None:
    scheduler = added(asha(), "ABCD")
    scheduler, decisions = feed(scheduler, [("A", 1, 1), ("B", 1, math.nan), ("C", 1, 3)])
    # B's NaN never stops it (NaN < x is false); C: nanpercentile([1]) = 1.
    assert decisions == [CONTINUE, CONTINUE, CONTINUE]
    # nanpercentile([1, nan, 3], 75) = percentile([1, 3], 75) = 1 + 2 * 0.75.
    assert scheduler.rungs[0][0].recorded == 3
    assert scheduler.rungs[0][0].cutoff(4) == 2.5
    assert report(scheduler, "D", 1, 2.4)[1] is STOP
    assert report(scheduler, "D", 1, 2.6)[1] is CONTINUE


def test_a_rung_of_only_nan_stops_nobody() -> None:
    scheduler = added(asha(), "AB")
    scheduler, _ = report(scheduler, "A", 1, math.nan)
    assert math.isnan(scheduler.rungs[0][0].cutoff(4) or 0.0)
    assert report(scheduler, "B", 1, -1e9)[1] is CONTINUE


def test_cutoffs_reached_are_the_recorded_rungs_at_or_below_a_time_highest_first() -> None:
    scheduler = added(asha(metric="loss", mode="min"), "ABC")
    # Rung 1 records A 4.0, B 2.0, C 1.0: signed [-4, -2, -1], its 75th
    # percentile -2 + 0.5 * 1 = -1.5, i.e. a loss of 1.5 as the metric's value;
    # rung 4 records only C's NaN (no cutoff); rungs 16 and 64 record nothing.
    events = [("A", 1, 4.0), ("B", 1, 2.0), ("C", 1, 1.0), ("C", 4, math.nan)]
    scheduler, _ = feed(scheduler, events)
    reached = scheduler.cutoffs_reached(20)
    assert [(rung.milestone, cut) for rung, cut in reached] == [(4, None), (1, 1.5)]
    # Below 4 only rung 1 was reached; below 1 none.
    assert [rung.milestone for rung, _ in scheduler.cutoffs_reached(3.9)] == [1]
    assert scheduler.cutoffs_reached(0.5) == []


def test_max_t_stops_without_recording() -> None:
    scheduler = added(asha(), "A")
    scheduler, decisions = feed(scheduler, [("A", 1, 1), ("A", 99, 1)])
    assert decisions == [CONTINUE, CONTINUE]
    # 99 crossed 4, 16 and 64: Ray records at the highest one only.
    assert [r.recorded for r in scheduler.rungs[0]] == [1, 0, 0, 1]
    scheduler, decision = report(scheduler, "A", 100, 1)
    assert decision is STOP
    assert [r.recorded for r in scheduler.rungs[0]] == [1, 0, 0, 1]


def test_without_stop_last_trials_max_t_does_not_stop() -> None:
    scheduler = added(asha(stop_last_trials=False), "A")
    scheduler, decisions = feed(scheduler, [(("A"), t, 1) for t in (1, 4, 16, 64, 100, 150)])
    assert decisions == [CONTINUE] * 6


def test_a_jump_over_milestones_records_the_skipped_ones_next_time() -> None:
    # Ray walks the rungs from the top: the first reached, unrecorded one
    # decides. A jumps to 5 (records at 4), then at 6 records at rung 1.
    scheduler = added(asha(), "AB")
    scheduler, _ = report(scheduler, "B", 1, 10)
    scheduler, decision = report(scheduler, "A", 5, 1)
    assert decision is CONTINUE  # rung 4 was empty: no cutoff
    assert [r.recorded for r in scheduler.rungs[0]] == [1, 1, 0, 0]
    scheduler, decision = report(scheduler, "A", 6, 1)
    assert decision is STOP  # rung 1's cutoff is B's 10
    assert [r.recorded for r in scheduler.rungs[0]] == [2, 1, 0, 0]


def test_a_missing_or_non_numeric_metric_continues_and_records_nothing() -> None:
    scheduler = added(asha(), "A")
    results: list[JsonDict] = [
        {"t": 1},
        {"acc": 1.0},
        {"t": 1, "acc": None},
        {"t": 1, "acc": "high"},
        {"t": 1, "acc": True},
        {"t": 150},  # even past max_t, as in Ray
    ]
    for result in results:
        after, verdict = scheduler.on_trial_result(TRIALS["A"], result, TRIALS)
        assert verdict.decision is CONTINUE
        assert after == scheduler


def test_a_result_that_crosses_no_milestone_changes_nothing() -> None:
    scheduler = added(asha(), "A")
    scheduler, _ = report(scheduler, "A", 1, 1)
    for t in (2, 3):
        after, decision = report(scheduler, "A", t, 1)
        assert decision is CONTINUE
        assert after is scheduler


def test_complete_records_the_last_result_and_forgets_the_trial() -> None:
    scheduler = added(asha(), "AB")
    scheduler, _ = report(scheduler, "B", 1, 5)
    done = scheduler.on_trial_complete(TRIALS["A"], {"t": 2, "acc": 1})
    assert done.rungs[0][0].recorded == 2
    assert "A" not in done.standings
    assert report(done, "A", 3, 1) == (done, Decision.CONTINUE)  # ignored, as the protocol says
    assert done.on_trial_complete(TRIALS["A"], {"t": 2, "acc": 1}) is done


@pytest.mark.parametrize("hook", ["on_trial_error", "on_trial_remove"])
def test_error_and_remove_forget_but_recorded_values_stay(hook: str) -> None:
    scheduler = added(asha(), "AB")
    scheduler, _ = report(scheduler, "A", 1, 5)
    gone = getattr(scheduler, hook)(TRIALS["A"])
    assert "A" not in gone.standings
    assert gone.rungs[0][0].recorded == 1
    assert report(gone, "B", 1, 4)[1] is STOP  # A's 5 still sets the cutoff


def test_the_stopping_variant_chooses_fifo() -> None:
    scheduler = added(asha(), "ABCD")
    assert choose(scheduler, "AB", "CD") == "A"
    assert choose(scheduler, "AB", "CD", fitting="BC") == "B"
    assert choose(scheduler, "", "CD") == "C"
    assert choose(scheduler, "AB", "CD", fitting="") is None


def test_one_bracket_draws_nothing() -> None:
    scheduler = added(asha(), "ABCDE")
    assert scheduler.rng is None
    assert {s.bracket for _, s in scheduler.standings.items()} == {0}


def test_brackets_are_drawn_with_rays_softmax_weights_from_the_seed() -> None:
    # Rung counts [4, 3]: weights e^0 and e^-1, P(bracket 0) = 1 / (1 + 1/e) = 0.731.
    names = [f"trial_{n}" for n in range(2000)]
    scheduler = asha(brackets=2, seed=7)
    again = asha(brackets=2, seed=7)
    for name in names:
        scheduler = scheduler.on_trial_add(make_trial(name))
        again = again.on_trial_add(make_trial(name))
    assert scheduler == again
    in_first = sum(1 for _, s in scheduler.standings.items() if s.bracket == 0)
    assert abs(in_first / len(names) - 1 / (1 + math.exp(-1))) < 0.04
    other = asha(brackets=2, seed=8)
    for name in names[:50]:
        other = other.on_trial_add(make_trial(name))
    assert [other.standings.get(n) for n in names[:50]] != [
        scheduler.standings.get(n) for n in names[:50]
    ]


def test_a_trial_in_bracket_one_is_judged_from_4_on() -> None:
    scheduler = asha(brackets=2, seed=0)
    for number in range(100):
        name = f"x{number}"
        scheduler = scheduler.on_trial_add(make_trial(name))
        standing = scheduler.standings.get(name)
        assert standing is not None
        if standing.bracket == 1:
            break
    assert standing is not None
    assert standing.bracket == 1
    trial = make_trial(name)
    after, verdict = scheduler.on_trial_result(trial, {"t": 1, "acc": 1}, TRIALS)
    assert after is scheduler  # nothing to decide before 4
    after, verdict = scheduler.on_trial_result(trial, {"t": 4, "acc": 1}, TRIALS)
    assert verdict.decision is CONTINUE
    assert after.rungs[1][0].recorded == 1
    assert sum(r.recorded for r in after.rungs[0]) == 0


# -- the promotion variant: the paper's worked sequence -----------------------------


def test_promotion_worked_sequence_with_rf_3() -> None:
    # max_t=9, grace 1, rf 3: log(9)/log(3) = 2 -> int(3.0) = 3 rungs: 1, 3, 9.
    # k = floor(|rung| / 3). Trials report every iteration.
    scheduler = added(promoting(max_t=9, reduction_factor=3), "ABCDEFG")
    assert [r.milestone for r in scheduler.rungs[0]] == [1, 3, 9]

    # A, B reach rung 1 and pause; k = floor(2/3) = 0: nothing to promote.
    scheduler, decisions = feed(scheduler, [("A", 1, 5), ("B", 1, 3)])
    assert decisions == [PAUSE, PAUSE]
    assert choose(scheduler, "CDEFG", "AB") == "C"
    # C: rung 1 = A5 C4 B3, k = 1: A is promotable, and preferred to new D.
    scheduler, decision = report(scheduler, "C", 1, 4)
    assert decision is PAUSE
    assert choose(scheduler, "DEFG", "ABC") == "A"
    # A resumes: still top 1 of rung 1 -> promoted; 2 < 3 -> CONTINUE.
    scheduler, decision = report(scheduler, "A", 2, 6)
    assert decision is CONTINUE
    # Rung 1's top 1 is A, promoted already: C (2nd) is not promotable -> new D.
    assert choose(scheduler, "DEFG", "BC") == "D"
    # D: rung 1 = D10 A5 C4 B3, k = 1: D is the top.
    scheduler, decision = report(scheduler, "D", 1, 10)
    assert decision is PAUSE
    # A reaches rung 3 first: k = floor(1/3) = 0 there.
    scheduler, decision = report(scheduler, "A", 3, 7)
    assert decision is PAUSE
    assert choose(scheduler, "EFG", "BCAD") == "D"
    scheduler, decisions = feed(scheduler, [("D", 2, 11), ("D", 3, 12)])
    assert decisions == [CONTINUE, PAUSE]
    # Rung 3 = D12 A7 (k=0); rung 1 top 1 = D (promoted): nothing -> E.
    assert choose(scheduler, "EFG", "BCAD") == "E"
    scheduler, decision = report(scheduler, "E", 1, 1)
    assert decision is PAUSE
    assert choose(scheduler, "FG", "BCADE") == "F"
    # F: rung 1 = D10 A5 F4.5 C4 B3 E1, k = 2: top 2 are D and A, both
    # promoted; F, third, is not promotable.
    scheduler, decision = report(scheduler, "F", 1, 4.5)
    assert decision is PAUSE
    assert choose(scheduler, "G", "BCADEF") == "G"
    # G: rung 1 = D10 G8 A5 F4.5 C4 B3 E1, k = floor(7/3) = 2: G is 2nd.
    scheduler, decision = report(scheduler, "G", 1, 8)
    assert decision is PAUSE
    assert choose(scheduler, "", "BCADEFG") == "G"
    scheduler, decisions = feed(scheduler, [("G", 2, 8.5), ("G", 3, 9)])
    assert decisions == [CONTINUE, PAUSE]
    # Rung 3 = D12 G9 A7, k = 1: D is promotable; rungs are checked top down.
    assert choose(scheduler, "", "BCADEFG") == "D"
    scheduler, decisions = feed(scheduler, [("D", 4, 13), ("D", 8, 14), ("D", 9, 15)])
    assert decisions == [CONTINUE, CONTINUE, STOP]  # max_t
    scheduler = scheduler.on_trial_complete(TRIALS["D"], {"t": 9, "acc": 15})
    assert scheduler.num_stopped == 1
    # Now nothing is pending, every live trial waits and none is promotable:
    # no result can ever change that, so the waiting trials are resumed one by
    # one (in the order added) to be stopped.
    assert choose(scheduler, "", "BCAEFG") == "B"
    assert report(scheduler, "B", 2, 100)[1] is STOP  # not top 2 of rung 1: stop
    # Promoted: A and D from rung 1 (each once), G from rung 1, D from rung 3;
    # B, C, E, F never. D, stopped at max_t, recorded nothing at 9.
    assert [r.recorded for r in scheduler.rungs[0]] == [7, 3, 0]
    assert [len(r.waiting) for r in scheduler.rungs[0]] == [4, 2, 0]


def test_a_resumed_trial_that_lost_its_place_is_stopped() -> None:
    scheduler = added(promoting(max_t=9, reduction_factor=3), "ABCD")
    scheduler, _ = feed(scheduler, [("A", 1, 5), ("B", 1, 3), ("C", 1, 4)])
    assert choose(scheduler, "D", "ABC") == "A"
    # Before A reports again, D arrives with 10: rung 1 = D10 A5 C4 B3, k = 1,
    # and A (2nd) is not in the top 1 any more.
    scheduler, decision = report(scheduler, "D", 1, 10)
    assert decision is PAUSE
    scheduler, decision = report(scheduler, "A", 2, 6)
    assert decision is STOP


def test_a_trial_is_promoted_once_per_rung() -> None:
    scheduler = added(promoting(max_t=9, reduction_factor=3), "ABC")
    scheduler, _ = feed(scheduler, [("A", 1, 5), ("B", 1, 3), ("C", 1, 4)])
    assert choose(scheduler, "", "ABC") == "A"
    scheduler, _ = report(scheduler, "A", 2, 6)
    # A is no longer waiting at rung 1: never chosen from it again.
    assert choose(scheduler, "", "BC") is None
    assert len(scheduler.rungs[0][0].waiting) == 2


def test_a_promotable_trial_that_does_not_fit_is_skipped_for_the_next_one() -> None:
    scheduler = added(promoting(max_t=9, reduction_factor=3), "ABCDEFG")
    events = [("A", 1, 6), ("B", 1, 5), ("C", 1, 4), ("D", 1, 3), ("E", 1, 2), ("F", 1, 1)]
    scheduler, _ = feed(scheduler, events)
    # k = 2: A and B. A does not fit: B; neither fits: the new trial G.
    assert choose(scheduler, "G", "ABCDEF", fitting="BCDEFG") == "B"
    assert choose(scheduler, "G", "ABCDEF", fitting="CDEFG") == "G"


def test_ties_in_a_rung_go_to_the_trial_that_reached_it_first() -> None:
    scheduler = added(promoting(max_t=9, reduction_factor=3), "ABC")
    scheduler, _ = feed(scheduler, [("A", 1, 5), ("B", 1, 5), ("C", 1, 5)])
    assert choose(scheduler, "", "ABC") == "A"


def test_mode_min_promotes_the_lowest() -> None:
    fresh = promoting(max_t=9, reduction_factor=3, metric="loss", mode="min")
    scheduler, _ = feed(added(fresh, "ABC"), [("A", 1, 0.5), ("B", 1, 0.1), ("C", 1, 0.9)])
    assert choose(scheduler, "", "ABC") == "B"


def test_waiting_trials_are_not_given_up_while_anything_can_still_change() -> None:
    scheduler = added(promoting(max_t=9, reduction_factor=3), "ABCD")
    scheduler, _ = feed(scheduler, [("A", 1, 5), ("B", 1, 3)])
    # C and D are still live and not waiting (running, or pending elsewhere).
    assert choose(scheduler, "", "AB") is None
    scheduler = scheduler.on_trial_remove(TRIALS["C"])
    assert choose(scheduler, "", "AB") is None
    scheduler = scheduler.on_trial_error(TRIALS["D"])
    # Now A and B wait with k = 0 and nothing else is live: give them up.
    assert choose(scheduler, "", "AB") == "A"


def test_a_paused_trial_the_scheduler_did_not_pause_runs_after_new_ones() -> None:
    scheduler = added(promoting(max_t=9, reduction_factor=3), "AB")
    # A was paused by the user before reaching a milestone.
    assert choose(scheduler, "B", "A") == "B"
    assert choose(scheduler, "", "A") == "A"


# -- hypothesis: promotions are always top-k --------------------------------------

scores = st.one_of(st.integers(0, 4).map(float), st.just(math.nan))


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    trials=st.integers(1, 14),
    slots=st.integers(1, 4),
    reduction_factor=st.sampled_from([2, 3]),
    max_t=st.sampled_from([4, 9, 10]),
)
def test_every_promotion_is_of_a_trial_in_the_top_k_of_its_rung(
    data: st.DataObject, trials: int, slots: int, reduction_factor: int, max_t: int
) -> None:
    """A small experiment with random scores and interleavings. An oracle
    keeps its own rungs (score and arrival of every PAUSE at a milestone)
    and checks every promotion against `floor(|rung| / rf)` at that moment;
    the run must end with every trial finished."""
    scheduler = promoting(max_t=max_t, reduction_factor=reduction_factor)
    milestones = [r.milestone for r in scheduler.rungs[0]]
    names = [f"trial_{n:02d}" for n in range(trials)]
    for name in names:
        scheduler = scheduler.on_trial_add(make_trial(name))
    status = dict.fromkeys(names, "pending")
    time = dict.fromkeys(names, 0)
    waiting_at: dict[str, float] = {}  # name -> milestone it paused at
    resumed: dict[str, float] = {}  # name -> milestone it was resumed from
    promoted: set[tuple[str, float]] = set()
    rungs: dict[float, list[tuple[float, int, str]]] = {m: [] for m in milestones}
    arrivals = 0

    def top(milestone: float) -> list[str]:
        entries = rungs[milestone]
        ranked = sorted(entries, key=lambda e: (-(-math.inf if math.isnan(e[0]) else e[0]), e[1]))
        return [name for _, _, name in ranked[: math.floor(len(entries) / reduction_factor)]]

    for _ in range(60 * trials):
        while sum(1 for s in status.values() if s == "running") < slots:
            pending = [make_trial(n) for n in names if status[n] == "pending"]
            paused = [make_trial(n) for n in names if status[n] == "paused"]
            chosen = scheduler.choose_trial_to_run(pending, paused, lambda _: True)
            if chosen is None:
                break
            if status[chosen] == "paused":
                milestone = waiting_at.pop(chosen)
                if pending or chosen in top(milestone):
                    assert chosen in top(milestone)
                else:  # given up: nothing waiting anywhere is promotable
                    assert all(n not in top(m) for n, m in waiting_at.items())
                resumed[chosen] = milestone
            status[chosen] = "running"
        running = [n for n in names if status[n] == "running"]
        if not running:
            break
        name = data.draw(st.sampled_from(running))
        time[name] += 1
        score = data.draw(scores)
        result: JsonDict = {"t": time[name], "acc": score}
        scheduler, verdict = scheduler.on_trial_result(make_trial(name), result, {})
        decision = verdict.decision
        if name in resumed:
            milestone = resumed.pop(name)
            in_top = name in top(milestone)
            if decision is not STOP or time[name] < max_t:
                # Promoted exactly when in the top k now, and once per rung.
                assert (decision is not STOP) == in_top
            if decision is not STOP:
                assert (name, milestone) not in promoted
                promoted.add((name, milestone))
        if decision is PAUSE:
            assert time[name] in milestones
            rungs[time[name]].append((score, arrivals, name))
            arrivals += 1
            waiting_at[name] = time[name]
            status[name] = "paused"
        elif decision is STOP:
            scheduler = scheduler.on_trial_complete(make_trial(name), result)
            status[name] = "done"
    assert all(s == "done" for s in status.values()), status


# -- determinism and serialisation ---------------------------------------------------

SCRIPT = [
    ("A", 1, 3.0),
    ("B", 1, 1.0),
    ("C", 1, 2.0),
    ("D", 1, 4.0),
    ("A", 2, 3.5),
    ("A", 4, 5.0),
    ("E", 1, 0.5),
    ("B", 3, 1.5),
    ("C", 4, 2.5),
    ("D", 4, 6.0),
    ("F", 1, 3.3),
    ("A", 16, 7.0),
    ("D", 16, 6.5),
    ("G", 1, math.nan),
    ("C", 16, 9.0),
]


def play(
    scheduler: Asha, script: Iterable[tuple[str, float, float]]
) -> tuple[Asha, list[Decision | None]]:
    """Feed `script`, skipping results of trials the scheduler stopped (and
    telling it they completed), as an experiment would."""
    decisions: list[Decision | None] = []
    for name, t, acc in script:
        if name not in scheduler.standings:
            decisions.append(None)
            continue
        scheduler, decision = report(scheduler, name, t, acc)
        if decision is STOP:
            scheduler = scheduler.on_trial_complete(TRIALS[name], {"t": t, "acc": acc})
        decisions.append(decision)
    return scheduler, decisions


@pytest.mark.parametrize("variant", ["stopping", "promotion"])
def test_the_same_results_give_the_same_decisions(variant: str) -> None:
    first, decisions = play(added(VARIANTS[variant](brackets=2), "ABCDEFG"), SCRIPT)
    second, again = play(added(VARIANTS[variant](brackets=2), "ABCDEFG"), SCRIPT)
    assert decisions == again
    assert first == second
    assert to_msgpack(first) == to_msgpack(second)


@pytest.mark.parametrize("variant", ["stopping", "promotion"])
@pytest.mark.parametrize("cut", [0, 5, 10, len(SCRIPT)])
def test_a_decoded_scheduler_continues_with_identical_decisions(variant: str, cut: int) -> None:
    live, _ = play(added(VARIANTS[variant](brackets=2, seed=3), "ABCDEFG"), SCRIPT[:cut])
    decoded = from_msgpack(to_msgpack(live), type(live))
    assert decoded == live
    assert to_msgpack(decoded) == to_msgpack(live)
    rest = [*SCRIPT[cut:], ("H", 1, 1.0), ("H", 4, 2.0)]
    live = live.on_trial_add(TRIALS["H"])
    decoded = decoded.on_trial_add(TRIALS["H"])
    live, expected = play(live, rest)
    decoded, decisions = play(decoded, rest)
    assert decisions == expected
    assert any(d is not None for d in decisions)
    assert decoded == live
    assert choose(decoded, "", "ABCDEFGH") == choose(live, "", "ABCDEFGH")


def test_it_decodes_inside_a_tagged_union() -> None:
    scheduler, _ = feed(added(promoting(), "AB"), [("A", 1, 1.0)])
    decoded = from_msgpack(
        to_msgpack(scheduler), ASHAScheduler | ASHAPromotionScheduler | FIFOScheduler
    )
    assert decoded == scheduler


# -- the persistent containers --------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(-50, 50).map(float), max_size=3000),
    removals=st.lists(st.integers(0, 10_000), max_size=200),
)
def test_sorted_chunks_agree_with_a_sorted_list(values: list[float], removals: list[int]) -> None:
    chunks = chunks_of(values)
    expected = sorted(values)
    for position in removals:
        if not expected:
            break
        victim = expected[position % len(expected)]
        chunks = chunks.remove(victim)
        expected.remove(victim)
    assert len(chunks) == len(expected)
    assert [chunks.at(i) for i in range(len(expected))] == expected
    assert list(chunks.descending()) == expected[::-1]
    for probe in (-51.0, -0.5, 0.0, 13.0, 51.0):
        assert chunks.count_above(probe) == sum(1 for v in expected if v > probe)
    assert max((len(c) for c in chunks.chunks), default=0) <= 1024
    with pytest.raises(KeyError):
        chunks.remove(99.0)


def test_sharded_map_is_persistent_and_stable() -> None:
    empty: ShardedMap[str, int] = ShardedMap()
    one = empty.set("a", 1)
    two = one.set("b", 2).set("a", 3)
    assert (empty.get("a"), one.get("a"), two.get("a"), two.get("b")) == (None, 1, 3, 2)
    assert (len(empty), len(one), len(two)) == (0, 1, 2)
    assert two.discard("a").get("a") is None
    assert two.discard("zzz") is two
    assert from_msgpack(to_msgpack(two), ShardedMap[str, int]) == two


def test_a_result_for_a_trial_it_does_not_hold_is_ignored() -> None:
    """The protocol's rule (`TrialScheduler`): a result for a trial ASHA
    never added, or has forgotten since it ended, is no error and changes
    nothing."""
    scheduler = ASHAScheduler(metric="loss", mode=Mode.MIN).with_objective(None, None)
    stranger = new_trial(TrialSpec(trial_id="stranger", trainable_name="train"))
    after, verdict = scheduler.on_trial_result(stranger, {"loss": 1.0, "training_iteration": 1}, {})
    assert verdict.decision is Decision.CONTINUE
    assert after is scheduler


# -- the two variants' stored forms ------------------------------------------------


def test_the_promotion_variant_is_its_own_struct() -> None:
    with pytest.raises(InvalidFieldError, match="ASHAPromotionScheduler") as raised:
        ASHAScheduler(variant="promotion")
    assert (raised.value.field, raised.value.value) == ("ASHAScheduler.variant", "promotion")


@pytest.mark.parametrize("variant", ["stopping", "promotion"])
def test_a_scheduler_stored_before_the_split_is_upgraded_to_its_variant(variant: str) -> None:
    """What an older tunecore stored (one struct, a `variant` field, the
    promotion counts) reads back as the variant's own struct, with the same
    state, deciding as it did."""
    live, _ = play(added(VARIANTS[variant](brackets=2, seed=3), "ABCDEFG"), SCRIPT[:10])
    stored = msgspec.structs.asdict(live) | {"variant": variant, "type": "ASHAScheduler"}
    stored.setdefault("waiting", 0)
    stored.setdefault("records", 0)
    old = from_msgpack(to_msgpack(stored), ASHAStoredBeforeSplit | FIFOScheduler)
    assert isinstance(old, ASHAStoredBeforeSplit)
    upgraded = old.upgraded()
    assert type(upgraded) is type(live)
    assert to_msgpack(upgraded) == to_msgpack(live)
    rest = [*SCRIPT[10:], ("H", 1, 1.0)]
    assert (
        play(upgraded.on_trial_add(TRIALS["H"]), rest)[1]
        == play(live.on_trial_add(TRIALS["H"]), rest)[1]
    )
