"""`apply` driven one event at a time, checking the whole state and the exact
commands after every step.

Expected states are written as the previous state with the fields the step
should change, so an unexpected change anywhere else fails the comparison.
"""

from __future__ import annotations

import copy
import typing
from typing import Any

import pytest
from msgspec.structs import replace

from tunecore.core import (
    TRANSITIONS,
    apply,
    format_transitions,
    lifecycle,
    new_trial,
    reset_after_crash,
    should_recover,
)
from tunecore.core.checkpoints import current_checkpoint
from tunecore.core.lifecycle import JudgedResult, LifecycleEvent, WaitingExploit, judge_alone
from tunecore.core.results import flatten
from tunecore.core.schedulers.base import Exploit, Verdict
from tunecore.model import (
    Applied,
    CheckpointHistory,
    CheckpointPolicy,
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    Command,
    ContinueTrial,
    Decision,
    DeleteCheckpoint,
    ExperimentInterrupted,
    ExperimentResumed,
    Exploited,
    JsonDict,
    Location,
    MetricStats,
    PauseRequested,
    PauseTrial,
    Rejection,
    ResetTrial,
    Resources,
    ResourcesUpdateRequested,
    ResultReported,
    SaveCheckpoint,
    StartRequested,
    StartTrial,
    StopRequested,
    StopTrial,
    TrialEvent,
    TrialFailed,
    TrialRestored,
    TrialSpec,
    TrialStarted,
    TrialState,
    TrialStatus,
)
from tunecore.model.analysis import compact

TID = "t1"
PENDING = TrialStatus.PENDING
RUNNING = TrialStatus.RUNNING
PAUSED = TrialStatus.PAUSED
TERMINATED = TrialStatus.TERMINATED
ERROR = TrialStatus.ERROR
PERSISTENT = CheckpointStorage.PERSISTENT
MEMORY = CheckpointStorage.MEMORY

# 2023-11-14 22:13:20 UTC, for error entries.
AT = 1_700_000_000.0
AT_TEXT = "2023-11-14_22-13-20"


# --- helpers -----------------------------------------------------------------


def make_spec(**fields: Any) -> TrialSpec:
    fields.setdefault("trial_id", TID)
    fields.setdefault("trainable_name", "train_fn")
    return TrialSpec(**fields)


def step(trial: TrialState, event: LifecycleEvent) -> tuple[TrialState, tuple[Command, ...]]:
    """Apply an event that must be accepted."""
    outcome = apply(trial, event)
    assert isinstance(outcome, Applied), outcome
    return outcome.state, outcome.commands


def refuse(trial: TrialState, event: TrialEvent) -> Rejection:
    """Apply an event that must be rejected, leaving the trial unchanged."""
    before = copy.deepcopy(trial)
    outcome = apply(trial, event)
    assert isinstance(outcome, Rejection), outcome
    assert trial == before
    assert outcome.trial_id == trial.trial_id
    assert outcome.event == type(event).__name__
    assert outcome.status is trial.status
    return outcome


def start(at: float = 10.0) -> StartRequested:
    return StartRequested(trial_id=TID, at=at)


def result(at: float, **values: Any) -> ResultReported:
    return ResultReported(trial_id=TID, at=at, result=values)


def saved(checkpoint: CheckpointRef, at: float = 0.0) -> CheckpointSaved:
    return CheckpointSaved(trial_id=TID, at=at, checkpoint=checkpoint)


def failed(error: str = "boom", at: float = AT) -> TrialFailed:
    return TrialFailed(trial_id=TID, at=at, error=error)


def persistent(path: str, **metrics: Any) -> CheckpointRef:
    return CheckpointRef(storage=PERSISTENT, path=path, metrics=metrics)


def in_memory(path: str, **metrics: Any) -> CheckpointRef:
    return CheckpointRef(storage=MEMORY, path=path, metrics=metrics)


def annotated(done: bool = False, **values: Any) -> JsonDict:
    return {**values, "trial_id": TID, "done": done}


def with_analysis(
    trial: TrialState, *, analysis: dict[str, MetricStats], **fields: Any
) -> TrialState:
    """`trial` with `fields`, and `analysis` as its whole metric analysis
    (kept as a trial keeps it: what its last result does not tell)."""
    expected = replace(trial, **fields)
    kept, unanalysed = compact(analysis, flatten(expected.last_result))
    return replace(expected, recorded_stats=kept, unanalysed=unanalysed)


def entry(number: int, error: str) -> str:
    return f"Failure # {number} (occurred at {AT_TEXT})\n{error}\n"


def running(spec: TrialSpec | None = None) -> TrialState:
    state, _ = step(new_trial(spec or make_spec()), start(10.0))
    return state


def running_with_result(spec: TrialSpec | None = None) -> TrialState:
    state, _ = step(running(spec), result(11.0, training_iteration=1, loss=0.5))
    return state


def paused_saving(spec: TrialSpec | None = None) -> TrialState:
    state, _ = step(running_with_result(spec), PauseRequested(trial_id=TID, at=12.0))
    return state


def paused(spec: TrialSpec | None = None) -> TrialState:
    state, _ = step(paused_saving(spec), saved(in_memory("obj-1", training_iteration=1)))
    return state


def terminated() -> TrialState:
    state, _ = step(new_trial(make_spec()), StopRequested(trial_id=TID, at=5.0))
    return state


def errored() -> TrialState:
    state, _ = step(running(make_spec(max_failures=0)), failed())
    return state


IN_STATUS = {
    PENDING: lambda: new_trial(make_spec()),
    RUNNING: running_with_result,
    PAUSED: paused,
    TERMINATED: terminated,
    ERROR: errored,
}


