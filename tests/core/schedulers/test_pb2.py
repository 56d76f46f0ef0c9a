"""Population Based Bandits: Ray's settings, the data it notes, the values
its GP-UCB step picks, determinism and replay.

Everything PB2 shares with PBT (quantiles, donors, checkpoints, taking
turns) is tested in test_pbt.py; here the property test checks that PB2
keeps PBT's exploit rules while choosing values within the bounds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunecore.core.rng import seeded
from tunecore.core.schedulers import pb2_model
from tunecore.core.schedulers.base import TrialScheduler, Verdict
from tunecore.core.schedulers.pb2 import PB2, Observation, RewardChange, reward_changes
from tunecore.core.schedulers.pbt import CUSTOM_EXPLORE_PATH
from tunecore.model import (
    Decision,
    InvalidFieldError,
    JsonDict,
    Mode,
    TrialState,
    TrialStatus,
    ValuesDrawn,
)
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.testing import PolicyDriver

from .test_pbt import make_trial, persistent


def pb2(**overrides: object) -> PB2:
    settings_: dict[str, object] = {
        "time_attr": "t",
        "metric": "score",
        "mode": "max",
        "perturbation_interval": 10,
        "hyperparam_bounds": {"lr": [0.0, 1.0]},
        "quantile_fraction": 0.5,
        "seed": 1,
    }
    settings_.update(overrides)
    return PB2(**settings_)  # type: ignore[arg-type]


def population(configs: Mapping[str, JsonDict]) -> dict[str, TrialState]:
    return {
        trial_id: make_trial(trial_id, config=config, checkpoints=(persistent(f"/c/{trial_id}"),))
        for trial_id, config in configs.items()
    }


def feed(
    scheduler: PB2,
    trials: Mapping[str, TrialState],
    events: Iterable[tuple[str, float, float]],
) -> tuple[PB2, list[Verdict]]:
    verdicts = []
    for trial_id, time, score in events:
        scheduler, verdict = scheduler.on_trial_result(
            trials[trial_id], {"t": time, "score": score}, trials
        )
        verdicts.append(verdict)
    return scheduler, verdicts


def started(scheduler: PB2, trials: Mapping[str, TrialState]) -> PB2:
    for trial in trials.values():
        scheduler = scheduler.on_trial_add(trial)
    return scheduler


# --- configuration -----------------------------------------------------------


def test_defaults_are_rays() -> None:
    scheduler = PB2(hyperparam_bounds={"lr": [1e-4, 1e-1]})
    assert scheduler.time_attr == "time_total_s"
    assert scheduler.perturbation_interval == 60.0
    assert scheduler.quantile_fraction == 0.25
    assert (scheduler.log_config, scheduler.require_attrs, scheduler.synch) == (None, True, False)
    assert scheduler.custom_explore_fn is None
    # A new experiment logs configs, Ray's default (an older log replays without).
    assert scheduler.with_objective("score", Mode.MAX).log_config is True


def test_nested_bounds_are_stored_by_path_and_tag_as_mutations() -> None:
    scheduler = pb2(hyperparam_bounds={"opt": {"momentum": (0.8, 1)}, "lr": [0, 1]})
    assert scheduler.hyperparam_bounds == {"opt/momentum": (0.8, 1.0), "lr": (0.0, 1.0)}
    assert scheduler.hyperparam_mutations == {"opt/momentum": [0.8, 1.0], "lr": [0.0, 1.0]}


@pytest.mark.parametrize(
    ("bounds", "field"),
    [
        ({}, "PB2.hyperparam_bounds"),
        ({"lr": [1.0]}, "PB2.hyperparam_bounds['lr']"),
        ({"lr": [0.0, 1.0, 2.0]}, "PB2.hyperparam_bounds['lr']"),
        ({"lr": [1.0, 0.5]}, "PB2.hyperparam_bounds['lr']"),
        ({"lr": ["a", 1.0]}, "PB2.hyperparam_bounds['lr']"),
        ({"lr": [0.0, math.inf]}, "PB2.hyperparam_bounds['lr']"),
        ({"lr": 0.1}, "PB2.hyperparam_bounds['lr']"),
        ({"opt": {}}, "PB2.hyperparam_bounds['opt']"),
        ({"a": {"b": [0, 1]}, "a/b": [0, 1]}, "PB2.hyperparam_bounds['a/b']"),
    ],
)
def test_invalid_bounds_are_named_by_path(bounds: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidFieldError) as error:
        pb2(hyperparam_bounds=bounds)
    assert error.value.field == field


@pytest.mark.parametrize(
    ("field", "value"),
    [("quantile_fraction", 0.6), ("perturbation_interval", 0), ("mode", "best"), ("seed", 0.5)],
)
def test_pbts_checks_name_pb2(field: str, value: object) -> None:
    with pytest.raises(InvalidFieldError) as error:
        pb2(**{field: value})
    assert error.value.field == f"PB2.{field}"


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ({"hyperparam_mutations": {"lr": [0.1, 0.2]}}, "hyperparam_mutations"),
        ({"resample_probability": 0.5}, "resample_probability"),
        ({"perturbation_factors": (2.0,)}, "perturbation_factors"),
    ],
)
def test_what_pb2_does_not_take_is_a_type_error_naming_it(
    setting: dict[str, object], named: str
) -> None:
    with pytest.raises(TypeError, match=named):
        pb2(**setting)


def test_rays_other_flags_are_accepted() -> None:
    scheduler = pb2(synch=False, log_config=False, require_attrs=False)
    assert (scheduler.log_config, scheduler.require_attrs) == (False, False)


def synch_pb2_population(**overrides: object) -> tuple[PolicyDriver, list[str]]:
    scheduler = pb2(time_attr="training_iteration", perturbation_interval=2, synch=True)
    driver = PolicyDriver(msgspec.structs.replace(scheduler, **overrides), cpus=4)
    return driver, [driver.add({"lr": lr}) for lr in (0.1, 0.2, 0.3, 0.4)]


def test_synch_waits_at_the_barrier_then_the_model_chooses_within_bounds() -> None:
    """Ray's PB2(synch=True): PBT's barrier, PB2's explore step."""
    driver, ids = synch_pb2_population()
    scores = dict(zip(ids, (1.0, 2.0, 3.0, 9.0), strict=True))
    for trial_id in ids:
        driver.result(trial_id, score=scores[trial_id])
    for trial_id in ids[:3]:
        assert driver.result(trial_id, score=scores[trial_id]) is Decision.PAUSE
    assert driver.started() == []  # nobody ahead of the barrier runs again
    driver.result(ids[3], score=scores[ids[3]])  # the slowest arrives: everyone moves
    scheduler = driver.scheduler
    assert isinstance(scheduler, PB2)
    assert scheduler.next_sync == 4.0
    assert len(scheduler.observations) == 4  # each trial noted at the barrier
    worst, best = driver.trial(ids[0]), driver.trial(ids[3])
    assert worst.exploited is not None
    assert worst.exploited.checkpoint.path.startswith(best.trial_id)  # the best's barrier save
    lr = worst.spec.config["lr"]
    assert isinstance(lr, float)
    assert 0.0 <= lr <= 1.0
    assert sorted(driver.trial_ids(TrialStatus.RUNNING)) == sorted(ids)


