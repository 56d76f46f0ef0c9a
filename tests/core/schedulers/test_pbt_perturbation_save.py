"""PBT and PB2 clone the checkpoint a donor saved at its own last
perturbation, as Ray Tune 2.60's PBT does (`_checkpoint_or_exploit`): a
trial in the upper quantile at its perturbation is asked to save, and that
save is what it donates until its next perturbation; a trial that was not
a top trial then donates nothing. Ray's save of a function trainable is
the checkpoint reported with its last result (`FunctionTrainable.
save_checkpoint` returns `_last_training_result`), so a function that
checkpoints at other steps than its perturbation is skipped ("[pbt]: no
checkpoint for trial ... Skip exploit"); a class trainable's save always
holds its state. Policies logged before `clones_perturbation_save`
existed clone the donor's newest persistent checkpoint, as they ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.schedulers.test_pbt import add_all, feed, make_trial, pbt
from tunecore.core.checkpoints import donor_checkpoint, perturbation_checkpoint
from tunecore.core.schedulers.base import Verdict
from tunecore.core.schedulers.pb2 import PB2
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.model import (
    CheckpointHistory,
    CheckpointRef,
    CheckpointStorage,
    Decision,
    InvalidFieldError,
    JsonDict,
    Mode,
    TrialState,
    TrialStatus,
)
from tunecore.model.codec import from_msgpack, to_msgpack

INTERVAL = 3.0
CONFIG: JsonDict = {"batch": 32}


def saved(
    trial_id: str, iteration: int, *, earlier: bool = False, empty: bool = False
) -> CheckpointRef:
    return CheckpointRef(
        storage=CheckpointStorage.PERSISTENT,
        path=f"/c/{trial_id}/{iteration}{'e' if earlier else ''}{'0' if empty else ''}",
        training_iteration=iteration,
        earlier=earlier,
        empty=empty,
    )


@dataclass
class Worker:
    """A trainable as the shell saves it: a class trainable saves its state
    of the last result; a function its last reported checkpoint, marked
    `earlier` when the last result carried none, or a null one."""

    trial_id: str
    function: bool
    iteration: int = 0
    reported: int | None = None  # the iteration of its last reported checkpoint
    history: tuple[CheckpointRef, ...] = ()
    last_carried: bool = False

    def result(self, reports_checkpoint: bool) -> None:
        self.iteration += 1
        self.last_carried = reports_checkpoint or not self.function
        if self.function and reports_checkpoint:
            self.reported = self.iteration
            self.history += (saved(self.trial_id, self.iteration),)  # due: the loop saves it

    def save(self) -> None:
        if not self.function or self.last_carried:
            ref = saved(self.trial_id, self.iteration)
        elif self.reported is None:
            ref = saved(self.trial_id, self.iteration, empty=True)
        else:
            ref = saved(self.trial_id, self.iteration, earlier=True)
        self.history = (*(c for c in self.history if c.path != ref.path), ref)

    def state(self, config: JsonDict) -> TrialState:
        trial = make_trial(self.trial_id, config=config)
        return msgspec.structs.replace(
            trial, checkpoints=CheckpointHistory(persistent=self.history)
        )


Population = dict[str, Worker]


def creation(trial_id: str) -> int:
    """The trial's place in creation order (`t0`, `t1`, ...)."""
    return int(trial_id[1:])


def report(
    scheduler: PopulationBasedTraining,
    workers: Population,
    trials: dict[str, TrialState],
    trial_id: str,
    *,
    score: float,
    reports: bool,
) -> tuple[PopulationBasedTraining, Verdict]:
    """`trial_id`'s next result (one time unit on), a checkpoint with it
    when `reports`; saved when PBT asks for it, as the shell does."""
    worker = workers[trial_id]
    worker.result(reports)
    trials[trial_id] = worker.state(CONFIG)
    result: JsonDict = {"t": float(worker.iteration), "score": score}
    result["training_iteration"] = worker.iteration
    scheduler, verdict = scheduler.on_trial_result(trials[trial_id], result, trials)
    if verdict.checkpoint:
        worker.save()
        trials[trial_id] = worker.state(CONFIG)
    return scheduler, verdict