def sample_events(trial_id: str = TID) -> list[TrialEvent]:
    return [
        StartRequested(trial_id=trial_id, at=50.0),
        TrialStarted(trial_id=trial_id, at=50.0, location=Location(hostname="h", pid=1)),
        ResultReported(trial_id=trial_id, at=50.0, result={"training_iteration": 9}),
        CheckpointSaved(trial_id=trial_id, at=50.0, checkpoint=persistent("/x")),
        TrialRestored(trial_id=trial_id, at=50.0),
        TrialFailed(trial_id=trial_id, at=50.0, error="boom"),
        PauseRequested(trial_id=trial_id, at=50.0),
        StopRequested(trial_id=trial_id, at=50.0),
        ResourcesUpdateRequested(trial_id=trial_id, at=50.0, resources=Resources(cpu=2)),
    ]


def test_the_sample_events_cover_every_event_type() -> None:
    assert {type(e) for e in sample_events()} == set(typing.get_args(TrialEvent))


# --- start -------------------------------------------------------------------


def test_a_new_trial_is_pending_with_nothing_recorded() -> None:
    spec = make_spec()
    assert new_trial(spec) == TrialState(spec=spec, status=PENDING)


def test_start_sets_running_and_the_start_time() -> None:
    pending = new_trial(make_spec())
    state, commands = step(pending, start(10.0))
    assert state == replace(pending, status=RUNNING, start_time=10.0)
    assert commands == (StartTrial(trial_id=TID, restore_from=None),)


def test_start_restores_from_the_restore_path() -> None:
    pending = new_trial(make_spec(restore_path="/restore/me"))
    state, commands = step(pending, start(10.0))
    restore = CheckpointRef(storage=PERSISTENT, path="/restore/me")
    assert state == replace(pending, status=RUNNING, start_time=10.0, restoring_from=restore)
    assert commands == (StartTrial(trial_id=TID, restore_from=restore),)


def test_the_start_time_is_set_by_the_first_start_only() -> None:
    state, _ = step(paused(), start(30.0))
    assert state.start_time == 10.0
    spec = make_spec(max_failures=-1)
    state, _ = step(running(spec), failed())
    state, _ = step(state, start(40.0))
    assert state.start_time == 10.0


def test_trial_started_records_the_location() -> None:
    trial = running()
    where = Location(hostname="node-1", pid=4242)
    state, commands = step(trial, TrialStarted(trial_id=TID, at=10.5, location=where))
    assert state == replace(trial, location=where)
    assert commands == ()


# --- results -----------------------------------------------------------------


def test_a_result_is_recorded_and_the_trial_continues() -> None:
    trial = running()
    state, commands = step(trial, result(11.0, training_iteration=1, loss=0.5))
    assert state == with_analysis(
        trial,
        recorded_result=annotated(training_iteration=1, loss=0.5),
        last_update_time=11.0,
        analysis={
            "training_iteration": MetricStats(max=1, min=1, avg=1, last=1),
            "loss": MetricStats(max=0.5, min=0.5, avg=0.5, last=0.5),
        },
    )
    assert commands == (ContinueTrial(trial_id=TID),)


def test_results_update_the_metric_analysis_with_nested_names() -> None:
    trial = running(make_spec(experiment_tag="0_lr=0.1"))
    state, _ = step(trial, result(11.0, training_iteration=1, val={"loss": 4.0}, ok=True))
    state, _ = step(state, result(12.0, training_iteration=2, val={"loss": 2.0}, ok=False))
    assert state == with_analysis(
        trial,
        recorded_result={
            "training_iteration": 2,
            "val": {"loss": 2.0},
            "ok": False,
            "trial_id": TID,
            "done": False,
            "experiment_tag": "0_lr=0.1",
        },
        last_update_time=12.0,
        analysis={
            # (2 + 1*1)/2 = 1.5 and (2 + 1*4)/2 = 3
            "training_iteration": MetricStats(max=2, min=1, avg=1.5, last=2),
            "val/loss": MetricStats(max=4.0, min=2.0, avg=3.0, last=2.0),
        },
    )


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"hostname": "node-1", "pid": 42}, Location(hostname="node-1", pid=42)),
        ({"node_ip": "10.0.0.2", "pid": 7}, Location(hostname="10.0.0.2", pid=7)),
        (
            {"hostname": "node-1", "node_ip": "10.0.0.2", "pid": 7},
            Location(hostname="node-1", pid=7),
        ),
        ({"pid": 9}, Location(hostname="old-host", pid=9)),
        ({"loss": 1.0}, Location(hostname="old-host", pid=1)),
    ],
)
def test_the_location_is_taken_from_results(values: JsonDict, expected: Location) -> None:
    trial, _ = step(
        running(),
        TrialStarted(trial_id=TID, at=10.5, location=Location(hostname="old-host", pid=1)),
    )
    state, _ = step(trial, ResultReported(trial_id=TID, at=11.0, result=values))
    assert state.location == expected


def test_a_due_checkpoint_is_saved_before_continuing() -> None:
    trial = running(make_spec(checkpoint_policy=CheckpointPolicy(frequency=2)))
    first, commands = step(trial, result(11.0, training_iteration=1))
    assert first.saving_to == ()
    assert commands == (ContinueTrial(trial_id=TID),)
    second, commands = step(first, result(12.0, training_iteration=2))
    assert second == with_analysis(
        first,
        recorded_result=annotated(training_iteration=2),
        last_update_time=12.0,
        analysis={"training_iteration": MetricStats(max=2, min=1, avg=1.5, last=2)},
        saving_to=(PERSISTENT,),
    )
    assert commands == (
        SaveCheckpoint(trial_id=TID, storage=PERSISTENT),
        ContinueTrial(trial_id=TID),
    )