def add_note(config: JsonDict) -> JsonDict:
    config["note"] = f"lr was {config['lr']:.3f}"
    return config


def test_custom_explore_fn_gets_the_models_choice_and_its_answer_is_taken() -> None:
    """Ray's PB2 calls `custom_explore_fn` on the config its model chose;
    the core asks for it through the shell, as for PBT."""
    driver, ids = synch_pb2_population(custom_explore_fn=add_note)
    for _ in range(2):
        for trial_id, score in zip(ids, (1.0, 2.0, 3.0, 9.0), strict=True):
            driver.result(trial_id, score=score)
    scheduler = driver.scheduler
    assert isinstance(scheduler, PB2)
    wanted = scheduler.wanted()
    assert wanted is not None
    assert wanted.paths == (CUSTOM_EXPLORE_PATH,)
    chosen = wanted.config["lr"]
    assert isinstance(chosen, float)
    assert 0.0 <= chosen <= 1.0
    assert scheduler.explore_function is add_note
    answer = add_note(dict(wanted.config))
    driver._feed(ValuesDrawn(at=99.0, owner="scheduler", key=wanted.key, values=[answer]))
    assert driver.trial(ids[0]).spec.config == answer


# --- the data ----------------------------------------------------------------


def test_reward_changes_pair_each_trial_and_values_in_time_order() -> None:
    observations = [
        Observation("a", 10, (0.1,), 1.0),
        Observation("b", 10, (0.5,), 4.0),
        Observation("a", 20, (0.1,), 3.0),  # a: +2 over 10
        Observation("b", 20, (0.9,), 5.0),  # b changed values: no pair
        Observation("b", 15, (0.5,), 7.0),  # noted late, sorted by time: b +3 over 5
        Observation("a", 20, (0.1,), 9.0),  # time did not advance: dropped
        Observation("b", 40, (0.9,), 9.0),  # b +4 over 20 with 0.9
    ]
    assert reward_changes(observations) == [
        RewardChange("b", 15, 4.0, (0.5,), 0.6, 7.0),
        RewardChange("a", 20, 1.0, (0.1,), 0.2, 3.0),
        RewardChange("b", 40, 5.0, (0.9,), 0.2, 9.0),
    ]