@dataclass
class RayPBT:
    """Ray 2.60's asynchronous PBT, reduced to what decides the donor's
    checkpoint: each member's score and time at its last perturbation and
    `last_checkpoint` (the iteration of the save it was asked for then,
    None when that save resolves to no checkpoint or it was no top trial).
    One donor per perturbation (`quantile_fraction` gives one upper trial
    for the populations used), so no draw decides it."""

    score: dict[str, float] = field(default_factory=dict)
    perturbed: dict[str, float] = field(default_factory=dict)
    last_checkpoint: dict[str, int | None] = field(default_factory=dict)

    def on_result(self, worker: Worker, time: float, score: float) -> tuple[str, int] | bool | None:
        """False: not perturbed; None: perturbed, no exploit; else the
        donor and the iteration of the checkpoint cloned."""
        trial_id = worker.trial_id
        if time - self.perturbed.get(trial_id, 0.0) < INTERVAL:
            return False
        self.score[trial_id] = score
        self.perturbed[trial_id] = time
        # Ray ranks the members its `_trial_state` holds, in the order the
        # trials were added (their creation), by score; the sort is stable
        ranked = sorted(sorted(self.score, key=creation), key=lambda t: self.score[t])
        k = min(math.ceil(len(ranked) * 0.3), len(ranked) // 2) if len(ranked) > 1 else 0
        lower, upper = ranked[:k], ranked[len(ranked) - k :] if k else []
        if trial_id in upper:
            self.last_checkpoint[trial_id] = worker.iteration if worker.last_carried else None
        else:
            self.last_checkpoint[trial_id] = None
        if trial_id not in lower:
            return None
        (donor,) = upper
        at = self.last_checkpoint.get(donor)
        if at is None:
            return None
        self.perturbed[trial_id] = self.perturbed[donor]
        return donor, at


events_strategy = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2),  # which trial reports
        # its score; often a tie, which Ray breaks by the trials' creation order
        st.sampled_from([0.0, 1.0]) | st.floats(min_value=0.0, max_value=1e3, allow_nan=False),
        st.booleans(),  # whether a function reports a checkpoint with it
    ),
    min_size=1,
    max_size=40,
)


@settings(deadline=None, max_examples=200)  # a loaded machine is slow, not wrong
@given(
    population=st.integers(min_value=2, max_value=3),
    functions=st.lists(st.booleans(), min_size=3, max_size=3),
    events=events_strategy,
)
def test_the_donor_checkpoint_is_the_one_saved_at_its_perturbation_as_rays(
    population: int, functions: list[bool], events: list[tuple[int, float, bool]]
) -> None:
    """Any mix of function and class trainables, any scores and any steps
    at which the functions checkpoint: every exploit PBT makes clones the
    donor Ray's PBT clones, from the save of the donor's result at its
    last perturbation, and PBT skips exactly the exploits Ray skips."""
    workers = {f"t{i}": Worker(f"t{i}", functions[i]) for i in range(population)}
    trials = {trial_id: w.state(CONFIG) for trial_id, w in workers.items()}
    scheduler = add_all(
        pbt(quantile_fraction=0.3, perturbation_interval=INTERVAL, clones_perturbation_save=True),
        trials,
    )
    ray = RayPBT()
    for index, score, reports in events:
        worker = workers[f"t{index % population}"]
        scheduler, verdict = report(
            scheduler, workers, trials, worker.trial_id, score=score, reports=reports
        )
        expected = ray.on_result(worker, float(worker.iteration), score)
        if expected is False or expected is None:
            assert verdict.exploit is None
            continue
        assert isinstance(expected, tuple)
        donor, at = expected
        assert verdict.exploit is not None
        assert verdict.exploit.donor_id == donor
        restored = verdict.exploit.restore_from
        assert restored.training_iteration == at
        assert restored.of_its_result
        assert restored in workers[donor].history