def test_the_trainables_flag_forces_a_save() -> None:
    trial = running()
    state, commands = step(trial, result(11.0, training_iteration=1, should_checkpoint=True))
    assert state.saving_to == (PERSISTENT,)
    assert commands == (
        SaveCheckpoint(trial_id=TID, storage=PERSISTENT),
        ContinueTrial(trial_id=TID),
    )


def test_saves_complete_in_the_order_they_were_requested() -> None:
    trial = running(make_spec(checkpoint_policy=CheckpointPolicy(frequency=1)))
    state, _ = step(trial, result(11.0, training_iteration=1))
    state, _ = step(state, result(12.0, training_iteration=2))
    assert state.saving_to == (PERSISTENT, PERSISTENT)
    c1, c2 = persistent("/c1", training_iteration=1), persistent("/c2", training_iteration=2)
    after_first, commands = step(state, saved(c1))
    assert after_first == replace(
        state, saving_to=(PERSISTENT,), checkpoints=CheckpointHistory(persistent=(c1,))
    )
    assert commands == ()
    after_second, commands = step(after_first, saved(c2))
    assert after_second == replace(
        state, saving_to=(), checkpoints=CheckpointHistory(persistent=(c1, c2))
    )
    assert commands == ()


def test_a_save_that_retention_cuts_is_deleted() -> None:
    policy = CheckpointPolicy(frequency=1, num_to_keep=1)
    state, _ = step(
        running(make_spec(checkpoint_policy=policy)), result(11.0, training_iteration=1)
    )
    state, _ = step(state, result(12.0, training_iteration=2))
    c1, c2 = persistent("/c1", training_iteration=1), persistent("/c2", training_iteration=2)
    state, _ = step(state, saved(c1))
    state, commands = step(state, saved(c2))
    assert state.checkpoints == CheckpointHistory(persistent=(c2,))
    assert commands == (DeleteCheckpoint(trial_id=TID, checkpoint=c1),)


def test_a_save_of_the_wrong_storage_is_rejected() -> None:
    trial = paused_saving()  # a MEMORY save is in flight
    rejection = refuse(trial, saved(persistent("/c1")))
    assert "memory" in rejection.reason
    assert "persistent" in rejection.reason


def test_an_unrequested_save_is_rejected() -> None:
    rejection = refuse(running_with_result(), saved(persistent("/c1")))
    assert "requested" in rejection.reason


def test_saves_cross_a_pause_in_order() -> None:
    spec = make_spec(checkpoint_policy=CheckpointPolicy(frequency=1))
    state, _ = step(running(spec), result(11.0, training_iteration=1))
    state, commands = step(state, PauseRequested(trial_id=TID, at=12.0))
    assert state.status is PAUSED
    assert state.saving_to == (PERSISTENT, MEMORY)
    assert commands == (SaveCheckpoint(trial_id=TID, storage=MEMORY), PauseTrial(trial_id=TID))
    refuse(state, saved(in_memory("obj-1")))
    p1, m1 = persistent("/c1", training_iteration=1), in_memory("obj-1", training_iteration=1)
    state, _ = step(state, saved(p1))
    state, _ = step(state, saved(m1))
    assert state.checkpoints == CheckpointHistory(
        persistent=(p1,), memory=m1, memory_is_newest=True
    )
    state, commands = step(state, start(20.0))
    assert commands == (StartTrial(trial_id=TID, restore_from=m1),)


# --- stopping ----------------------------------------------------------------


def test_a_reached_criterion_terminates() -> None:
    trial = running(make_spec(stopping_criterion={"accuracy": 0.9}))
    state, commands = step(trial, result(11.0, training_iteration=1, accuracy=0.9))
    assert state == with_analysis(
        trial,
        status=TERMINATED,
        recorded_result=annotated(done=True, training_iteration=1, accuracy=0.9),
        last_update_time=11.0,
        analysis={
            "training_iteration": MetricStats(max=1, min=1, avg=1, last=1),
            "accuracy": MetricStats(max=0.9, min=0.9, avg=0.9, last=0.9),
        },
    )
    assert commands == (StopTrial(trial_id=TID, error=None),)


def test_a_criterion_not_yet_reached_continues() -> None:
    trial = running(make_spec(stopping_criterion={"accuracy": 0.9}))
    state, commands = step(trial, result(11.0, training_iteration=1, accuracy=0.89))
    assert state.status is RUNNING
    assert commands == (ContinueTrial(trial_id=TID),)


def test_the_done_flag_terminates() -> None:
    state, commands = step(running(), result(11.0, training_iteration=3, done=True))
    assert state.status is TERMINATED
    assert state.last_result == annotated(done=True, training_iteration=3)
    assert commands == (StopTrial(trial_id=TID),)


def test_terminating_with_at_end_saves_first_and_accepts_that_save() -> None:
    spec = make_spec(
        stopping_criterion={"accuracy": 0.9}, checkpoint_policy=CheckpointPolicy(at_end=True)
    )
    state, commands = step(running(spec), result(11.0, training_iteration=1, accuracy=0.95))
    assert state.status is TERMINATED
    assert state.saving_to == (PERSISTENT,)
    assert commands == (
        SaveCheckpoint(trial_id=TID, storage=PERSISTENT),
        StopTrial(trial_id=TID),
    )
    final = persistent("/final", training_iteration=1, accuracy=0.95)
    after, commands = step(state, saved(final))
    assert after == replace(state, saving_to=(), checkpoints=CheckpointHistory(persistent=(final,)))
    assert commands == ()
    refuse(after, saved(persistent("/again")))


