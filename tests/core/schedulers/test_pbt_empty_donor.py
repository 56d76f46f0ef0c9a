"""PBT and PB2 clone no donor whose newest persistent checkpoint is empty
(`CheckpointRef.empty`: a function trainable that never reported a
checkpoint saves tunecore's null checkpoint). Ray's save of such a trial
resolves to no checkpoint and its PBT skips the exploit ("[pbt]: no
checkpoint for trial ... Skip exploit"): the trial goes on unchanged. And
the field is unset unless True, so a checkpoint with state, and every log
written before the field, encodes to the bytes it had."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from tests.core.schedulers.test_pbt import add_all, feed, make_trial, pbt, persistent
from tunecore.core.checkpoints import donor_checkpoint, newest_with_state
from tunecore.core.schedulers.base import Verdict
from tunecore.core.schedulers.pb2 import PB2
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.model import (
    CheckpointHistory,
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    Decision,
    InvalidFieldError,
    JsonDict,
    TrialState,
    TrialStatus,
)
from tunecore.model.codec import from_msgpack, to_msgpack


def empty(path: str) -> CheckpointRef:
    return CheckpointRef(storage=CheckpointStorage.PERSISTENT, path=path, empty=True)


def with_history(trial: TrialState, *checkpoints: CheckpointRef) -> TrialState:
    return msgspec.structs.replace(trial, checkpoints=CheckpointHistory(persistent=checkpoints))


# --- the field ---------------------------------------------------------------


class CheckpointRefBefore(msgspec.Struct, frozen=True, kw_only=True):
    """`CheckpointRef` as it was before `empty` existed."""

    storage: CheckpointStorage
    path: str
    training_iteration: int = 0
    metrics: JsonDict = {}


class CheckpointSavedBefore(msgspec.Struct, frozen=True, kw_only=True, tag="CheckpointSaved"):
    at: float
    trial_id: str
    checkpoint: CheckpointRefBefore


@settings(deadline=None)  # a loaded machine is slow, not wrong
@given(
    iteration=st.integers(min_value=0, max_value=10**6),
    score=st.floats(allow_nan=False, allow_infinity=False),
    storage=st.sampled_from(CheckpointStorage),
)
def test_a_checkpoint_with_state_encodes_as_before_the_field(
    iteration: int, score: float, storage: CheckpointStorage
) -> None:
    metrics: JsonDict = {"score": score}
    before = CheckpointSavedBefore(
        at=1.0,
        trial_id="t0",
        checkpoint=CheckpointRefBefore(
            storage=storage, path="/c/1", training_iteration=iteration, metrics=metrics
        ),
    )
    now = CheckpointSaved(
        at=1.0,
        trial_id="t0",
        checkpoint=CheckpointRef(
            storage=storage, path="/c/1", training_iteration=iteration, metrics=metrics
        ),
    )
    old_bytes = msgspec.msgpack.encode(before)
    assert to_msgpack(now) == old_bytes
    decoded = from_msgpack(old_bytes, CheckpointSaved)  # an old log's record
    assert decoded == now
    assert decoded.checkpoint.holds_state  # an old log's null checkpoint stays a donor


def test_an_empty_checkpoint_round_trips_and_false_is_unset() -> None:
    ref = empty("/c/1")
    assert not ref.holds_state
    assert from_msgpack(to_msgpack(ref), CheckpointRef) == ref
    plain = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c/1", empty=False)
    assert plain.empty is UNSET
    assert plain == CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c/1")


def test_a_non_boolean_empty_is_named() -> None:
    with pytest.raises(InvalidFieldError, match=r"CheckpointRef\.empty"):
        CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c", empty="yes")  # type: ignore[arg-type]


def test_the_donor_checkpoint_is_the_newest_unless_it_is_empty() -> None:
    assert donor_checkpoint(CheckpointHistory()) is None
    only_empty = CheckpointHistory(persistent=(empty("/c/1"),))
    assert donor_checkpoint(only_empty) is None
    refilled = CheckpointHistory(persistent=(empty("/c/1"), persistent("/c/2")))
    assert donor_checkpoint(refilled) == persistent("/c/2")
    # A function restored fresh from a null checkpoint saves null again:
    # as Ray's save of it, that is no checkpoint, whatever came before.
    emptied = CheckpointHistory(persistent=(persistent("/c/1"), empty("/c/2")))
    assert donor_checkpoint(emptied) is None
    # What users see as the trial's checkpoint is the newest with state.
    assert newest_with_state(emptied) == persistent("/c/1")
    assert newest_with_state(only_empty) is None


# --- asynchronous PBT and PB2 ----------------------------------------------


def two_trials(donor: TrialState) -> dict[str, TrialState]:
    return {"top": donor, "low": make_trial("low", config={"batch": 8, "lr": 0.5})}


def top(*checkpoints: CheckpointRef) -> TrialState:
    return with_history(make_trial("top", config={"batch": 32, "lr": 0.1}), *checkpoints)


@settings(deadline=None)
@given(
    population=st.integers(min_value=2, max_value=8),
    scores=st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=16, max_size=16),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_an_empty_donor_is_skipped_exactly_as_a_donor_without_a_checkpoint(
    population: int, scores: list[float], seed: int
) -> None:
    """Any population, any scores: with every donor's newest checkpoint
    empty, PBT decides and keeps exactly what it does when no donor has
    one (no exploit, configs kept, the same draws), and checkpoints the
    same upper trials."""
    ids = [f"t{i}" for i in range(population)]

    def run(
        checkpoints: tuple[CheckpointRef, ...],
    ) -> tuple[PopulationBasedTraining, list[Verdict]]:
        trials = {
            trial_id: with_history(make_trial(trial_id, config={"batch": 32}), *checkpoints)
            for trial_id in ids
        }
        scheduler = add_all(pbt(quantile_fraction=0.5, seed=seed), trials)
        events = [
            (ids[i % population], 10.0 * (1 + i // population), s) for i, s in enumerate(scores)
        ]
        return feed(scheduler, trials, events)

    skipped, skipped_verdicts = run((persistent("/c/old"), empty("/c/new")))
    missing, missing_verdicts = run(())
    assert skipped == missing
    assert skipped_verdicts == missing_verdicts
    assert all(v.exploit is None for v in skipped_verdicts)
    assert skipped.num_perturbations == 0
    assert {m.config["batch"] for m in skipped.members.values()} == {32}


def test_pbt_skips_an_empty_donor_and_the_trial_goes_on_unchanged() -> None:
    trials = two_trials(top(empty("/c/top/1")))
    scheduler = add_all(pbt(quantile_fraction=0.5, hyperparam_mutations={"lr": [0.1, 0.5]}), trials)
    scheduler, verdicts = feed(scheduler, trials, [("top", 10, 9.0), ("low", 10, 1.0)])
    assert [v.decision for v in verdicts] == [Decision.CONTINUE, Decision.CONTINUE]
    assert verdicts[1].exploit is None
    assert scheduler.members["low"].config == {"batch": 8, "lr": 0.5}
    assert scheduler.members["low"].last_perturbation_time == 10.0  # its own, not taken over
    assert scheduler.debug_string() == "PopulationBasedTraining: 0 checkpoints, 0 perturbs"
    # the donor, once it holds state, is cloned as before
    trials["top"] = top(empty("/c/top/1"), persistent("/c/top/2"))
    scheduler, verdict = scheduler.on_trial_result(trials["low"], {"t": 20, "score": 1.0}, trials)
    assert verdict.exploit is not None
    assert verdict.exploit.restore_from == persistent("/c/top/2")


def test_pb2_skips_an_empty_donor() -> None:
    trials = two_trials(top(empty("/c/top/1")))
    scheduler = PB2(
        time_attr="t",
        metric="score",
        mode="max",
        perturbation_interval=10,
        hyperparam_bounds={"lr": [0.0, 1.0]},
        quantile_fraction=0.5,
        seed=1,
    )
    for trial in trials.values():
        scheduler = scheduler.on_trial_add(trial)
    events = [("top", 10, 9.0), ("low", 10, 1.0), ("top", 20, 9.5), ("low", 20, 1.5)]
    for trial_id, time, score in events:
        scheduler, verdict = scheduler.on_trial_result(
            trials[trial_id], {"t": time, "score": score}, trials
        )
        assert verdict.exploit is None
    assert scheduler.members["low"].config == {"batch": 8, "lr": 0.5}
    assert scheduler.debug_string().startswith("PB2: 1 checkpoints, 0 perturbs")


# --- synchronous PBT -------------------------------------------------------


@pytest.mark.parametrize(("donor_empty", "exploited"), [(True, False), (False, True)])
def test_a_planned_exploit_of_an_empty_donor_is_given_up(
    donor_empty: bool, exploited: bool
) -> None:
    trials = two_trials(top())
    scheduler = add_all(pbt(quantile_fraction=0.5, synch=True), trials)
    scheduler, verdicts = feed(scheduler, trials, [("top", 10, 9.0), ("low", 10, 1.0)])
    assert [v.decision for v in verdicts] == [Decision.PAUSE, Decision.PAUSE]
    assert "low" in scheduler.plans
    saved = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c/top", empty=donor_empty)
    paused = {
        trial_id: msgspec.structs.replace(trial, status=TrialStatus.PAUSED)
        for trial_id, trial in {**trials, "top": with_history(trials["top"], saved)}.items()
    }
    ((trial_id, exploit),) = scheduler.waiting_exploits(paused)
    assert trial_id == "low"
    assert (exploit is not None) is exploited
    scheduler = scheduler.on_waiting_exploit("low", exploit)
    assert not scheduler.plans
    if not exploited:  # the trial keeps its config
        assert scheduler.members["low"].config == {"batch": 8, "lr": 0.5}
