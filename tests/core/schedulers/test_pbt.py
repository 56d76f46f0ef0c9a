"""Population Based Training: quantiles, exploit and explore, intervals,
determinism and replay.

Quantile sizes are worked out by hand from Ray's rule
`k = ceil(n * fraction)`, cut to `floor(n / 2)`. Explored values are
checked against what PBT may produce: the donor's value times 1.2 or 0.8,
a neighbouring category, or a resample from the space.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunecore.core import new_trial
from tunecore.core.rng import Rng, integer_below, random_float, seeded, uniform
from tunecore.core.schedulers.base import CONTINUE, TrialScheduler, Verdict
from tunecore.core.schedulers.pbt import (
    MutationSpec,
    PopulationBasedTraining,
    PopulationMember,
    explore,
    perturbed_tag,
    quantiles,
)
from tunecore.model import (
    CheckpointHistory,
    CheckpointRef,
    CheckpointStorage,
    Decision,
    InvalidFieldError,
    JsonDict,
    JsonValue,
    Mode,
    TrialSpec,
    TrialState,
    TrialStatus,
)
from tunecore.model.codec import from_msgpack, to_msgpack

RUNNING = TrialStatus.RUNNING
PENDING = TrialStatus.PENDING
PAUSED = TrialStatus.PAUSED
TERMINATED = TrialStatus.TERMINATED
CHECKPOINT = Verdict(decision=Decision.CONTINUE, checkpoint=True)


class UniformStub(msgspec.Struct, frozen=True, tag="uniform"):
    """Stands in for `tunecore.core.search.domains`' uniform domain."""

    low: float
    high: float

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        return uniform(rng, self.low, self.high)


class RandIntStub(msgspec.Struct, frozen=True, tag="randint"):
    low: int
    high: int

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        rng, offset = integer_below(rng, self.high - self.low)
        return rng, self.low + offset


def persistent(path: str) -> CheckpointRef:
    return CheckpointRef(storage=CheckpointStorage.PERSISTENT, path=path)


def make_trial(
    trial_id: str,
    *,
    config: JsonDict | None = None,
    tag: str = "",
    status: TrialStatus = RUNNING,
    checkpoints: tuple[CheckpointRef, ...] = (),
    memory: CheckpointRef | None = None,
) -> TrialState:
    spec = TrialSpec(
        trial_id=trial_id, trainable_name="train", config=config or {}, experiment_tag=tag
    )
    history = CheckpointHistory(
        persistent=checkpoints, memory=memory, memory_is_newest=memory is not None
    )
    return msgspec.structs.replace(new_trial(spec), status=status, checkpoints=history)


def pbt(**overrides: object) -> PopulationBasedTraining:
    settings_: dict[str, object] = {
        "time_attr": "t",
        "metric": "score",
        "mode": "max",
        "perturbation_interval": 10,
        "hyperparam_mutations": {"batch": [8, 16, 32, 64, 128]},
        "quantile_fraction": 0.25,
        "seed": 1,
    }
    settings_.update(overrides)
    return PopulationBasedTraining(**settings_)  # type: ignore[arg-type]


def add_all(
    scheduler: PopulationBasedTraining, trials: Mapping[str, TrialState]
) -> PopulationBasedTraining:
    for trial in trials.values():
        scheduler = scheduler.on_trial_add(trial)
    return scheduler


def report(
    scheduler: PopulationBasedTraining,
    trials: Mapping[str, TrialState],
    trial_id: str,
    time: float,
    score: float,
) -> tuple[PopulationBasedTraining, Verdict]:
    return scheduler.on_trial_result(trials[trial_id], {"t": time, "score": score}, trials)


def feed(
    scheduler: PopulationBasedTraining,
    trials: Mapping[str, TrialState],
    events: Iterable[tuple[str, float, float]],
) -> tuple[PopulationBasedTraining, list[Verdict]]:
    verdicts = []
    for trial_id, time, score in events:
        scheduler, verdict = report(scheduler, trials, trial_id, time, score)
        verdicts.append(verdict)
    return scheduler, verdicts


def ranked_population(count: int) -> dict[str, TrialState]:
    """Trials t0..t{count-1}, each with a persistent checkpoint and batch 32."""
    return {
        f"t{i}": make_trial(f"t{i}", config={"batch": 32}, checkpoints=(persistent(f"/c/t{i}"),))
        for i in range(count)
    }