def test_a_missing_criterion_metric_is_a_failure() -> None:
    trial = running(make_spec(stopping_criterion={"accuracy": 0.9}, max_failures=0))
    state, commands = step(trial, result(AT, training_iteration=1, loss=0.3))
    message = state.error_message
    assert message is not None
    assert "'accuracy'" in message
    assert "loss" in message
    assert "training_iteration" in message
    # The result is not recorded: the trial failed on it.
    assert state == replace(trial, status=ERROR, num_failures=1, error_message=message)
    assert commands == (StopTrial(trial_id=TID, error=entry(1, message)),)


def test_a_missing_criterion_metric_is_retried_while_failures_allow() -> None:
    trial = running(make_spec(stopping_criterion={"accuracy": 0.9}, max_failures=-1))
    state, _ = step(trial, result(AT, training_iteration=1, loss=0.3))
    assert state.status is PENDING
    assert state.num_failures == 1


# --- pause and resume --------------------------------------------------------


def test_pause_saves_to_memory_and_releases_the_worker() -> None:
    trial = running_with_result()
    state, commands = step(trial, PauseRequested(trial_id=TID, at=12.0))
    assert state == replace(trial, status=PAUSED, saving_to=(MEMORY,))
    assert commands == (SaveCheckpoint(trial_id=TID, storage=MEMORY), PauseTrial(trial_id=TID))


def test_a_pause_that_asks_for_a_checkpoint_saves_it_persistently() -> None:
    """PBT's top trial pausing to take turns: its save must outlive the
    worker, since other trials may clone it while it waits."""
    trial = running()
    applied = lifecycle.conclude(
        trial, {"training_iteration": 1}, 11.0, Verdict(decision=Decision.PAUSE, checkpoint=True)
    )
    assert applied.state.status is PAUSED
    assert applied.state.saving_to == (PERSISTENT,)
    assert applied.commands == (
        SaveCheckpoint(trial_id=TID, storage=PERSISTENT),
        PauseTrial(trial_id=TID),
    )


def test_a_paused_exploit_restores_the_donor_then_saves_it_to_memory() -> None:
    """PBT's exploit while others wait: the worker takes the donor's config
    and checkpoint, saves that state to memory, and is released; the trial
    resumes from it later."""
    donor = persistent("/donor/checkpoint_000004", training_iteration=4, loss=0.1)
    exploit = Exploit(donor_id="d", config={"lr": 0.2}, experiment_tag="1@p", restore_from=donor)
    trial = running()
    applied = lifecycle.conclude(
        trial,
        {"training_iteration": 1, "loss": 0.9},
        11.0,
        Verdict(decision=Decision.PAUSE, exploit=exploit),
    )
    state = applied.state
    assert (state.status, state.saving_to, state.restoring_from) == (PAUSED, (MEMORY,), donor)
    assert (state.spec.config, state.spec.experiment_tag) == ({"lr": 0.2}, "1@p")
    assert applied.commands == (
        ResetTrial(trial_id=TID, config={"lr": 0.2}, experiment_tag="1@p", restore_from=donor),
        # Labelled with the donor's result: it saves the donor's state.
        SaveCheckpoint(trial_id=TID, storage=MEMORY, result=donor.metrics),
        PauseTrial(trial_id=TID),
    )
    # The worker answers in order: the restore, then the memory save.
    restored, _ = step(state, TrialRestored(trial_id=TID, at=12.0))
    assert restored.status is PAUSED
    assert restored.restoring_from is None
    assert restored.last_result == {"training_iteration": 4, "loss": 0.1}
    memory = in_memory("obj-2", training_iteration=4)
    ready, _ = step(restored, saved(memory))
    resumed, commands = step(ready, start(20.0))
    assert commands == (StartTrial(trial_id=TID, restore_from=memory),)
    assert resumed.spec.config == {"lr": 0.2}


def test_an_exploited_trial_restarts_from_the_donors_checkpoint_until_it_saves_its_own() -> None:
    """The memory checkpoint holding the donor's state dies with the
    driver: a resume restarts from the donor's checkpoint, not from the
    trial's own older one; the trial's own next persistent save ends that
    (its due save, requested before the exploit, does not)."""
    donor = persistent("/donor/checkpoint_000004", training_iteration=4)
    own = persistent("/own/checkpoint_000001", training_iteration=1)
    exploit = Exploit(donor_id="d", config={"lr": 0.2}, experiment_tag="1@p", restore_from=donor)
    trial = replace(
        running(make_spec(checkpoint_policy=KEEPS_DUE)),
        checkpoints=CheckpointHistory(persistent=(own,)),
    )
    applied = lifecycle.conclude(
        trial,
        {"training_iteration": 2, "should_checkpoint": True},
        11.0,
        Verdict(decision=Decision.PAUSE, exploit=exploit),
    )
    state = applied.state
    assert state.exploited == Exploited(checkpoint=donor, saves_ahead=1)
    due = persistent("/own/checkpoint_000002", training_iteration=2)
    state, _ = step(state, saved(due))  # the trial's own state from before: not the end
    assert state.exploited == Exploited(checkpoint=donor)
    state, _ = step(state, TrialRestored(trial_id=TID, at=12.0))
    state, _ = step(state, saved(in_memory("obj-3", training_iteration=4)))
    assert state.exploited == Exploited(checkpoint=donor)  # memory dies with the driver
    crashed = lifecycle.reset_after_crash(state)
    assert current_checkpoint(crashed) == donor
    resumed, commands = step(crashed, start(20.0))
    assert commands == (StartTrial(trial_id=TID, restore_from=donor),)
    # Its own persistent save ends it.
    resumed, _ = step(resumed, TrialRestored(trial_id=TID, at=21.0))
    pausing = lifecycle.decide(resumed, Decision.PAUSE, checkpoint=True).state
    later = persistent("/own/checkpoint_000005", training_iteration=5)
    ended, _ = step(pausing, saved(later))
    assert ended.exploited is None
    assert current_checkpoint(lifecycle.reset_after_crash(ended)) == later


