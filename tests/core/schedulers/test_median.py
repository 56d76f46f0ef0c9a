"""The median stopping rule, driven result by result.

Every expected verdict is worked out by hand in the comments: which trials
reached the time, their running means over `[grace_period, t]`, the median,
and the trial's best value so far.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec
import pytest

from tunecore.core import new_trial
from tunecore.core.schedulers.base import CONTINUE, PAUSE, STOP, TrialScheduler, Verdict
from tunecore.core.schedulers.median import MedianStoppingRule, Sample
from tunecore.model import InvalidFieldError, JsonDict, Mode, TrialSpec, TrialState, TrialStatus
from tunecore.model.codec import from_msgpack, to_msgpack

RUNNING = TrialStatus.RUNNING


def make_trial(trial_id: str, status: TrialStatus = RUNNING) -> TrialState:
    spec = TrialSpec(trial_id=trial_id, trainable_name="train")
    return msgspec.structs.replace(new_trial(spec), status=status)


def population(*ids: str, status: TrialStatus = RUNNING) -> dict[str, TrialState]:
    return {trial_id: make_trial(trial_id, status) for trial_id in ids}


def rule(**overrides: object) -> MedianStoppingRule:
    settings: dict[str, object] = {
        "time_attr": "t",
        "metric": "acc",
        "mode": "max",
        "grace_period": 2,
        "min_samples_required": 3,
    }
    settings.update(overrides)
    return MedianStoppingRule(**settings)  # type: ignore[arg-type]


def report(
    scheduler: MedianStoppingRule,
    trials: Mapping[str, TrialState],
    trial_id: str,
    time: float,
    value: float,
) -> tuple[MedianStoppingRule, Verdict]:
    return scheduler.on_trial_result(trials[trial_id], {"t": time, "acc": value}, trials)


def feed(
    scheduler: MedianStoppingRule,
    trials: Mapping[str, TrialState],
    events: Iterable[tuple[str, float, float]],
) -> tuple[MedianStoppingRule, list[Verdict]]:
    verdicts = []
    for trial_id, time, value in events:
        scheduler, verdict = report(scheduler, trials, trial_id, time, value)
        verdicts.append(verdict)
    return scheduler, verdicts


# A, B and C report at t = 1..4 (C stops at 3). With grace_period 2 the
# running means only use t >= 2:
#   at t=2: A 0.3, B 0.4, C 0.9                  -> median 0.4
#   at t=3: A (0.3+0.5)/2 = 0.4, B 0.4, C 0.9    -> median 0.4
#   at t=4: only A and B reached it              -> 2 < min_samples_required
HISTORY = [
    ("A", 1, 0.1),
    ("A", 2, 0.3),
    ("A", 3, 0.5),
    ("A", 4, 0.7),
    ("B", 1, 0.2),
    ("B", 2, 0.4),
    ("B", 3, 0.4),
    ("B", 4, 0.4),
    ("C", 1, 0.9),
    ("C", 2, 0.9),
]
C_LAST: JsonDict = {"t": 3, "acc": 0.9}


def seeded_rule(**overrides: object) -> tuple[MedianStoppingRule, dict[str, TrialState]]:
    """A, B, C and D running; C has completed with its result at t=3."""
    trials = population("A", "B", "C", "D")
    scheduler, verdicts = feed(rule(**overrides), trials, HISTORY)
    # Fed one trial after another: A never has others to compare with, B has
    # one, C two, all fewer than three, and nobody waits: all continue.
    assert verdicts == [CONTINUE] * len(HISTORY)
    scheduler = scheduler.on_trial_complete(trials["C"], C_LAST)
    trials["C"] = make_trial("C", TrialStatus.TERMINATED)
    return scheduler, trials


def test_running_means_use_only_results_inside_the_grace_window() -> None:
    # The means come in no particular order (the median does not need one).
    scheduler, _ = seeded_rule()
    assert sorted(scheduler.reference_means("D", 2)) == pytest.approx([0.3, 0.4, 0.9])
    assert sorted(scheduler.reference_means("D", 3)) == pytest.approx([0.4, 0.4, 0.9])
    # Including t=1 would give A (0.1+0.3+0.5)/3 = 0.3 instead.
    assert sorted(scheduler.reference_means("D", 4)) == pytest.approx([0.4, 0.5])
    # The reporting trial never counts itself.
    assert sorted(scheduler.reference_means("A", 3)) == pytest.approx([0.4, 0.9])


def test_a_trial_below_the_median_is_stopped() -> None:
    scheduler, trials = seeded_rule()
    scheduler, verdict = report(scheduler, trials, "D", 1, 0.0)
    assert verdict == CONTINUE  # t=1 < grace_period 2
    scheduler, verdict = report(scheduler, trials, "D", 2, 0.3)
    assert verdict == STOP  # best 0.3 < median 0.4
    assert scheduler.stopped == ("D",)
    assert scheduler.debug_string() == "Using MedianStoppingRule: num_stopped=1."


def test_equal_to_the_median_continues() -> None:
    scheduler, trials = seeded_rule()
    scheduler, verdict = report(scheduler, trials, "D", 2, 0.4)
    assert verdict == CONTINUE  # best 0.4 is not strictly worse than 0.4
    scheduler, verdict = report(scheduler, trials, "D", 3, 0.35)
    assert verdict == CONTINUE  # best is still 0.4; median at t=3 is 0.4
    scheduler, verdict = report(scheduler, trials, "D", 4, 0.0)
    assert verdict == CONTINUE  # only A and B reached t=4: too few samples
    assert scheduler.stopped == ()


def test_best_result_counts_results_before_the_grace_period() -> None:
    scheduler, trials = seeded_rule()
    scheduler, _ = report(scheduler, trials, "D", 1, 0.5)
    scheduler, verdict = report(scheduler, trials, "D", 2, 0.1)
    assert verdict == CONTINUE  # best is 0.5 (from t=1) > median 0.4


def test_nothing_is_judged_before_the_grace_period() -> None:
    scheduler, trials = seeded_rule(grace_period=3)
    # At t=2 the others' means would be 0.3/0.4/0.9; D's 0.0 is far below.
    scheduler, verdict = report(scheduler, trials, "D", 2, 0.0)
    assert verdict == CONTINUE
    # At t=3 the window is [3, 3]: A 0.5, B 0.4, C 0.9 -> median 0.5.
    scheduler, verdict = report(scheduler, trials, "D", 3, 0.45)
    assert verdict == STOP


def test_too_few_samples_continue() -> None:
    scheduler, trials = seeded_rule(min_samples_required=4)
    scheduler, verdict = report(scheduler, trials, "D", 2, 0.0)
    assert verdict == CONTINUE  # three others reached t=2, four required


def test_soft_stop_pauses_and_then_falls_back_to_fifo() -> None:
    scheduler, trials = seeded_rule(hard_stop=False)
    scheduler, verdict = report(scheduler, trials, "D", 2, 0.3)
    assert verdict == PAUSE
    before = scheduler.samples.get("D")
    scheduler, verdict = report(scheduler, trials, "D", 3, 0.0)
    assert verdict == CONTINUE  # never judged again once given up on
    assert scheduler.samples.get("D") == before  # nor is the result recorded


def test_mode_min_median_of_an_even_number_of_trials() -> None:
    # Losses at t=5: 1, 2, 4, 10 -> median (2 + 4) / 2 = 3; lower is better.
    trials = population("W", "X", "Y", "Z", "P", "Q", "R")
    scheduler = rule(mode="min", grace_period=0, min_samples_required=2)
    scheduler, verdicts = feed(
        scheduler, trials, [("W", 5, 1.0), ("X", 5, 2.0), ("Y", 5, 4.0), ("Z", 5, 10.0)]
    )
    # W: no others; X: only W -> too few; Y: median of 1, 2 = 1.5 and 4 is
    # worse -> STOP; Z: median of 1, 2, 4 = 2 and 10 is worse -> STOP.
    assert verdicts == [CONTINUE, CONTINUE, STOP, STOP]
    scheduler, verdict = report(scheduler, trials, "P", 5, 3.1)
    assert verdict == STOP  # 3.1 > 3
    scheduler, verdict = report(scheduler, trials, "Q", 5, 2.9)
    # P's 3.1 counts now: 1, 2, 3.1, 4, 10 -> median 3.1, and 2.9 is better.
    assert verdict == CONTINUE
    # R at t=1: every other trial's window [0, 1] is empty (they reported at
    # t=5 only), so nobody has a running mean and R cannot be judged.
    scheduler, verdict = report(scheduler, trials, "R", 1, 100.0)
    assert verdict == CONTINUE
    # R at t=5: its best is the minimum, 0.5 (not 100); the others' losses
    # 1, 2, 2.9, 3.1, 4, 10 have median (2.9 + 3.1) / 2 = 3.0.
    scheduler, verdict = report(scheduler, trials, "R", 5, 0.5)
    assert verdict == CONTINUE
    assert scheduler.stopped == ("Y", "Z", "P")


def test_mode_max_even_median() -> None:
    trials = population("W", "X", "Y", "Z", "P")
    scheduler = rule(grace_period=0, min_samples_required=4)
    scheduler, _ = feed(
        scheduler, trials, [("W", 5, 1.0), ("X", 5, 2.0), ("Y", 5, 4.0), ("Z", 5, 10.0)]
    )
    stopped, verdict = report(scheduler, trials, "P", 5, 2.9)
    assert verdict == STOP  # 2.9 < (2 + 4) / 2
    kept, verdict = report(scheduler, trials, "P", 5, 3.0)
    assert verdict == CONTINUE
    assert stopped.stopped == ("P",)
    assert kept.stopped == ()


def test_trials_that_have_not_reached_the_time_do_not_count() -> None:
    trials = population("A", "B", "C", "D")
    scheduler = rule(grace_period=0, min_samples_required=3)
    scheduler, _ = feed(scheduler, trials, [("A", 10, 5.0), ("B", 10, 5.0), ("C", 4, 100.0)])
    # At t=10 only A and B reached it (C is at 4): two samples, three needed.
    # Counting C would make it 5, 5, 100 -> median 5, and 4.0 would stop.
    scheduler, verdict = report(scheduler, trials, "D", 10, 4.0)
    assert verdict == CONTINUE
    scheduler, verdict = report(scheduler, trials, "C", 10, 6.0)
    # C at t=10: A 5, B 5, D 4 -> median 5; C's best is 100.
    assert verdict == CONTINUE


def test_insufficient_samples_yield_to_waiting_trials_once_per_time_slice() -> None:
    trials = population("A", "B")
    trials["B"] = make_trial("B", TrialStatus.PENDING)
    scheduler = rule(grace_period=0, min_time_slice=5)
    scheduler, verdict = report(scheduler, trials, "A", 3, 1.0)
    assert verdict == PAUSE  # 3 - (-inf) > 5 and B waits
    assert dict(scheduler.pauses.items()) == {"A": 3}
    scheduler, verdict = report(scheduler, trials, "A", 6, 1.0)
    assert verdict == CONTINUE  # 6 - 3 = 3 <= 5
    scheduler, verdict = report(scheduler, trials, "A", 8, 1.0)
    assert verdict == CONTINUE  # 8 - 3 = 5 is not more than 5
    scheduler, verdict = report(scheduler, trials, "A", 9, 1.0)
    assert verdict == PAUSE  # 9 - 3 = 6 > 5
    assert dict(scheduler.pauses.items()) == {"A": 9}
    assert scheduler.stopped == ()  # yielding is not giving up


def test_no_yield_when_nobody_waits() -> None:
    trials = population("A", "B")
    trials["B"] = make_trial("B", TrialStatus.TERMINATED)
    scheduler, verdict = report(rule(grace_period=0), trials, "A", 3, 1.0)
    assert verdict == CONTINUE
    assert dict(scheduler.pauses.items()) == {}


def test_results_without_a_numeric_time_or_metric_are_ignored() -> None:
    trials = population("A")
    scheduler = rule(grace_period=0)
    results: list[JsonDict] = [
        {"acc": 1.0},
        {"t": 1},
        {"t": 1, "acc": "high"},
        {"t": 1, "acc": math.nan},
    ]
    for result in results:
        after, verdict = scheduler.on_trial_result(trials["A"], result, trials)
        assert verdict == CONTINUE
        assert after == scheduler


def test_complete_records_the_final_result_once() -> None:
    trials = population("A")
    scheduler, _ = report(rule(), trials, "A", 1, 0.5)
    scheduler = scheduler.on_trial_complete(trials["A"], {"t": 1, "acc": 0.5})
    assert dict(scheduler.samples.items()) == {"A": (Sample(1, 0.5),)}
    scheduler = scheduler.on_trial_complete(trials["A"], {"t": 2, "acc": 0.6})
    assert dict(scheduler.samples.items()) == {"A": (Sample(1, 0.5), Sample(2, 0.6))}


def test_with_objective_fills_only_what_is_missing() -> None:
    scheduler = MedianStoppingRule(metric="acc")
    filled = scheduler.with_objective("loss", Mode.MIN)
    assert (filled.metric, filled.mode) == ("acc", Mode.MIN)
    anonymous = MedianStoppingRule().with_objective(None, Mode.MAX)
    assert (anonymous.metric, anonymous.mode) == ("_metric", Mode.MAX)  # Ray's default
    with pytest.raises(InvalidFieldError) as error:
        MedianStoppingRule().on_trial_add(make_trial("A"))
    assert error.value.field == "MedianStoppingRule.metric"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("grace_period", -1),
        ("grace_period", math.inf),
        ("min_samples_required", 0),
        ("min_samples_required", 2.5),
        ("min_time_slice", -0.5),
        ("hard_stop", "yes"),
        ("mode", "best"),
        ("metric", ""),
        ("time_attr", ""),
    ],
)
def test_invalid_settings_name_field_and_value(field: str, value: object) -> None:
    with pytest.raises(InvalidFieldError) as error:
        MedianStoppingRule(**{field: value})  # type: ignore[arg-type]
    assert error.value.field == f"MedianStoppingRule.{field}"
    assert error.value.value == value
    assert f"MedianStoppingRule.{field}={value!r}" in str(error.value)


def test_defaults_are_rays() -> None:
    scheduler = MedianStoppingRule()
    assert (scheduler.time_attr, scheduler.grace_period) == ("time_total_s", 60.0)
    assert (scheduler.min_samples_required, scheduler.min_time_slice) == (3, 0)
    assert scheduler.hard_stop is True
    assert MedianStoppingRule(mode="min").mode is Mode.MIN


def test_choose_trial_to_run_is_fifo_pending_first() -> None:
    scheduler = rule()
    p1, p2, q1 = make_trial("p1"), make_trial("p2"), make_trial("q1")
    assert scheduler.choose_trial_to_run([p1, p2], [q1], lambda t: True) == "p1"
    assert scheduler.choose_trial_to_run([p1, p2], [q1], lambda t: t.trial_id != "p1") == "p2"
    assert scheduler.choose_trial_to_run([p1, p2], [q1], lambda t: t.trial_id == "q1") == "q1"
    assert scheduler.choose_trial_to_run([p1], [q1], lambda t: False) is None


def test_msgpack_round_trip_continues_identically() -> None:
    scheduler, trials = seeded_rule(hard_stop=False, min_time_slice=1)
    trials["E"] = make_trial("E", TrialStatus.PENDING)
    scheduler, _ = report(scheduler, trials, "D", 2, 0.4)
    decoded = from_msgpack(to_msgpack(scheduler), MedianStoppingRule)
    assert decoded == scheduler
    rest = [("D", 3, 0.1), ("D", 4, 0.0), ("A", 5, 0.1), ("B", 5, 0.9), ("D", 5, 0.2)]
    live, live_verdicts = feed(scheduler, trials, rest)
    replayed, replayed_verdicts = feed(decoded, trials, rest)
    assert replayed_verdicts == live_verdicts
    assert replayed == live
    # D at 3: best 0.4 vs median 0.4 -> CONTINUE. D at 4: A 0.5 and B 0.4
    # only, E waits -> yield. A at 5 and B at 5: at most one other trial
    # reached t=5, E waits, neither yielded before -> yield. D at 5: A 0.4
    # and B 0.525, still too few, and 5 - 4 = 1 is not more than 1.
    assert live_verdicts == [CONTINUE, PAUSE, PAUSE, PAUSE, CONTINUE]
    assert dict(live.pauses.items()) == {"D": 4, "A": 5, "B": 5}


def test_is_a_trial_scheduler() -> None:
    scheduler: TrialScheduler = rule()
    assert scheduler.on_trial_error(make_trial("A")) is scheduler
    assert scheduler.on_trial_remove(make_trial("A")) is scheduler


def test_a_rule_stored_before_persistent_maps_decodes_and_continues_identically() -> None:
    """A rule written when its state was the plain dicts `results` and
    `last_pause` decodes into `samples` and `pauses` and decides as the
    rule it was would."""
    scheduler, trials = seeded_rule(hard_stop=False, min_time_slice=1)
    trials["E"] = make_trial("E", TrialStatus.PENDING)
    scheduler, _ = report(scheduler, trials, "D", 2, 0.4)
    scheduler, verdict = report(scheduler, trials, "D", 4, 0.0)
    assert verdict == PAUSE
    old_form = msgspec.msgpack.decode(to_msgpack(scheduler))
    old_form["results"] = {k: [[s.time, s.value] for s in v] for k, v in scheduler.samples.items()}
    old_form["last_pause"] = dict(scheduler.pauses.items())
    del old_form["samples"], old_form["pauses"]
    decoded = from_msgpack(msgspec.msgpack.encode(old_form), MedianStoppingRule)
    assert decoded == scheduler
    assert decoded.results == {}
    assert decoded.last_pause == {}
    rest = [("A", 5, 0.1), ("B", 5, 0.9), ("D", 5, 0.2), ("C", 6, 0.3)]
    assert feed(decoded, trials, rest) == feed(scheduler, trials, rest)