# --- quantiles ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "fraction", "size"),
    [
        (4, 0.25, 1),  # ceil(1.0) = 1
        (5, 0.25, 2),  # ceil(1.25) = 2 <= 2.5
        (8, 0.25, 2),  # ceil(2.0) = 2
        (4, 0.5, 2),  # ceil(2.0) = 2
        (5, 0.5, 2),  # ceil(2.5) = 3 > 2.5 -> floor(2.5) = 2
        (8, 0.5, 4),  # ceil(4.0) = 4
        (1, 0.5, 0),  # a single trial has nobody to compare with
        (8, 0.0, 0),  # no exploitation (and, unlike Ray, no checkpoints)
    ],
)
def test_quantile_sizes(count: int, fraction: float, size: int) -> None:
    scores = [(f"t{i}", float(i)) for i in range(count)]
    lower, upper = quantiles(scores, fraction)
    assert lower == tuple(f"t{i}" for i in range(size))
    assert upper == tuple(f"t{i}" for i in range(count - size, count))


def test_quantiles_rank_by_score_not_by_order() -> None:
    scores = [("a", 3.0), ("b", -1.0), ("c", 7.0), ("d", 0.5)]
    assert quantiles(scores, 0.25) == (("b",), ("c",))
    # Ties keep the given order: "x" ranks below "y".
    assert quantiles([("x", 1.0), ("y", 1.0)], 0.5) == (("x",), ("y",))


@pytest.mark.parametrize(
    ("count", "fraction", "lower", "upper"),
    [
        (4, 0.25, {"t0"}, {"t3"}),
        (5, 0.25, {"t0", "t1"}, {"t3", "t4"}),
        (8, 0.25, {"t0", "t1"}, {"t6", "t7"}),
        (4, 0.5, {"t0", "t1"}, {"t2", "t3"}),
        (5, 0.5, {"t0", "t1"}, {"t3", "t4"}),
        (8, 0.5, {"t0", "t1", "t2", "t3"}, {"t4", "t5", "t6", "t7"}),
    ],
)
def test_verdicts_follow_quantile_membership(
    count: int, fraction: float, lower: set[str], upper: set[str]
) -> None:
    """Everyone reports score i at t=10, then again at t=20; at t=20 every
    member has a score, so the verdicts show the quantiles."""
    trials = ranked_population(count)
    scheduler = add_all(pbt(quantile_fraction=fraction), trials)
    scheduler, _ = feed(scheduler, trials, [(f"t{i}", 10, float(i)) for i in range(count)])
    scheduler, verdicts = feed(scheduler, trials, [(f"t{i}", 20, float(i)) for i in range(count)])
    for i, verdict in enumerate(verdicts):
        trial_id = f"t{i}"
        if trial_id in upper:
            assert verdict == CHECKPOINT
        elif trial_id in lower:
            assert verdict.exploit is not None
            assert verdict.exploit.donor_id in upper
            assert not verdict.checkpoint
        else:
            assert verdict == CONTINUE


def test_mode_min_ranks_the_lowest_metric_on_top() -> None:
    trials = ranked_population(4)
    scheduler = add_all(pbt(mode=Mode.MIN), trials)
    scheduler, _ = feed(scheduler, trials, [(f"t{i}", 10, float(i)) for i in range(4)])
    # After all four: t0 (loss 0) is the upper quantile, t3 the lower.
    scheduler, verdict = report(scheduler, trials, "t0", 20, 0.0)
    assert verdict == CHECKPOINT
    scheduler, verdict = report(scheduler, trials, "t3", 20, 3.0)
    assert verdict.exploit is not None
    assert verdict.exploit.donor_id == "t0"


# --- exploit and explore -----------------------------------------------------

DONOR_CONFIG: JsonDict = {
    "lr": 0.1,
    "units": 10,
    "batch": 32,
    "opt": {"momentum": 0.9, "nesterov": True},
    "fixed": "x",
}
MUTATIONS = {
    "lr": UniformStub(0.001, 1.0),
    "units": RandIntStub(1, 100),
    "batch": [8, 16, 32, 64, 128],
    "opt": {"momentum": [0.8, 0.9, 0.99]},
}