def test_an_exploit_of_a_waiting_trial_restores_the_donor_at_its_next_start() -> None:
    donor = persistent("/donor/checkpoint_000004", training_iteration=4)
    memory = in_memory("obj-1", training_iteration=2)
    trial = replace(
        running(),
        status=PAUSED,
        checkpoints=CheckpointHistory(memory=memory, memory_is_newest=True),
    )
    exploit = Exploit(donor_id="d", config={"lr": 0.2}, experiment_tag="1@p", restore_from=donor)
    applied = lifecycle.exploit_waiting(trial, exploit)
    assert applied.commands == (DeleteCheckpoint(trial_id=TID, checkpoint=memory),)
    state = applied.state
    assert (state.spec.config, state.spec.experiment_tag) == ({"lr": 0.2}, "1@p")
    assert state.checkpoints == CheckpointHistory()
    _, commands = step(state, start(20.0))
    assert commands == (StartTrial(trial_id=TID, restore_from=donor),)


def test_an_exploit_of_a_waiting_trial_goes_through_the_table() -> None:
    donor = persistent("/donor/checkpoint_000004", training_iteration=4)
    exploit = Exploit(donor_id="d", config={"lr": 0.2}, experiment_tag="1@p", restore_from=donor)
    taken = WaitingExploit(TID, exploit)
    for status in (PAUSED, PENDING):
        waiting = replace(running(), status=status)
        assert lifecycle.apply(waiting, taken) == lifecycle.exploit_waiting(waiting, exploit)
    saving = replace(running(), status=PAUSED, saving_to=(PERSISTENT,))
    assert isinstance(lifecycle.apply(saving, taken), Rejection)
    assert isinstance(lifecycle.apply(running(), taken), Rejection)


def test_a_policy_logged_before_keeps_no_exploit_to_restart_from() -> None:
    donor = persistent("/donor/checkpoint_000004", training_iteration=4)
    exploit = Exploit(
        donor_id="d",
        config={"lr": 0.2},
        experiment_tag="1@p",
        restore_from=donor,
        restarts_from_donor=False,
    )
    applied = lifecycle.conclude(
        running(),
        {"training_iteration": 1},
        11.0,
        Verdict(decision=Decision.CONTINUE, exploit=exploit),
    )
    assert applied.state.exploited is None


KEEPS_DUE = CheckpointPolicy(persist_due=True)


@pytest.mark.parametrize(
    ("policy", "storage"),
    [
        (KEEPS_DUE, PERSISTENT),  # a new experiment's policy
        (CheckpointPolicy(), MEMORY),  # one logged before persist_due: as it ran
    ],
)
def test_a_pause_on_a_result_with_a_reported_checkpoint_keeps_it(
    policy: CheckpointPolicy, storage: CheckpointStorage
) -> None:
    """The trainable reported a checkpoint with the result its scheduler
    pauses it on: that checkpoint is saved to storage, not only to memory,
    so the trial's results keep it (Ray persists every reported one)."""
    trial = running(make_spec(checkpoint_policy=policy))
    applied = lifecycle.conclude(
        trial,
        {"training_iteration": 2, "should_checkpoint": True},
        11.0,
        Verdict(decision=Decision.PAUSE),
    )
    assert applied.state.saving_to == (storage,)
    assert applied.commands == (
        SaveCheckpoint(trial_id=TID, storage=storage),
        PauseTrial(trial_id=TID),
    )


@pytest.mark.parametrize("decision", [Decision.CONTINUE, Decision.PAUSE])
def test_an_exploit_on_a_due_result_saves_the_trials_own_checkpoint_first(
    decision: Decision,
) -> None:
    donor = persistent("/donor/checkpoint_000004", training_iteration=4)
    exploit = Exploit(donor_id="d", config={"lr": 0.2}, experiment_tag="1@p", restore_from=donor)
    trial = running(make_spec(checkpoint_policy=KEEPS_DUE))
    applied = lifecycle.conclude(
        trial,
        {"training_iteration": 2, "should_checkpoint": True},
        11.0,
        Verdict(decision=decision, exploit=exploit),
    )
    first, second = applied.commands[:2]
    assert first == SaveCheckpoint(trial_id=TID, storage=PERSISTENT)  # labelled as its own
    assert isinstance(second, ResetTrial)
    assert applied.state.saving_to[0] is PERSISTENT


def test_resume_restores_the_memory_checkpoint() -> None:
    saving = paused_saving()
    memory = in_memory("obj-1", training_iteration=1, loss=0.5)
    paused_state, commands = step(saving, saved(memory))
    assert paused_state == replace(
        saving,
        saving_to=(),
        checkpoints=CheckpointHistory(memory=memory, memory_is_newest=True),
    )
    assert commands == ()
    resumed, commands = step(paused_state, start(30.0))
    assert resumed == replace(paused_state, status=RUNNING, restoring_from=memory)
    assert commands == (StartTrial(trial_id=TID, restore_from=memory),)
    restored, commands = step(resumed, TrialRestored(trial_id=TID, at=31.0))
    assert restored == replace(
        resumed, restoring_from=None, recorded_result={"training_iteration": 1, "loss": 0.5}
    )
    assert commands == ()