def population_of(*workers: Worker) -> dict[str, TrialState]:
    return {w.trial_id: w.state({"batch": 8 if w.trial_id == "low" else 32}) for w in workers}


def every_other_step(perturbation_reports: bool) -> tuple[Worker, Worker]:
    """Row 531's pattern: the donor `top` checkpoints at even steps and is
    perturbed at step 3 (odd) or 4 (even)."""
    top, low = Worker("top", function=True), Worker("low", function=True)
    for step in range(1, 4 if not perturbation_reports else 5):
        top.result(step % 2 == 0)
        low.result(False)
    return top, low


@pytest.mark.parametrize("rule", [True, None])
@pytest.mark.parametrize("reports_at_perturbation", [False, True])
def test_a_function_checkpointing_every_other_step(
    rule: bool | None, reports_at_perturbation: bool
) -> None:
    """Row 531: the donor's result at its perturbation carries no
    checkpoint (step 3): Ray skips the exploit, and so does PBT now; a
    policy logged before the rule clones the step-2 checkpoint as it did.
    With one at its perturbation (step 4) both clone it."""
    top, low = every_other_step(reports_at_perturbation)
    at = top.iteration
    trials = population_of(top, low)
    scheduler = add_all(pbt(quantile_fraction=0.5, clones_perturbation_save=rule), trials)
    scheduler, verdict = scheduler.on_trial_result(  # ranked alone: no quantiles
        trials["low"], {"t": 10, "score": 1.0, "training_iteration": at}, trials
    )
    scheduler, verdict = scheduler.on_trial_result(
        trials["top"], {"t": 10, "score": 9.0, "training_iteration": at}, trials
    )
    assert verdict.checkpoint
    top.save()
    trials = population_of(top, low)
    scheduler, verdict = scheduler.on_trial_result(
        trials["low"], {"t": 20, "score": 1.0, "training_iteration": at}, trials
    )
    if reports_at_perturbation or not rule:
        assert verdict.exploit is not None
        expected = saved("top", at) if reports_at_perturbation else saved("top", at, earlier=True)
        assert verdict.exploit.restore_from == expected
        assert scheduler.num_perturbations == 1
    else:
        assert verdict.exploit is None
        assert scheduler.members["low"].config == {"batch": 8}
        assert scheduler.num_perturbations == 0


@pytest.mark.parametrize("rule", [True, None])
def test_a_donor_that_was_no_top_trial_at_its_perturbation_donates_nothing(
    rule: bool | None,
) -> None:
    """Ray resets `last_checkpoint` of a trial outside the upper quantile
    at its perturbation: ranked on top later, it is not cloned before its
    own next perturbation, whatever it saved. A policy logged before the
    rule clones its newest checkpoint."""
    a, b, c = (Worker(name, function=False) for name in "abc")
    for w in (a, b, c):
        w.result(True)
        w.save()
    trials = population_of(a, b, c)
    scheduler = add_all(pbt(quantile_fraction=0.3, clones_perturbation_save=rule), trials)
    verdicts = []
    for trial_id, score in [("a", 5.0), ("b", 9.0), ("c", 1.0)]:
        result: JsonDict = {"t": 10, "score": score, "training_iteration": 1}
        scheduler, verdict = scheduler.on_trial_result(trials[trial_id], result, trials)
        verdicts.append(verdict)
    # a ranked alone (no quantiles): no top trial; b on top; c exploits b
    assert [v.checkpoint for v in verdicts] == [False, True, False]
    assert verdicts[2].exploit is not None
    assert verdicts[2].exploit.donor_id == "b"
    # b falls to the bottom: a is the top trial now, on its score at t=10
    result = {"t": 20, "score": 0.0, "training_iteration": 2}
    scheduler, verdict = scheduler.on_trial_result(trials["b"], result, trials)
    if rule:
        assert verdict.exploit is None
        assert scheduler.num_perturbations == 1
    else:
        assert verdict.exploit is not None
        assert verdict.exploit.restore_from == donor_checkpoint(trials["a"].checkpoints)