def exploit_setup(
    **overrides: object,
) -> tuple[PopulationBasedTraining, dict[str, TrialState], Verdict]:
    """`top` (score 9) and `low` (score 1), quantile 0.5: low exploits top."""
    trials = {
        "top": make_trial(
            "top",
            config=DONOR_CONFIG,
            tag="0_lr=0.1",
            checkpoints=(persistent("/c/top/1"), persistent("/c/top/2")),
            memory=CheckpointRef(storage=CheckpointStorage.MEMORY, path="mem"),
        ),
        "low": make_trial("low", config={**DONOR_CONFIG, "lr": 0.5}, tag="1_lr=0.5"),
    }
    settings_: dict[str, object] = {"hyperparam_mutations": MUTATIONS, "quantile_fraction": 0.5}
    settings_.update(overrides)
    scheduler = add_all(pbt(**settings_), trials)
    scheduler, verdicts = feed(scheduler, trials, [("top", 10, 9.0), ("low", 10, 1.0)])
    assert verdicts[0] == CONTINUE  # alone with a score: no quantiles yet
    return scheduler, trials, verdicts[1]


def test_lower_trial_exploits_the_donors_newest_persistent_checkpoint() -> None:
    scheduler, _, verdict = exploit_setup()
    assert verdict.decision is Decision.CONTINUE
    assert not verdict.checkpoint
    exploit = verdict.exploit
    assert exploit is not None
    assert exploit.donor_id == "top"
    # The newest persistent one, not the newer memory checkpoint.
    assert exploit.restore_from == persistent("/c/top/2")
    assert exploit.config["fixed"] == "x"
    assert scheduler.members["low"].config == exploit.config
    assert scheduler.num_perturbations == 1


@pytest.mark.parametrize("seed", range(20))
def test_perturbed_values_scale_by_a_factor_or_move_to_a_neighbour(seed: int) -> None:
    _, _, verdict = exploit_setup(resample_probability=0.0, seed=seed)
    assert verdict.exploit is not None
    config = verdict.exploit.config
    assert config["lr"] in (pytest.approx(0.12), pytest.approx(0.08))
    assert config["units"] in (12, 8)  # int(10 * 1.2), int(10 * 0.8)
    assert type(config["units"]) is int
    assert config["batch"] in (16, 64)  # neighbours of 32
    assert config["opt"] in (
        {"momentum": 0.8, "nesterov": True},
        {"momentum": 0.99, "nesterov": True},
    )
    assert config["fixed"] == "x"
    opt = config["opt"]
    assert isinstance(opt, dict)
    momentum = opt["momentum"]
    expected_tag = (
        f"1_lr=0.5@perturbed[batch={config['batch']},lr={config['lr']:.4f},"
        f"momentum={momentum:.4f},units={config['units']}]"
    )
    assert verdict.exploit.experiment_tag == expected_tag


def test_both_factors_and_both_neighbours_are_used() -> None:
    seen: dict[str, set[JsonValue]] = {"lr": set(), "units": set(), "batch": set()}
    for seed in range(40):
        _, _, verdict = exploit_setup(resample_probability=0.0, seed=seed)
        assert verdict.exploit is not None
        for key, values in seen.items():
            values.add(verdict.exploit.config[key])
    assert {round(v, 9) for v in seen["lr"] if isinstance(v, float)} == {0.12, 0.08}
    assert seen["units"] == {12, 8}
    assert seen["batch"] == {16, 64}


@pytest.mark.parametrize("seed", range(20))
def test_resampled_values_come_from_the_space(seed: int) -> None:
    _, _, verdict = exploit_setup(resample_probability=1.0, seed=seed)
    assert verdict.exploit is not None
    config = verdict.exploit.config
    assert isinstance(config["lr"], float)
    assert 0.001 <= config["lr"] < 1.0
    assert isinstance(config["units"], int)
    assert 1 <= config["units"] < 100
    assert config["batch"] in [8, 16, 32, 64, 128]
    assert config["opt"] in [{"momentum": m, "nesterov": True} for m in (0.8, 0.9, 0.99)]


def test_category_perturbation_is_clipped_at_the_ends() -> None:
    values = set()
    for seed in range(40):
        _, config = explore(
            {"b": 8},
            {"b": [8, 16, 32]},
            seeded(seed),
            resample_probability=0.0,
            perturbation_factors=(1.2, 0.8),
        )
        values.add(config["b"])
    assert values == {8, 16}  # left of 8 clips to 8


def test_values_outside_the_space_are_resampled() -> None:
    for seed in range(20):
        _, config = explore(
            {"b": 7, "s": "text"},
            {"b": [8, 16, 32], "s": UniformStub(0.0, 1.0), "missing": {"x": [1, 2]}},
            seeded(seed),
            resample_probability=0.0,
            perturbation_factors=(1.2, 0.8),
        )
        assert config["b"] in (8, 16, 32)  # 7 is not a category
        assert isinstance(config["s"], float)  # text cannot be scaled
        assert config["missing"] == {"x": 1} or config["missing"] == {"x": 2}