def test_each_perturbation_notes_the_trial_its_values_and_signed_score() -> None:
    trials = population({"a": {"lr": 0.2, "other": "x"}, "b": {"lr": 0.7}})
    scheduler = started(pb2(mode=Mode.MIN), trials)
    scheduler, _ = feed(scheduler, trials, [("a", 10, 3.0), ("a", 15, 2.0), ("b", 10, 1.0)])
    assert scheduler.observations == (
        Observation("a", 10.0, (0.2,), -3.0),
        Observation("b", 10.0, (0.7,), -1.0),
    )


def test_a_trial_without_a_number_at_a_bound_is_not_noted() -> None:
    trials = population({"a": {"lr": "high"}, "b": {}})
    scheduler = started(pb2(), trials)
    scheduler, _ = feed(scheduler, trials, [("a", 10, 3.0), ("b", 10, 1.0)])
    assert scheduler.observations == ()


# --- the explore step --------------------------------------------------------

TWO: dict[str, JsonDict] = {
    "top": {"lr": 0.5, "units": 10, "fixed": "x"},
    "low": {"lr": 0.1, "units": 3, "fixed": "y"},
}
BOUNDS = {"lr": [0.0, 1.0], "units": [1, 100]}


def test_a_donor_without_a_reward_change_passes_its_config_on() -> None:
    trials = population(TWO)
    scheduler = started(pb2(hyperparam_bounds=BOUNDS), trials)
    scheduler, verdicts = feed(scheduler, trials, [("top", 10, 9.0), ("low", 10, 1.0)])
    exploit = verdicts[1].exploit
    assert exploit is not None
    assert exploit.donor_id == "top"
    assert exploit.config == TWO["top"]
    assert exploit.experiment_tag == "@perturbed[lr=0.5000,units=10]"
    assert scheduler.taken == ()


@pytest.mark.parametrize("seed", range(8))
def test_chosen_values_lie_within_bounds_and_keep_their_type(seed: int) -> None:
    trials = population(TWO)
    scheduler = started(pb2(hyperparam_bounds=BOUNDS, seed=seed), trials)
    events = [("top", 10, 9.0), ("low", 10, 1.0), ("top", 20, 19.0), ("low", 20, 2.0)]
    scheduler, verdicts = feed(scheduler, trials, events)
    exploit = verdicts[3].exploit
    assert exploit is not None
    config = exploit.config
    lr, units = config["lr"], config["units"]
    assert isinstance(lr, float)
    assert 0.0 <= lr <= 1.0
    assert type(units) is int
    assert 1 <= units <= 100
    assert config["fixed"] == "x"
    assert exploit.experiment_tag == f"@perturbed[lr={lr:.4f},units={units}]"
    # The trial is noted with its new values at the donor's time and score,
    # and they are the round's first choice.
    assert scheduler.observations[-1] == Observation("low", 20.0, (lr, float(units)), 19.0)
    assert scheduler.taken == ((lr, float(units)),)
    assert scheduler.round_time == 20.0
    assert scheduler.members["low"].config == config
    # Decoded and encoded again, the state is the same bytes (an int value
    # is noted as the float decoding reads), so a resumed log stays sealed.
    data = to_msgpack(scheduler)
    assert to_msgpack(from_msgpack(data, PB2)) == data


def test_a_donor_missing_a_bounded_value_passes_its_config_on() -> None:
    """Never noted (Ray would fail on the missing key), so no reward change."""
    trials = population({"top": {"lr": 0.5}, "low": {"lr": 0.1}})
    scheduler = started(pb2(hyperparam_bounds={"lr": [0, 1], "opt": {"m": [0, 1]}}), trials)
    events = [("top", 10, 9.0), ("low", 10, 1.0), ("top", 20, 19.0), ("low", 20, 2.0)]
    scheduler, verdicts = feed(scheduler, trials, events)
    exploit = verdicts[3].exploit
    assert exploit is not None
    assert exploit.config == {"lr": 0.5}
    assert scheduler.observations == ()


