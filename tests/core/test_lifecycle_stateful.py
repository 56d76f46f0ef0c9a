"""Random event sequences against one trial, checked by invariants.

The machine sends legal and illegal events alike and keeps its own record
of what should be true: which status is final, how many failures were
counted, every persistent checkpoint ever saved and every deletion. The
invariants compare the trial with that record after every step.
"""

from __future__ import annotations

import math
from typing import TypeVar

import msgspec
from hypothesis import HealthCheck, settings
from hypothesis import event as count_event
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from tests.strategies import finite, json_dicts, locations, resources, specs
from tunecore.core import TRANSITIONS, apply, new_trial
from tunecore.model import (
    Applied,
    CheckpointPolicy,
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    DeleteCheckpoint,
    JsonDict,
    Mode,
    PauseRequested,
    Rejection,
    ResourcesUpdateRequested,
    ResultReported,
    StartRequested,
    StopRequested,
    TrialEvent,
    TrialFailed,
    TrialRestored,
    TrialSpec,
    TrialStarted,
    TrialState,
    TrialStatus,
)
from tunecore.model.codec import to_msgpack

_T = TypeVar("_T")


def expected_score(checkpoint: CheckpointRef, policy: CheckpointPolicy) -> tuple[int, float]:
    """The retention order, written independently of the implementation:
    scored beats unscored; higher is better for MAX, lower for MIN."""
    value = checkpoint.metrics.get(policy.score_attribute)
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return (0, 0.0)
    return (1, float(value) if policy.score_order is Mode.MAX else -float(value))


def expected_retained(
    ever: list[CheckpointRef], policy: CheckpointPolicy
) -> tuple[CheckpointRef, ...]:
    """Best `num_to_keep` of every persistent checkpoint ever saved (ties to
    the newer), plus the newest, in arrival order."""
    if policy.num_to_keep is None:
        return tuple(ever)
    order = sorted(
        range(len(ever)), key=lambda i: (expected_score(ever[i], policy), i), reverse=True
    )
    keep = set(order[: policy.num_to_keep]) | {len(ever) - 1}
    return tuple(c for i, c in enumerate(ever) if i in keep)


# Mostly criteria the results can meet, so runs get far enough to checkpoint,
# fail and recover; now and then one on a metric no result carries.
machine_specs = st.builds(
    lambda spec, criterion, policy: msgspec.structs.replace(
        spec, stopping_criterion=criterion, checkpoint_policy=policy
    ),
    specs,
    st.one_of(
        st.just({}),
        st.builds(lambda n: {"training_iteration": float(n)}, st.integers(3, 40)),
        st.just({"never_reported": 1.0}),
    ),
    st.builds(
        CheckpointPolicy,
        frequency=st.integers(1, 3),
        at_end=st.booleans(),
        num_to_keep=st.none() | st.integers(1, 3),
        score_attribute=st.just("score"),
        score_order=st.sampled_from(Mode),
    ),
)