def test_explore_draws_in_the_documented_order() -> None:
    """One uniform draw for resampling, then one choice, per path."""
    categories: list[JsonValue] = [8, 16, 32, 64, 128]
    for seed in range(30):
        rng, draw = random_float(seeded(seed))
        if draw < 0.5:
            rng, index = integer_below(rng, 5)
            expected = categories[index]
        else:
            rng, step = integer_below(rng, 2)
            expected = 64 if step else 16
        after, config = explore(
            {"batch": 32},
            {"batch": categories},
            seeded(seed),
            resample_probability=0.5,
            perturbation_factors=(1.2, 0.8),
        )
        assert config == {"batch": expected}
        assert after == rng


def test_explore_leaves_the_donor_config_alone() -> None:
    donor: JsonDict = {"opt": {"momentum": 0.9}}
    explore(
        donor,
        {"opt": {"momentum": [0.8, 0.9]}},
        seeded(0),
        resample_probability=1.0,
        perturbation_factors=(2.0,),
    )
    assert donor == {"opt": {"momentum": 0.9}}


def test_perturbed_tag_follows_rays_format() -> None:
    """Sorted by path (batch < lr < name < opt/momentum), keyed by the last
    key, floats to 4 decimals, unsafe characters to '_'."""
    mutations: dict[str, MutationSpec] = {
        "lr": UniformStub(0, 1),
        "batch": [64],
        "opt": {"momentum": [0.99]},
        "name": ["a"],
    }
    config: JsonDict = {"lr": 0.12, "batch": 64, "opt": {"momentum": 0.99}, "name": "a/b c"}
    assert (
        perturbed_tag("0_lr=0.1", config, mutations)
        == "0_lr=0.1@perturbed[batch=64,lr=0.1200,name=a_b_c,momentum=0.9900]"
    )


def test_tags_are_built_from_the_original_tag_not_chained() -> None:
    trials = ranked_population(2)
    trials = {
        k: msgspec.structs.replace(t, spec=msgspec.structs.replace(t.spec, experiment_tag=k))
        for k, t in trials.items()
    }
    scheduler = add_all(pbt(quantile_fraction=0.5), trials)
    scheduler, verdicts = feed(
        scheduler, trials, [("t1", 10, 5.0), ("t0", 10, 1.0), ("t1", 20, 5.0), ("t0", 30, 1.0)]
    )
    first, second = verdicts[1].exploit, verdicts[3].exploit
    assert first is not None
    assert second is not None
    assert first.experiment_tag.startswith("t0@perturbed[batch=")
    assert second.experiment_tag.startswith("t0@perturbed[batch=")
    assert "@perturbed" not in second.experiment_tag.removeprefix("t0@perturbed")


def test_upper_trial_checkpoints() -> None:
    scheduler, trials, _ = exploit_setup()
    scheduler, verdict = report(scheduler, trials, "top", 20, 9.0)
    assert verdict == CHECKPOINT
    assert verdict.exploit is None
    assert scheduler.num_checkpoints == 1


@pytest.mark.parametrize(
    "history",
    [
        CheckpointHistory(),
        CheckpointHistory(
            memory=CheckpointRef(storage=CheckpointStorage.MEMORY, path="m"), memory_is_newest=True
        ),
    ],
)
def test_no_exploit_without_a_persistent_donor_checkpoint(history: CheckpointHistory) -> None:
    trials = ranked_population(2)
    trials["t1"] = msgspec.structs.replace(trials["t1"], checkpoints=history)
    scheduler = add_all(pbt(quantile_fraction=0.5), trials)
    scheduler, verdicts = feed(scheduler, trials, [("t1", 10, 5.0), ("t0", 10, 1.0)])
    assert verdicts == [CONTINUE, CONTINUE]
    assert scheduler.num_perturbations == 0
    assert scheduler.members["t0"].config == {"batch": 32}
    # The donor was still drawn, so the generator moved on.
    assert scheduler.rng is not None


def test_burn_in_period_is_respected() -> None:
    trials = ranked_population(2)
    scheduler = add_all(pbt(quantile_fraction=0.5, burn_in_period=25), trials)
    events = [("t1", 10, 5.0), ("t0", 10, 1.0), ("t1", 20, 5.0), ("t0", 20, 1.0)]
    scheduler, verdicts = feed(scheduler, trials, events)
    assert verdicts == [CONTINUE] * 4
    assert scheduler.members["t0"].last_score is None  # never perturbed
    scheduler, verdicts = feed(scheduler, trials, [("t1", 30, 5.0), ("t0", 30, 1.0)])
    assert verdicts[0] == CONTINUE  # t1 is alone with a score
    assert verdicts[1].exploit is not None