def test_a_round_remembers_its_choices_and_a_new_round_forgets_them() -> None:
    trials = population({f"t{i}": {"lr": 0.1 * i} for i in range(6)})
    scheduler = started(pb2(quantile_fraction=0.5), trials)
    first = [(f"t{i}", 10, float(i)) for i in range(6)]
    second = [(f"t{i}", 20, float(3 * i)) for i in reversed(range(6))]  # donors first
    scheduler, verdicts = feed(scheduler, trials, first + second)
    chosen = [v.exploit.config["lr"] for v in verdicts[6:] if v.exploit is not None]
    assert len(chosen) == 3  # t2, t1, t0 exploit in the second round
    assert scheduler.taken == tuple((value,) for value in chosen)
    third = [(f"t{i}", 30, float(4 * i)) for i in (3, 4, 5, 0)]
    scheduler, verdicts = feed(scheduler, trials, third)
    assert verdicts[3].exploit is not None
    assert len(scheduler.taken) == 1  # a later time: a new round


def test_the_bound_picks_the_values_whose_reward_grows_fastest() -> None:
    """Reward changes peak at lr = 0.7 and the data cover [0, 1]: the mean
    dominates the bound, and the choice lands near the peak."""
    observations = []
    for index in range(40):
        lr = index / 39
        growth = 1.0 - (lr - 0.7) ** 2 * 4
        trial_id = f"t{index}"
        observations += [
            Observation(trial_id, 10.0, (lr,), 5.0),
            Observation(trial_id, 20.0, (lr,), 5.0 + 10 * growth),
        ]
    trials = population({"top": {"lr": 0.7}, "low": {"lr": 0.1}})
    scheduler = started(pb2(), trials)
    scheduler = msgspec.structs.replace(
        scheduler, observations=(*observations, Observation("top", 10.0, (0.7,), 5.0))
    )
    _, verdicts = feed(scheduler, trials, [("top", 20, 15.0), ("low", 20, 0.0)])
    exploit = verdicts[1].exploit
    assert exploit is not None
    chosen = exploit.config["lr"]
    assert isinstance(chosen, float)
    assert abs(chosen - 0.7) < 0.1


# --- the model ---------------------------------------------------------------


def test_the_process_interpolates_its_data_and_is_unsure_away_from_it() -> None:
    inputs = np.array([[0.0, 0.5, x] for x in (0.1, 0.3, 0.5, 0.7, 0.9)])
    targets = np.sin(6 * inputs[:, 2])
    model = pb2_model.fit(inputs, targets)
    assert np.allclose(model.mean(inputs), targets, atol=0.05)
    near, far = model.variance_at(np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]))
    assert near < 1e-3 * model.variance
    assert far > 0.5 * model.variance
    spread = model.with_points(np.array([[1.0, 0.0, 0.0]]))
    assert spread.variance_at(np.array([[1.0, 0.0, 0.0]]))[0] < 1e-3 * model.variance


def test_points_taken_this_round_push_the_choice_elsewhere() -> None:
    """With equal reward changes the mean is flat and the bound is the
    variance: highest far from the data (x near 1), until that point is
    taken."""
    rows = np.array([[t, 0.0, x] for t in (1.0, 2.0) for x in (0.0, 0.1, 0.2, 0.3)])
    changes = np.ones(len(rows))
    _, alone = pb2_model.choose(rows, changes, (2.0, 0.0), np.empty((0, 1)), seeded(5))
    assert alone[0] > 0.9
    _, spread = pb2_model.choose(rows, changes, (2.0, 0.0), np.array([[1.0]]), seeded(5))
    assert 0.3 < spread[0] < 0.9