class TrialMachine(RuleBasedStateMachine):
    trial: TrialState
    clock: float
    iteration: int
    next_path: int
    finished_as: TrialStatus | None
    first_start: float | None
    ever_persistent: list[CheckpointRef]
    deleted: list[CheckpointRef]

    @initialize(spec=machine_specs)
    def create(self, spec: TrialSpec) -> None:
        self.trial = new_trial(spec)
        self.clock = 1_000.0
        self.iteration = 0
        self.next_path = 0
        self.finished_as = None
        self.first_start = None
        self.ever_persistent = []
        self.deleted = []

    # -- feeding events -------------------------------------------------

    def feed(self, event: TrialEvent) -> Applied | Rejection:
        self.clock += 1.0
        before = self.trial
        round_trip(event, type(event))
        outcome = apply(before, event)
        if isinstance(outcome, Rejection):
            assert self.trial is before, "a rejection must not replace the trial"
            assert apply(before, event) == outcome, "rejection is deterministic"
            return outcome
        assert apply(before, event) == outcome, "apply is deterministic"
        rule_row = TRANSITIONS[(before.status, type(event))]
        assert outcome.state.status in rule_row.targets, (before.status, event, outcome.state)
        failures = outcome.state.num_failures - before.num_failures
        assert failures in (0, 1)
        if failures:
            assert outcome.state.error_message is not None
        if isinstance(event, CheckpointSaved) and (
            event.checkpoint.storage is CheckpointStorage.PERSISTENT
        ):
            self.ever_persistent = [
                c for c in self.ever_persistent if c.path != event.checkpoint.path
            ]
            self.ever_persistent.append(event.checkpoint)
        self.deleted += [c.checkpoint for c in outcome.commands if isinstance(c, DeleteCheckpoint)]
        if self.first_start is None and outcome.state.start_time is not None:
            self.first_start = outcome.state.start_time
        self.trial = outcome.state
        count_event(f"reached {self.trial.status}")
        if outcome.commands and isinstance(outcome.commands[0], DeleteCheckpoint):
            count_event("retention deleted a checkpoint")
        if self.finished_as is None and self.trial.is_finished:
            self.finished_as = self.trial.status
        return outcome

    def new_path(self) -> str:
        self.next_path += 1
        return f"checkpoint_{self.next_path:06d}"

    # -- rules ------------------------------------------------------------

    @rule()
    def start(self) -> None:
        self.feed(StartRequested(trial_id="t0", at=self.clock))

    @rule(location=locations)
    def worker_up(self, location: object) -> None:
        assert not isinstance(location, str)
        self.feed(TrialStarted(trial_id="t0", at=self.clock, location=location))  # type: ignore[arg-type]

    @rule(
        metrics=st.dictionaries(st.sampled_from(["score", "loss", "lr"]), finite, max_size=3),
        done=st.integers(0, 9).map(lambda n: n == 0),
        extra=json_dicts,
        save_scores=st.none() | st.lists(st.none() | finite, min_size=2, max_size=2),
    )
    def report(
        self,
        metrics: JsonDict,
        done: bool,
        extra: JsonDict,
        save_scores: list[float | None] | None,
    ) -> None:
        """Report a result; with `save_scores`, answer the saves it asks for
        right away, as a healthy worker does."""
        self.iteration += 1
        result: JsonDict = {**extra, **metrics, "training_iteration": self.iteration}
        if done:
            result["done"] = True
        self.feed(ResultReported(trial_id="t0", at=self.clock, result=result))
        for score in save_scores or ():
            if self.trial.saving_to:
                self.answer_save(score)

    @precondition(lambda self: bool(self.trial.saving_to))
    @rule(score=st.none() | finite)
    def answer_save(self, score: float | None) -> None:
        metrics: JsonDict = dict(self.trial.last_result)
        if score is None:
            metrics.pop("score", None)
        else:
            metrics["score"] = score
        checkpoint = CheckpointRef(
            storage=self.trial.saving_to[0],
            path=self.new_path(),
            training_iteration=self.iteration,
            metrics=metrics,
        )
        outcome = self.feed(CheckpointSaved(trial_id="t0", at=self.clock, checkpoint=checkpoint))
        assert isinstance(outcome, Applied), outcome

    @rule(storage=st.sampled_from(CheckpointStorage))
    def unrequested_save(self, storage: CheckpointStorage) -> None:
        if self.trial.saving_to and self.trial.saving_to[0] is storage:
            return  # that one would be legal; answer_save covers it
        checkpoint = CheckpointRef(storage=storage, path=self.new_path())
        outcome = self.feed(CheckpointSaved(trial_id="t0", at=self.clock, checkpoint=checkpoint))
        assert isinstance(outcome, Rejection)

    @rule()
    def restored(self) -> None:
        self.feed(TrialRestored(trial_id="t0", at=self.clock))

    # Failing, pausing and stopping end or interrupt a run; a 1-in-4 roll keeps
    # them rarer than results so runs get deep enough to exercise retention.
    rare = st.integers(0, 3).map(lambda n: n == 0)

    @rule(error=st.text(max_size=20), now=rare)
    def failed(self, error: str, now: bool) -> None:
        if now:
            self.feed(TrialFailed(trial_id="t0", at=self.clock, error=error))

    @rule(now=rare)
    def pause(self, now: bool) -> None:
        if now:
            self.feed(PauseRequested(trial_id="t0", at=self.clock))

    @rule(now=rare)
    def stop(self, now: bool) -> None:
        if now:
            self.feed(StopRequested(trial_id="t0", at=self.clock))

    @rule(new=resources)
    def update_resources(self, new: object) -> None:
        event = ResourcesUpdateRequested(trial_id="t0", at=self.clock, resources=new)  # type: ignore[arg-type]
        outcome = self.feed(event)
        assert isinstance(outcome, Rejection) == (
            self.trial.status not in (TrialStatus.PENDING, TrialStatus.PAUSED)
        )

    @rule()
    def foreign_event(self) -> None:
        outcome = self.feed(StopRequested(trial_id="someone-else", at=self.clock))
        assert isinstance(outcome, Rejection)

    # -- invariants -------------------------------------------------------

    @invariant()
    def terminal_states_are_absorbing(self) -> None:
        if self.finished_as is not None:
            assert self.trial.status is self.finished_as

    @invariant()
    def start_time_is_set_once(self) -> None:
        assert self.trial.start_time == self.first_start

    @invariant()
    def retention_keeps_the_best_and_the_newest(self) -> None:
        policy = self.trial.spec.checkpoint_policy
        retained = self.trial.checkpoints.persistent
        assert retained == expected_retained(self.ever_persistent, policy)
        if policy.num_to_keep is not None:
            assert len(retained) <= policy.num_to_keep + 1

    @invariant()
    def every_dropped_checkpoint_is_deleted_exactly_once(self) -> None:
        retained = {c.path for c in self.trial.checkpoints.persistent}
        ever = {c.path for c in self.ever_persistent}
        deleted = [c.path for c in self.deleted]
        assert len(deleted) == len(set(deleted))
        assert set(deleted) == ever - retained

    @invariant()
    def failures_are_within_the_recovery_budget(self) -> None:
        spec = self.trial.spec
        if self.trial.status is TrialStatus.ERROR:
            assert spec.max_failures >= 0
            assert self.trial.num_failures == spec.max_failures + 1
        elif spec.max_failures >= 0:
            assert self.trial.num_failures <= spec.max_failures

    @invariant()
    def state_round_trips(self) -> None:
        round_trip(self.trial, TrialState)


def round_trip(value: _T, kind: type[_T]) -> None:
    """msgpack and JSON both give back an equal value, and re-encoding gives
    identical bytes, through the encoders tunecore stores with
    (`model.codec`: a finished trial's packed result is encoded through
    their hook). (A finished trial's state is stored as msgpack only, and
    JSON is checked on the state with its result and stats as dicts.)"""
    packed = to_msgpack(value)
    assert msgspec.msgpack.decode(packed, type=kind) == value
    assert to_msgpack(msgspec.msgpack.decode(packed, type=kind)) == packed
    if isinstance(value, TrialState) and value.is_finished:
        value = msgspec.structs.replace(value, status=TrialStatus.RUNNING)
        value = msgspec.structs.replace(
            value, recorded_result=value.last_result, recorded_stats=value.stats_beyond_last
        )
    text = msgspec.json.encode(value)
    assert msgspec.json.decode(text, type=kind) == value


TrialMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_trial_lifecycle = TrialMachine.TestCase