def test_perturbation_interval_is_respected() -> None:
    trials = ranked_population(2)
    scheduler = add_all(pbt(quantile_fraction=0.5), trials)
    scheduler, verdicts = feed(
        scheduler,
        trials,
        [("t0", 10, 1.0), ("t1", 10, 5.0), ("t1", 15, 5.0), ("t1", 19.5, 5.0), ("t1", 20, 5.0)],
    )
    # t1 at 10 is upper; at 15 and 19.5 less than 10 has passed; at 20 again.
    assert verdicts == [CONTINUE, CHECKPOINT, CONTINUE, CONTINUE, CHECKPOINT]
    assert scheduler.members["t1"].last_perturbation_time == 20


def test_exploiting_takes_over_the_donors_perturbation_time() -> None:
    trials = ranked_population(2)
    scheduler = add_all(pbt(quantile_fraction=0.5), trials)
    scheduler, verdicts = feed(
        scheduler, trials, [("t1", 10, 5.0), ("t1", 20, 5.0), ("t0", 35, 1.0)]
    )
    assert verdicts[2].exploit is not None
    assert scheduler.members["t0"].last_perturbation_time == 20
    # Restored to the donor's time 20, t0 is due again at 30, not 45.
    scheduler, verdict = report(scheduler, trials, "t0", 30, 1.0)
    assert verdict.exploit is not None


def test_finished_trials_leave_the_ranking() -> None:
    trials = ranked_population(3)
    scheduler = add_all(pbt(quantile_fraction=0.5), trials)
    scheduler, _ = feed(scheduler, trials, [("t0", 10, 0.0), ("t2", 10, 2.0)])
    scheduler = scheduler.on_trial_complete(trials["t2"], {"t": 10, "score": 2.0})
    # Only t0 and t1 rank now: t1 (score 1) is the upper quantile.
    scheduler, verdict = report(scheduler, trials, "t1", 10, 1.0)
    assert verdict == CHECKPOINT
    trials["t0"] = make_trial("t0", status=TrialStatus.ERROR)
    scheduler, verdict = report(scheduler, trials, "t1", 20, 1.0)
    assert verdict == CONTINUE  # alone: t0 errored (by its status), t2 completed


def test_results_without_numbers_continue() -> None:
    trials = ranked_population(1)
    scheduler = add_all(pbt(), trials)
    results: list[JsonDict] = [
        {"score": 1.0},
        {"t": 10},
        {"t": 10, "score": "x"},
        {"t": 10, "score": math.nan},
    ]
    for result in results:
        after, verdict = scheduler.on_trial_result(trials["t0"], result, trials)
        assert verdict == CONTINUE
        assert after == scheduler


# --- determinism and replay --------------------------------------------------

SCHEDULE = [
    (trial_id, float(time), float(score))
    for time in (10, 20, 30, 40)
    for trial_id, score in (("t0", 1 + time), ("t1", 5), ("t2", 9 - time / 10), ("t3", 3))
]


def domain_pbt(seed: int) -> PopulationBasedTraining:
    return pbt(
        seed=seed,
        quantile_fraction=0.5,
        resample_probability=0.3,
        hyperparam_mutations={"lr": UniformStub(0.0, 1.0), "batch": [8, 16, 32, 64, 128]},
    )


def domain_population() -> dict[str, TrialState]:
    return {
        f"t{i}": make_trial(
            f"t{i}", config={"lr": 0.1 * (i + 1), "batch": 32}, checkpoints=(persistent(f"/c{i}"),)
        )
        for i in range(4)
    }


def test_same_seed_same_decisions() -> None:
    trials = domain_population()
    first, first_verdicts = feed(add_all(domain_pbt(7), trials), trials, SCHEDULE)
    second, second_verdicts = feed(add_all(domain_pbt(7), trials), trials, SCHEDULE)
    assert first_verdicts == second_verdicts
    assert first == second
    assert any(v.exploit is not None for v in first_verdicts)


def test_msgpack_round_trip_then_continue() -> None:
    trials = domain_population()
    half = len(SCHEDULE) // 2
    live, _ = feed(add_all(domain_pbt(3), trials), trials, SCHEDULE[:half])
    data = to_msgpack(live)
    decoded = from_msgpack(data, PopulationBasedTraining[UniformStub | RandIntStub])
    assert decoded == live
    assert isinstance(decoded.hyperparam_mutations["lr"], UniformStub)
    live, live_verdicts = feed(live, trials, SCHEDULE[half:])
    replayed, replayed_verdicts = feed(decoded, trials, SCHEDULE[half:])
    assert replayed_verdicts == live_verdicts
    assert replayed == live
    assert any(v.exploit is not None for v in live_verdicts)