def test_the_choice_is_the_same_bits_whatever_the_blas_threads() -> None:
    """A replay on a machine with more cores must choose the same values:
    the model does its products in numpy's own loops, never in BLAS."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    generator = np.random.default_rng(0)
    rows = np.column_stack(
        [np.repeat(np.arange(50.0), 4), generator.random(200), generator.random((200, 3))]
    )
    changes = generator.normal(size=200)
    taken = generator.random((3, 3))
    outcomes = []
    for threads in (1, 2, 4):
        with threadpoolctl.threadpool_limits(threads):
            model = pb2_model.fit(rows, changes)
            _, chosen = pb2_model.choose(rows, changes, (49.0, 0.5), taken, seeded(1))
            outcomes.append((model.weights.tobytes(), model.inverse.tobytes(), chosen.tobytes()))
    assert outcomes[0] == outcomes[1] == outcomes[2]


def test_duplicate_rows_still_factor() -> None:
    inputs = np.array([[0.0, 0.5, 0.5]] * 4)
    model = pb2_model.fit(inputs, np.array([1.0, -1.0, 1.0, -1.0]))
    assert np.isfinite(model.mean(inputs)).all()


# --- determinism and replay --------------------------------------------------

SCHEDULE = [
    (f"t{i}", float(time), float(time * (1 + i % 3) + i))
    for time in (10, 20, 30, 40, 50)
    for i in range(6)
]


def domain_population() -> dict[str, TrialState]:
    return population({f"t{i}": {"lr": 0.15 * i, "units": 5 + i} for i in range(6)})


def test_same_seed_same_decisions_and_msgpack_round_trip() -> None:
    trials = domain_population()
    settings_ = {"hyperparam_bounds": BOUNDS, "seed": 4}
    first, first_verdicts = feed(started(pb2(**settings_), trials), trials, SCHEDULE)
    again, again_verdicts = feed(started(pb2(**settings_), trials), trials, SCHEDULE)
    assert first_verdicts == again_verdicts
    assert first == again
    assert sum(v.exploit is not None for v in first_verdicts) >= 3
    half = len(SCHEDULE) // 2
    live, _ = feed(started(pb2(**settings_), trials), trials, SCHEDULE[:half])
    decoded = from_msgpack(to_msgpack(live), PB2)
    assert decoded == live
    live, live_verdicts = feed(live, trials, SCHEDULE[half:])
    replayed, replayed_verdicts = feed(decoded, trials, SCHEDULE[half:])
    assert replayed_verdicts == live_verdicts
    assert replayed == live


def test_another_seed_chooses_otherwise() -> None:
    trials = domain_population()
    _, one = feed(started(pb2(hyperparam_bounds=BOUNDS, seed=1), trials), trials, SCHEDULE)
    _, two = feed(started(pb2(hyperparam_bounds=BOUNDS, seed=2), trials), trials, SCHEDULE)
    assert [v.exploit.config for v in one if v.exploit] != [
        v.exploit.config for v in two if v.exploit
    ]


def test_observations_are_capped() -> None:
    trials = population({"a": {"lr": 0.5}})
    scheduler = started(pb2(perturbation_interval=1), trials)
    many = (Observation("a", float(i), (0.5,), 0.0) for i in range(1100))
    scheduler = msgspec.structs.replace(scheduler, observations=tuple(many))
    scheduler, _ = feed(scheduler, trials, [("a", 2000, 1.0)])
    assert len(scheduler.observations) == 1000
    assert scheduler.observations[-1].time == 2000


def test_is_a_scheduler_with_its_own_debug_string() -> None:
    scheduler: TrialScheduler = pb2()
    assert scheduler.debug_string() == "PB2: 0 checkpoints, 0 perturbs, 0 observations"


# --- property ----------------------------------------------------------------


@given(
    count=st.integers(2, 6),
    scores=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=4, max_size=24),
    seed=st.integers(0, 2**32),
)
@settings(max_examples=40, deadline=None)
def test_exploits_keep_pbts_rules_and_the_bounds(
    count: int, scores: list[float], seed: int
) -> None:
    trials = population({f"t{i}": {"lr": 0.1 * i, "n": i} for i in range(count)})
    bounds = {"lr": [0.0, 0.5], "n": [0, 10]}
    scheduler = started(pb2(perturbation_interval=1, hyperparam_bounds=bounds, seed=seed), trials)
    for step, score in enumerate(scores, start=1):
        trial_id = f"t{step % count}"
        scheduler, verdict = scheduler.on_trial_result(
            trials[trial_id], {"t": step * 10, "score": score}, trials
        )
        assert not (verdict.checkpoint and verdict.exploit)
        if verdict.exploit is not None:
            config = verdict.exploit.config
            assert verdict.exploit.donor_id != trial_id
            lr, n = config["lr"], config["n"]
            assert isinstance(lr, float)
            assert type(n) is int
            assert 0.0 <= lr <= 0.5
            assert 0 <= n <= 10
    assert from_msgpack(to_msgpack(scheduler), PB2) == scheduler