def test_pb2_clones_the_save_at_the_perturbation_too() -> None:
    top, low = every_other_step(perturbation_reports=False)
    trials = population_of(top, low)
    scheduler = PB2(
        time_attr="t",
        metric="score",
        mode="max",
        perturbation_interval=10,
        hyperparam_bounds={"batch": [1, 64]},
        quantile_fraction=0.5,
        seed=1,
    ).with_objective("score", Mode.MAX)
    assert scheduler.clones_perturbation_save  # a new experiment's PB2
    for trial in trials.values():
        scheduler = scheduler.on_trial_add(trial)
    for trial_id, time, score in [("low", 10, 1.0), ("top", 10, 9.0), ("low", 20, 1.0)]:
        result: JsonDict = {"t": time, "score": score, "training_iteration": top.iteration}
        scheduler, verdict = scheduler.on_trial_result(trials[trial_id], result, trials)
        if verdict.checkpoint:
            top.save()
            trials = population_of(top, low)
    assert verdict.exploit is None
    assert scheduler.debug_string().startswith("PB2: 1 checkpoints, 0 perturbs")


# --- synchronous PBT -------------------------------------------------------


@pytest.mark.parametrize("donor_reports_last", [True, False])
@pytest.mark.parametrize("carried", [True, False])
def test_synch_clones_the_reporting_donors_save_and_a_waiting_donors_newest(
    donor_reports_last: bool, carried: bool
) -> None:
    """Ray's synchronous PBT asks the trial whose result completes the
    barrier to save (a function's save: the checkpoint of that result, or
    none), and takes a paused trial's newest checkpoint. The exploit given
    up is no perturbation (Ray counts `_exploit`s)."""
    top, low = Worker("top", function=True), Worker("low", function=True)
    top.result(True)  # a checkpoint at step 1
    top.result(carried)  # the barrier's result: with one or not
    low.result(False)
    low.result(False)
    trials = population_of(top, low)
    scheduler = add_all(
        pbt(quantile_fraction=0.5, synch=True, clones_perturbation_save=True), trials
    )
    order = [("low", 1.0), ("top", 9.0)] if donor_reports_last else [("top", 9.0), ("low", 1.0)]
    for trial_id, score in order:
        result: JsonDict = {"t": 10, "score": score, "training_iteration": 2}
        scheduler, verdict = scheduler.on_trial_result(trials[trial_id], result, trials)
        assert verdict.decision is Decision.PAUSE
        if verdict.checkpoint:
            {"top": top, "low": low}[trial_id].save()
        trials = population_of(top, low)
    assert "low" in scheduler.plans
    paused = {
        trial_id: msgspec.structs.replace(trial, status=TrialStatus.PAUSED)
        for trial_id, trial in trials.items()
    }
    ((trial_id, exploit),) = scheduler.waiting_exploits(paused)
    assert trial_id == "low"
    assert scheduler.num_perturbations == 1  # planned
    scheduler = scheduler.on_waiting_exploit("low", exploit)
    if donor_reports_last and not carried:
        assert exploit is None  # Ray's save of the reporting donor resolved to none
        assert scheduler.num_perturbations == 0
        assert scheduler.debug_string() == "PopulationBasedTraining: 1 checkpoints, 0 perturbs"
    else:
        assert exploit is not None
        expected = saved("top", 2) if carried else saved("top", 2, earlier=True)
        assert exploit.restore_from == expected
        assert scheduler.num_perturbations == 1