def test_decoding_domains_requires_naming_their_type() -> None:
    data = to_msgpack(domain_pbt(0))
    with pytest.raises(msgspec.ValidationError, match="PopulationBasedTraining\\[Domain\\]"):
        from_msgpack(data, PopulationBasedTraining)
    categories_only = pbt(hyperparam_mutations={"a": {"b": [1, 2]}})
    decoded = from_msgpack(to_msgpack(categories_only), PopulationBasedTraining)
    assert decoded == categories_only
    assert decoded.hyperparam_mutations == {"a/b": [1, 2]}


# --- configuration -----------------------------------------------------------


def test_nested_mutations_are_stored_by_path() -> None:
    scheduler = pbt(hyperparam_mutations={"opt": {"momentum": (0.8, 0.9)}, "lr": [1, 2]})
    assert scheduler.hyperparam_mutations == {"opt/momentum": [0.8, 0.9], "lr": [1, 2]}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("quantile_fraction", 0.6),
        ("quantile_fraction", -0.1),
        ("resample_probability", 1.5),
        ("perturbation_interval", 0),
        ("perturbation_interval", -5),
        ("burn_in_period", -1),
        ("perturbation_factors", ()),
        ("perturbation_factors", (1.2, math.nan)),
        ("mode", "best"),
        ("metric", ""),
        ("seed", 1.5),
        ("hyperparam_mutations", {}),
    ],
)
def test_invalid_settings_name_field_and_value(field: str, value: object) -> None:
    with pytest.raises(InvalidFieldError) as error:
        pbt(**{field: value})
    assert error.value.field == f"PopulationBasedTraining.{field}"
    assert error.value.value == value


@pytest.mark.parametrize(
    ("mutations", "field"),
    [
        ({"lr": lambda x: x}, "PopulationBasedTraining.hyperparam_mutations['lr']"),
        ({"lr": []}, "PopulationBasedTraining.hyperparam_mutations['lr']"),
        ({"lr": "0.1"}, "PopulationBasedTraining.hyperparam_mutations['lr']"),
        ({"opt": {}}, "PopulationBasedTraining.hyperparam_mutations['opt']"),
        ({"a": {"b": [1]}, "a/b": [2]}, "PopulationBasedTraining.hyperparam_mutations['a/b']"),
    ],
)
def test_invalid_mutation_specs_are_named_by_path(mutations: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidFieldError) as error:
        pbt(hyperparam_mutations=mutations)
    assert error.value.field == field
    if callable(mutations.get("lr")):
        assert "a function of no argument" in str(error.value)


def test_defaults_are_rays() -> None:
    scheduler = PopulationBasedTraining(hyperparam_mutations={"a": [1]})
    assert scheduler.time_attr == "time_total_s"
    assert (scheduler.perturbation_interval, scheduler.burn_in_period) == (60.0, 0.0)
    assert (scheduler.quantile_fraction, scheduler.resample_probability) == (0.25, 0.25)
    assert scheduler.perturbation_factors == (1.2, 0.8)


def test_with_objective_fills_only_what_is_missing() -> None:
    scheduler = PopulationBasedTraining(mode=Mode.MIN, hyperparam_mutations={"a": [1]})
    filled = scheduler.with_objective("loss", Mode.MAX)
    assert (filled.metric, filled.mode) == ("loss", Mode.MIN)
    with pytest.raises(InvalidFieldError) as error:
        PopulationBasedTraining(hyperparam_mutations={"a": [1]}).on_trial_add(make_trial("x"))
    assert error.value.field == "PopulationBasedTraining.metric"


def test_add_remembers_tag_and_config() -> None:
    trial = make_trial("x", config={"batch": 16}, tag="3_batch=16")
    scheduler = pbt().on_trial_add(trial)
    assert scheduler.members == {
        "x": PopulationMember(original_tag="3_batch=16", config={"batch": 16})
    }


def test_choose_trial_to_run_is_fifo_pending_first() -> None:
    scheduler = pbt()
    p1, p2, q1 = make_trial("p1"), make_trial("p2"), make_trial("q1")
    assert scheduler.choose_trial_to_run([p1, p2], [q1], lambda t: True) == "p1"
    assert scheduler.choose_trial_to_run([p1, p2], [q1], lambda t: t.trial_id == "q1") == "q1"
    assert scheduler.choose_trial_to_run([p1], [q1], lambda t: False) is None