def test_start_is_refused_while_a_save_is_in_flight() -> None:
    rejection = refuse(paused_saving(), start(20.0))
    assert "in flight" in rejection.reason


def test_restored_without_a_restore_in_progress_is_rejected() -> None:
    refuse(running_with_result(), TrialRestored(trial_id=TID, at=20.0))


def test_restoring_a_checkpoint_without_metrics_keeps_the_last_result() -> None:
    trial, _ = step(new_trial(make_spec(restore_path="/restore/me")), start(10.0))
    restored, _ = step(trial, TrialRestored(trial_id=TID, at=11.0))
    assert restored == replace(trial, restoring_from=None)


# --- failures ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_failures", "num_failures", "expected"),
    [(0, 0, False), (1, 0, True), (1, 1, False), (2, 1, True), (2, 2, False), (-1, 1000, True)],
)
def test_should_recover(max_failures: int, num_failures: int, expected: bool) -> None:
    trial = replace(new_trial(make_spec(max_failures=max_failures)), num_failures=num_failures)
    assert should_recover(trial) is expected


def test_with_max_failures_zero_the_first_failure_is_final() -> None:
    trial = running_with_result(make_spec(max_failures=0))
    state, commands = step(trial, failed("Traceback: boom"))
    assert state == replace(trial, status=ERROR, num_failures=1, error_message="Traceback: boom")
    assert commands == (
        StopTrial(
            trial_id=TID, error="Failure # 1 (occurred at 2023-11-14_22-13-20)\nTraceback: boom\n"
        ),
    )
    refuse(state, start(AT + 1))


@pytest.mark.parametrize("max_failures", [1, 2])
def test_max_failures_n_allows_n_restarts(max_failures: int) -> None:
    state = running(make_spec(max_failures=max_failures))
    for number in range(1, max_failures + 1):
        state, commands = step(state, failed(f"boom {number}"))
        assert state.status is PENDING
        assert state.num_failures == number
        assert commands == (StopTrial(trial_id=TID, error=entry(number, f"boom {number}")),)
        state, _ = step(state, start(AT + number))
    last = max_failures + 1
    state, commands = step(state, failed(f"boom {last}"))
    assert state.status is ERROR
    assert state.num_failures == last
    assert commands == (StopTrial(trial_id=TID, error=entry(last, f"boom {last}")),)


def test_negative_max_failures_retries_forever() -> None:
    state = running(make_spec(max_failures=-1))
    for number in range(1, 6):
        state, commands = step(state, failed(f"boom {number}"))
        assert state.status is PENDING
        assert state.num_failures == number
        assert state.error_message == f"boom {number}"
        assert commands == (StopTrial(trial_id=TID, error=entry(number, f"boom {number}")),)
        state, _ = step(state, start(AT + number))
    assert state.status is RUNNING


def test_a_failure_drops_the_memory_checkpoint_and_restarts_from_persistent() -> None:
    spec = make_spec(max_failures=-1)
    state, _ = step(running(spec), result(11.0, training_iteration=1, should_checkpoint=True))
    p1 = persistent("/c1", training_iteration=1)
    state, _ = step(state, saved(p1))
    state, _ = step(state, result(12.0, training_iteration=2))
    state, _ = step(state, PauseRequested(trial_id=TID, at=13.0))
    m1 = in_memory("obj-1", training_iteration=2)
    state, _ = step(state, saved(m1))
    state, commands = step(state, start(14.0))
    assert commands == (StartTrial(trial_id=TID, restore_from=m1),)
    assert state.restoring_from == m1
    crashed, _ = step(state, failed())
    assert crashed == replace(
        state,
        status=PENDING,
        num_failures=1,
        error_message="boom",
        restoring_from=None,
        checkpoints=CheckpointHistory(persistent=(p1,)),
    )
    restarted, commands = step(crashed, start(15.0))
    assert restarted.restoring_from == p1
    assert commands == (StartTrial(trial_id=TID, restore_from=p1),)
    restored, _ = step(restarted, TrialRestored(trial_id=TID, at=16.0))
    assert restored.last_result == {"training_iteration": 1}


def test_a_failure_abandons_saves_in_flight() -> None:
    spec = make_spec(max_failures=-1, checkpoint_policy=CheckpointPolicy(frequency=1))
    state, _ = step(running(spec), result(11.0, training_iteration=1))
    assert state.saving_to == (PERSISTENT,)
    crashed, _ = step(state, failed())
    assert crashed.saving_to == ()
    refuse(crashed, saved(persistent("/late")))


def test_a_failure_while_the_pause_save_is_in_flight() -> None:
    trial = paused_saving(make_spec(max_failures=-1))
    state, commands = step(trial, failed("save failed"))
    assert state == replace(
        trial, status=PENDING, num_failures=1, error_message="save failed", saving_to=()
    )
    assert commands == (StopTrial(trial_id=TID, error=entry(1, "save failed")),)


def test_a_failure_of_a_paused_trial_without_a_save_is_rejected() -> None:
    rejection = refuse(paused(), failed())
    assert "paused" in rejection.reason


# --- stop requests -----------------------------------------------------------


def test_stop_a_pending_trial() -> None:
    trial = new_trial(make_spec(checkpoint_policy=CheckpointPolicy(at_end=True)))
    state, commands = step(trial, StopRequested(trial_id=TID, at=5.0))
    assert state == replace(trial, status=TERMINATED)
    assert commands == (StopTrial(trial_id=TID),)


def test_stop_a_paused_trial() -> None:
    trial = paused()
    state, commands = step(trial, StopRequested(trial_id=TID, at=20.0))
    assert state == replace(trial, status=TERMINATED)
    assert commands == (StopTrial(trial_id=TID),)