@settings(deadline=None)
@given(given_up=st.integers(min_value=0, max_value=20), made=st.integers(min_value=0, max_value=20))
def test_the_key_of_the_values_asked_moves_on_with_every_plan(given_up: int, made: int) -> None:
    """Counting only the exploits made keeps the key of the mutation
    functions' values as it moved: one per planned exploit."""
    scheduler = pbt(
        hyperparam_mutations={"lr": lambda: 0.5},
        clones_perturbation_save=True,
        num_perturbations=made,
        exploits_given_up=given_up,
    )
    wanted = scheduler.wanted()
    assert wanted is not None
    assert wanted.key == made + given_up


# --- old logs --------------------------------------------------------------


def test_a_new_experiment_takes_rays_rule_and_an_old_log_keeps_its_own() -> None:
    new = pbt().with_objective("score", Mode.MAX)
    assert new.clones_perturbation_save is True
    encoded = msgspec.msgpack.decode(to_msgpack(new))
    del encoded["clones_perturbation_save"], encoded["exploits_given_up"]
    old = from_msgpack(msgspec.msgpack.encode(encoded), PopulationBasedTraining)
    assert old.clones_perturbation_save is None
    assert old.exploits_given_up == 0


def test_a_member_and_a_plan_encode_as_before_the_fields() -> None:
    """`saved_at` and `donor_saved_at` are None under the old rule, and
    omitted: an old log's members and plans encode to the bytes they had."""
    new = pbt().with_objective("score", Mode.MAX)
    trials = {"a": make_trial("a"), "b": make_trial("b")}
    old = msgspec.structs.replace(new, clones_perturbation_save=None)
    old = add_all(old, trials)
    old, _ = feed(old, trials, [("a", 10, 1.0), ("b", 10, 2.0)])
    for member in old.members.values():
        assert b"saved_at" not in to_msgpack(member)


@settings(deadline=None, max_examples=100)
@given(
    functions=st.lists(st.booleans(), min_size=3, max_size=3),
    events=events_strategy,
)
def test_an_old_policy_clones_the_donors_newest_checkpoint_with_state(
    functions: list[bool], events: list[tuple[int, float, bool]]
) -> None:
    """A policy logged before the rule decides as it ran: an exploit clones
    the donor's newest persistent checkpoint when it holds state, and is
    skipped only when it has none such."""
    workers = {f"t{i}": Worker(f"t{i}", functions[i]) for i in range(3)}
    trials = {trial_id: w.state(CONFIG) for trial_id, w in workers.items()}
    scheduler = add_all(pbt(quantile_fraction=0.3, perturbation_interval=INTERVAL), trials)
    for index, score, reports in events:
        before = scheduler
        scheduler, verdict = report(
            scheduler, workers, trials, f"t{index}", score=score, reports=reports
        )
        if verdict.exploit is not None:
            donor = trials[verdict.exploit.donor_id]
            assert verdict.exploit.restore_from == donor_checkpoint(donor.checkpoints)
        made = scheduler.num_perturbations - before.num_perturbations
        assert made == (verdict.exploit is not None)


def test_the_checkpoint_saved_at_a_result() -> None:
    history = CheckpointHistory(
        persistent=(saved("t", 2), saved("t", 3, earlier=True), saved("t", 4))
    )
    assert perturbation_checkpoint(history, 2) == saved("t", 2)
    assert perturbation_checkpoint(history, 3) is None  # an earlier result's
    assert perturbation_checkpoint(history, 5) is None  # none taken
    null = CheckpointHistory(persistent=(saved("t", 1, empty=True),))
    assert perturbation_checkpoint(null, 1) is None


def test_earlier_is_unset_unless_true_and_checked() -> None:
    plain = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c", earlier=False)
    assert plain == CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c")
    assert b"earlier" not in to_msgpack(plain)
    marked = saved("t", 3, earlier=True)
    assert from_msgpack(to_msgpack(marked), CheckpointRef) == marked
    assert marked.holds_state
    assert not marked.of_its_result
    with pytest.raises(InvalidFieldError, match=r"CheckpointRef\.earlier"):
        CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c", earlier="yes")  # type: ignore[arg-type]