def test_choose_trial_to_run_is_fifo_when_not_taking_turns() -> None:
    """A log written before `take_turns` existed decodes with None: it
    chooses as it did then, whatever the members' training."""
    scheduler = pbt(take_turns=None)
    trials = {"p1": make_trial("p1", status=PENDING), "q1": make_trial("q1", status=PAUSED)}
    scheduler = add_all(scheduler, trials)
    assert scheduler.choose_trial_to_run([trials["p1"]], [trials["q1"]], lambda t: True) == "p1"


# --- taking turns (Ray's asynchronous PBT with more trials than fit) --------


def turns_population() -> tuple[PopulationBasedTraining, dict[str, TrialState]]:
    """Four trials with checkpoints: a, b, c RUNNING, d PENDING (waiting)."""
    trials = ranked_population(4)
    trials["t3"] = msgspec.structs.replace(trials["t3"], status=PENDING)
    return add_all(pbt(quantile_fraction=0.25).with_objective(None, None), trials), trials


def test_a_new_experiment_takes_turns_and_an_old_log_does_not() -> None:
    assert pbt().take_turns is None  # as built, or decoded from an old log
    assert pbt().with_objective(None, None).take_turns is True  # a new experiment
    assert pbt(take_turns=False).with_objective(None, None).take_turns is False  # as asked
    decoded = from_msgpack(to_msgpack(pbt()), PopulationBasedTraining)
    assert decoded.take_turns is None


def test_a_perturbed_trial_pauses_when_another_waits() -> None:
    scheduler, trials = turns_population()
    scheduler, verdicts = feed(scheduler, trials, [("t0", 10, 1.0), ("t1", 10, 5.0)])
    # t0 alone had no quantiles; t1 is in the upper quantile of two: a
    # persistent checkpoint, then the pause, since t3 waits.
    assert verdicts[0] == Verdict(decision=Decision.PAUSE)
    assert verdicts[1] == Verdict(decision=Decision.PAUSE, checkpoint=True)
    # Between perturbations nothing pauses.
    _, verdict = report(scheduler, trials, "t1", 15, 5.0)
    assert verdict == CONTINUE


def test_an_exploited_trial_pauses_with_its_exploit_when_another_waits() -> None:
    scheduler, trials = turns_population()
    scheduler, verdicts = feed(
        scheduler, trials, [("t1", 10, 5.0), ("t2", 10, 9.0), ("t0", 10, 1.0)]
    )
    verdict = verdicts[2]
    assert verdict.decision is Decision.PAUSE
    assert verdict.exploit is not None
    assert verdict.exploit.donor_id == "t2"


def test_nobody_waiting_means_no_pause_even_when_taking_turns() -> None:
    scheduler, trials = turns_population()
    trials["t3"] = msgspec.structs.replace(trials["t3"], status=TERMINATED)
    _, verdicts = feed(scheduler, trials, [("t0", 10, 1.0), ("t1", 10, 5.0), ("t2", 10, 9.0)])
    assert [v.decision for v in verdicts] == [Decision.CONTINUE] * 3


def test_the_reporting_trial_itself_never_counts_as_waiting() -> None:
    """Only others make a trial pause: a trial whose state says PENDING (as
    a driver may pass it) is not waiting for itself."""
    trial = make_trial("solo", status=PENDING)
    scheduler = pbt().with_objective(None, None).on_trial_add(trial)
    _, verdict = report(scheduler, {"solo": trial}, "solo", 10, 1.0)
    assert verdict == CONTINUE


def test_taking_turns_starts_the_least_trained_waiting_trial() -> None:
    scheduler, trials = turns_population()
    scheduler, _ = feed(scheduler, trials, [("t0", 10, 1.0), ("t1", 20, 5.0)])
    paused = [msgspec.structs.replace(trials[t], status=PAUSED) for t in ("t1", "t0")]
    pending = [trials["t3"]]
    # t3 has not trained at all, t0 up to 10, t1 up to 20.
    assert scheduler.choose_trial_to_run(pending, paused, lambda t: True) == "t3"
    assert scheduler.choose_trial_to_run([], paused, lambda t: True) == "t0"
    # What does not fit, or still has a save in flight, waits.
    assert scheduler.choose_trial_to_run([], paused, lambda t: t.trial_id == "t1") == "t1"
    saving = msgspec.structs.replace(paused[1], saving_to=(CheckpointStorage.MEMORY,))
    assert scheduler.choose_trial_to_run([], [paused[0], saving], lambda t: True) == "t1"
    assert scheduler.choose_trial_to_run([], [saving], lambda t: True) is None