def test_stop_a_running_trial_marks_its_last_result_done() -> None:
    trial = running_with_result()
    state, commands = step(trial, StopRequested(trial_id=TID, at=20.0))
    assert state == replace(
        trial,
        status=TERMINATED,
        recorded_result=annotated(done=True, training_iteration=1, loss=0.5),
    )
    assert commands == (StopTrial(trial_id=TID),)


def test_stop_a_running_trial_with_at_end_saves_first() -> None:
    trial = running_with_result(make_spec(checkpoint_policy=CheckpointPolicy(at_end=True)))
    state, commands = step(trial, StopRequested(trial_id=TID, at=20.0))
    assert state == replace(
        trial,
        status=TERMINATED,
        recorded_result=annotated(done=True, training_iteration=1, loss=0.5),
        saving_to=(PERSISTENT,),
    )
    assert commands == (
        SaveCheckpoint(trial_id=TID, storage=PERSISTENT),
        StopTrial(trial_id=TID),
    )


def test_stop_a_terminated_trial_is_rejected() -> None:
    rejection = refuse(terminated(), StopRequested(trial_id=TID, at=20.0))
    assert "CheckpointSaved" in rejection.reason


def test_stop_a_trial_in_error_is_rejected() -> None:
    rejection = refuse(errored(), StopRequested(trial_id=TID, at=20.0))
    assert "final" in rejection.reason


# --- resources ---------------------------------------------------------------


@pytest.mark.parametrize("make", [IN_STATUS[PENDING], paused], ids=["PENDING", "PAUSED"])
def test_resources_update_while_not_running(make: typing.Callable[[], TrialState]) -> None:
    trial = make()
    wanted = Resources(cpu=4, gpu=1, custom={"accelerator_x": 0.5})
    state, commands = step(trial, ResourcesUpdateRequested(trial_id=TID, at=20.0, resources=wanted))
    assert state == replace(trial, spec=replace(trial.spec, resources=wanted))
    assert commands == ()


def test_resources_update_while_running_is_rejected() -> None:
    event = ResourcesUpdateRequested(trial_id=TID, at=20.0, resources=Resources(cpu=4))
    rejection = refuse(running_with_result(), event)
    assert "running" in rejection.reason.lower()


# --- rejections --------------------------------------------------------------


@pytest.mark.parametrize("event", sample_events(trial_id="other"), ids=lambda e: type(e).__name__)
def test_events_for_another_trial_are_rejected(event: TrialEvent) -> None:
    rejection = refuse(running_with_result(), event)
    assert "other" in rejection.reason


REJECTED_PAIRS = [
    (status, event)
    for status in TrialStatus
    for event in sample_events()
    if (status, type(event)) not in TRANSITIONS
]


@pytest.mark.parametrize(
    ("status", "event"),
    REJECTED_PAIRS,
    ids=[f"{s.value}-{type(e).__name__}" for s, e in REJECTED_PAIRS],
)
def test_events_outside_the_table_are_rejected(status: TrialStatus, event: TrialEvent) -> None:
    trial = IN_STATUS[status]()
    assert trial.status is status
    rejection = refuse(trial, event)
    if isinstance(event, ResourcesUpdateRequested) and status is RUNNING:
        assert "running" in rejection.reason.lower()
        return
    # Otherwise the reason tells what trial events the status would accept.
    trial_events = typing.get_args(TrialEvent)
    accepted = [e.__name__ for (s, e) in TRANSITIONS if s is status and e in trial_events]
    assert all(name in rejection.reason for name in accepted)
    if not accepted:
        assert "final" in rejection.reason


def test_terminated_and_error_accept_nothing_but_the_exit_save_an_interrupt_and_a_resume() -> None:
    """The save taken on the way out either lands or fails; an interrupt
    keeps both; a resume keeps TERMINATED and takes ERROR back to PENDING
    only when asked to."""
    assert [e for (s, e) in TRANSITIONS if s is TERMINATED] == [
        CheckpointSaved,
        TrialFailed,
        ExperimentInterrupted,
        ExperimentResumed,
    ]
    assert {r.targets for (s, _), r in TRANSITIONS.items() if s is TERMINATED} == {(TERMINATED,)}
    assert [e for (s, e) in TRANSITIONS if s is ERROR] == [
        ExperimentInterrupted,
        ExperimentResumed,
    ]
    errored = IN_STATUS[ERROR]()
    for flags, status in [
        ({}, ERROR),
        ({"resume_errored": True}, PENDING),
        ({"restart_errored": True}, PENDING),
    ]:
        outcome = apply(errored, ExperimentResumed(at=9.0, **flags))
        assert isinstance(outcome, Applied)
        assert outcome.state.status is status


def test_every_handler_stays_on_its_row() -> None:
    """`apply` checks each outcome against its row's targets: a handler that
    leads elsewhere is a bug, raised, never a silent off-table change."""
    trial = IN_STATUS[PENDING]()
    rule = TRANSITIONS[(PENDING, StartRequested)]
    broken = {**TRANSITIONS, (PENDING, StartRequested): rule._replace(targets=(PAUSED,))}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lifecycle, "TRANSITIONS", broken)
        with pytest.raises(lifecycle.OffTableError, match="StartRequested took a PENDING trial"):
            apply(trial, StartRequested(trial_id=trial.trial_id, at=1.0))


# --- crash recovery ----------------------------------------------------------