def test_ties_in_training_go_to_the_trial_added_first() -> None:
    scheduler, trials = turns_population()
    waiting = [msgspec.structs.replace(trials[t], status=PENDING) for t in ("t2", "t0", "t1")]
    assert scheduler.choose_trial_to_run(waiting, [], lambda t: True) == "t0"


def test_is_a_trial_scheduler() -> None:
    scheduler: TrialScheduler = pbt()
    assert scheduler.debug_string() == "PopulationBasedTraining: 0 checkpoints, 0 perturbs"


# --- property ----------------------------------------------------------------


@st.composite
def populations(draw: st.DrawFn) -> tuple[int, float, Mode, list[tuple[int, float | None]]]:
    """A population size, a quantile fraction, a mode and a sequence of
    events: (trial index, score) reports and (trial index, None) completions.
    All scores are distinct, so the quantiles are unambiguous."""
    count = draw(st.integers(2, 9))
    fraction = draw(st.sampled_from([0.1, 0.2, 0.25, 1 / 3, 0.4, 0.5]))
    mode = draw(st.sampled_from(Mode))
    scores = draw(
        st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40, unique=True)
    )
    events: list[tuple[int, float | None]] = []
    for score in scores:
        index = draw(st.integers(0, count - 1))
        events.append((index, None if draw(st.integers(0, 9)) == 0 else score))
    return count, fraction, mode, events


@given(populations(), st.integers(0, 2**32))
@settings(max_examples=200, deadline=None)
def test_exploiters_are_lower_and_donors_upper(
    case: tuple[int, float, Mode, list[tuple[int, float | None]]], seed: int
) -> None:
    count, fraction, mode, events = case
    trials = ranked_population(count)
    scheduler = add_all(
        pbt(perturbation_interval=1, quantile_fraction=fraction, mode=mode, seed=seed), trials
    )
    scores: dict[str, float] = {}  # the model: score at each live trial's last report
    for step, (index, score) in enumerate(events, start=1):
        trial_id = f"t{index}"
        if trials[trial_id].is_finished:
            continue
        if score is None:
            scheduler = scheduler.on_trial_complete(trials[trial_id], {})
            trials[trial_id] = msgspec.structs.replace(
                trials[trial_id], status=TrialStatus.TERMINATED
            )
            scores.pop(trial_id, None)
            continue
        # Each report is 1000 time units after the previous one, always past
        # the interval even after inheriting a donor's perturbation time.
        scheduler, verdict = report(scheduler, trials, trial_id, step * 1000, score)
        scores[trial_id] = score if mode is Mode.MAX else -score
        ranked = sorted(scores, key=scores.__getitem__)
        size = min(math.ceil(len(ranked) * fraction), len(ranked) // 2)
        lower = set(ranked[:size]) if len(ranked) > 1 else set()
        upper = set(ranked[len(ranked) - size :]) if len(ranked) > 1 and size else set()
        assert not lower & upper
        if verdict.exploit is not None:
            assert trial_id in lower
            assert verdict.exploit.donor_id in upper
            assert verdict.exploit.restore_from == persistent(f"/c/{verdict.exploit.donor_id}")
        assert verdict.checkpoint == (trial_id in upper)
        assert (verdict.exploit is not None) == (trial_id in lower)


def test_require_attrs_holds_results_to_time_attr_then_metric() -> None:
    """Ray's order and words; a new experiment's PBT (`with_objective`) checks."""
    policy = pbt().with_objective(None, None)
    assert policy.result_problem({"t": 1, "score": 0.5}) is None
    cases: list[tuple[JsonDict, str]] = [
        ({"score": 0.5}, "time_attr t"),
        ({}, "time_attr t"),
        ({"t": 1}, "metric score"),
    ]
    for result, missing in cases:
        problem = policy.result_problem(result)
        assert problem is not None
        assert problem.startswith(f"Cannot find {missing} in trial result {result}. ")
        assert problem.endswith("by setting PBT(require_attrs=False)")
    assert pbt(require_attrs=False).with_objective(None, None).result_problem({}) is None


def test_a_pbt_logged_before_the_check_lets_such_results_pass() -> None:
    """`checks_attrs` None: a log from before replays as it ran."""
    assert pbt().checks_attrs is None
    assert pbt().result_problem({}) is None
    decoded = from_msgpack(to_msgpack(pbt()), PopulationBasedTraining)
    assert decoded.result_problem({}) is None