def test_reset_after_crash_turns_running_into_pending_and_forgets_the_workers() -> None:
    p1 = persistent("/c1", training_iteration=1)
    m1 = in_memory("obj-1", training_iteration=2)
    trial = replace(
        running_with_result(),
        checkpoints=CheckpointHistory(persistent=(p1,), memory=m1, memory_is_newest=True),
        saving_to=(PERSISTENT, MEMORY),
        restoring_from=m1,
    )
    reset = reset_after_crash(trial)
    assert reset == replace(
        trial,
        status=PENDING,
        checkpoints=CheckpointHistory(persistent=(p1,)),
        saving_to=(),
        restoring_from=None,
    )
    _, commands = step(reset, start(50.0))
    assert commands == (StartTrial(trial_id=TID, restore_from=p1),)


@pytest.mark.parametrize("status", [PENDING, PAUSED, TERMINATED, ERROR])
def test_reset_after_crash_keeps_other_statuses(status: TrialStatus) -> None:
    trial = IN_STATUS[status]()
    reset = reset_after_crash(trial)
    assert reset.status is status
    assert reset.checkpoints.memory is None
    assert reset.saving_to == ()


# --- the table ---------------------------------------------------------------


def test_format_transitions_lists_every_row() -> None:
    lines = format_transitions().splitlines()
    assert lines[0].split()[:2] == ["status", "event"]
    assert len(lines) == len(TRANSITIONS) + 1
    for (status, event), rule in TRANSITIONS.items():
        matching = [
            line for line in lines[1:] if line.split()[:2] == [status.value, event.__name__]
        ]
        assert len(matching) == 1, (status, event)
        assert " | ".join(t.value for t in rule.targets) in matching[0]
        assert matching[0].endswith(rule.summary)


def test_a_failed_save_of_a_stopped_trial_is_dropped_and_the_trial_stays_terminated() -> None:
    spec = make_spec(checkpoint_policy=CheckpointPolicy(at_end=True))
    stopping, _ = step(running_with_result(spec), StopRequested(trial_id=TID, at=12.0))
    assert stopping.status is TERMINATED
    assert stopping.saving_to == (PERSISTENT,)
    state, commands = step(stopping, failed("disk full"))
    assert state == replace(stopping, saving_to=())
    assert commands == ()


def test_a_failure_of_a_terminated_trial_without_a_save_is_rejected() -> None:
    rejection = refuse(terminated(), failed())
    assert "terminated trial without a save in flight" in rejection.reason


@pytest.mark.parametrize(
    ("status", "exported"),
    [
        (TrialStatus.TERMINATED, ("model", "h5")),
        (TrialStatus.ERROR, ()),
        (TrialStatus.RUNNING, ()),
        (TrialStatus.PAUSED, ()),
    ],
)
def test_a_trial_exports_its_formats_only_when_it_ended_well(
    status: TrialStatus, exported: tuple[str, ...]
) -> None:
    trial = replace(new_trial(make_spec(export_formats=("model", "h5"))), status=status)
    assert [f.value for f in lifecycle.exports(trial)] == list(exported)
    assert lifecycle.exports(replace(trial, spec=make_spec())) == ()


# --- judged results and interrupts -------------------------------------------


def test_a_judged_result_carries_out_the_joined_verdict() -> None:
    """The experiment's row: a PAUSE from the policies pauses, saving to
    memory first, where the trial's own rules alone would go on."""
    trial = running()
    report = result(11.0, training_iteration=1, loss=0.5)
    judged = JudgedResult.of(report, dict(report.result), Verdict(decision=Decision.PAUSE))
    state, commands = step(trial, judged)
    assert state.status is PAUSED
    assert state.last_result == annotated(training_iteration=1, loss=0.5)
    assert commands == (
        SaveCheckpoint(trial_id=TID, storage=MEMORY),
        PauseTrial(trial_id=TID),
    )
    alone, _ = step(trial, report)
    assert alone.status is RUNNING


def test_a_judged_failure_counts_a_failure() -> None:
    trial = running(make_spec(max_failures=0))
    report = result(AT, training_iteration=1)
    judged = JudgedResult.of(report, dict(report.result), failure="no metric")
    state, commands = step(trial, judged)
    assert state.status is ERROR
    assert state.num_failures == 1
    assert commands == (StopTrial(trial_id=TID, error=entry(1, "no metric")),)


def test_judge_alone_reads_the_stopping_criterion() -> None:
    trial = running(make_spec(stopping_criterion={"training_iteration": 2}))
    assert judge_alone(trial, result(11.0, training_iteration=1)).verdict.decision is (
        Decision.CONTINUE
    )
    assert judge_alone(trial, result(11.0, training_iteration=2)).verdict.decision is (
        Decision.STOP
    )
    unreadable = judge_alone(trial, result(11.0, loss=1.0))
    assert unreadable.failure is not None
    assert "training_iteration" in unreadable.failure


@pytest.mark.parametrize("status", list(TrialStatus))
def test_an_interrupt_leaves_every_trial_as_a_crash_would(status: TrialStatus) -> None:
    """Unfinished trials (and a finished one with a save in flight) are
    reset as after a crash; a finished one without a save is kept as it is."""
    trial = IN_STATUS[status]()
    state, commands = step(trial, ExperimentInterrupted(at=20.0))
    assert commands == ()
    if trial.is_finished and not trial.saving_to:
        assert state is trial
    else:
        assert state == reset_after_crash(trial)


def test_a_terminated_trial_saving_on_its_way_out_drops_the_save_on_an_interrupt() -> None:
    at_end = make_spec(checkpoint_policy=CheckpointPolicy(at_end=True))
    state, _ = step(running_with_result(at_end), StopRequested(trial_id=TID, at=12.0))
    assert state.status is TERMINATED
    assert state.saving_to
    state, _ = step(state, ExperimentInterrupted(at=20.0))
    assert state.status is TERMINATED
    assert state.saving_to == ()
