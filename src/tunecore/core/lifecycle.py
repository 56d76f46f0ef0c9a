"""The lifecycle of one trial: `apply(trial, event)` and its transition table.

Rules this module lives by:

- Everything that decides a trial's next status lives here. Which events a
  status accepts, the statuses they can lead to and the handler that
  computes the trial after them are one table (`TRANSITIONS`, a `Rule`
  per row), printable with `format_transitions()` and drawn in
  docs/architecture.md from the same table. `apply` runs the row's handler
  and checks that the status it leads to is one its row lists
  (`OffTableError` otherwise: a bug here, never the caller's).
- The table keys on a trial's own events, on the three experiment-wide
  events that change trials: `ClusterResourcesChanged` (a PENDING trial
  that asks for more than the whole cluster fails), `ExperimentInterrupted`
  and `ExperimentResumed` (every status has a row for each), on a
  `JudgedResult`: a result with the experiment's answer to it, which is how
  the experiment's step hands every result to the table, and on a
  `WaitingExploit`: PBT's exploit of a trial that waits.
- `apply` never mutates its arguments and never raises on a bad event: an
  event the table does not list for the trial's status, or one that breaks a
  rule the table cannot express (a checkpoint nobody asked for), comes back
  as a `Rejection` and the caller keeps the old state.
- TERMINATED and ERROR are absorbing within a run: no event of the run
  leaves them. A TERMINATED trial still accepts the checkpoint it asked
  for on the way out; only a resume asked to (`resume_errored`,
  `restart_errored`) takes an ERROR trial back to PENDING.
- A failure is counted exactly once, when `TrialFailed` is applied; the
  recovery check uses the count before it (so `max_failures=N` allows N
  restarts, and -1 allows them forever).
- A trial's worker answers in order, so saves complete in the order they
  were requested (`saving_to` is a FIFO the shell must honour).

Every path runs through `apply`, the hottest one included: a running
trial's result comes in as a `ResultReported` (the trial's own rules
judge it: `judge_alone`), or as the `JudgedResult` the experiment's step
builds with its policies' joined verdict, or the failure the result is.
Both rows end in `conclude` (or `fail`, or `end_training` for the end
marker), and `own_verdict` is the one place the trial's stopping
criterion is read. The finer-grained functions stay public for the
scheduler tests and the demo that drive a trial by hand.

Why one module of over 400 lines: the table, the handlers its rows name
and the functions they compose are one unit that is read together (a
row's targets are checked against what its handler does); the table
alone is a third of it, one row per few lines as the formatter lays it out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple, TypeAlias, TypeVar, cast, get_args

import msgspec

from tunecore.core.checkpoints import current_checkpoint, record_checkpoint, should_checkpoint
from tunecore.core.dispatch import handles
from tunecore.core.naming import error_entry
from tunecore.core.resources import never_fits
from tunecore.core.results import (
    HOSTNAME,
    NODE_IP,
    PID,
    SHOULD_CHECKPOINT,
    analyse,
    annotate,
    flatten,
    is_end_marker,
    marked_done,
    with_last_result,
)
from tunecore.core.stopping import StopCriterionError, check_stop
from tunecore.model import (
    Applied,
    CheckpointHistory,
    CheckpointSaved,
    CheckpointStorage,
    ClusterResourcesChanged,
    Command,
    ContinueTrial,
    Decision,
    DeleteCheckpoint,
    ExperimentInterrupted,
    ExperimentResumed,
    Exploited,
    ExportFormat,
    JsonDict,
    JsonValue,
    Location,
    PauseRequested,
    PauseTrial,
    RecordExploit,
    Rejection,
    ResetTrial,
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
from tunecore.model.decision import CONTINUE, STOP, Exploit, Verdict
from tunecore.model.numbers import is_int

Outcome = Applied | Rejection


class JudgedResult(msgspec.Struct, frozen=True, gc=False):
    """A RUNNING trial's result (the `ResultReported`'s fields) with the
    answer to it: the verdict the trial's own rules and the experiment's
    policies joined into, or the `failure` the result is (a metric missing
    or not a number, a stopping criterion it cannot be checked against).
    `flat` is the result flattened, as the judges read it. Built by the
    experiment's step (or by `judge_alone`) on every result, so it is flat
    and cheap; never logged: the log keeps the `ResultReported`."""

    trial_id: str
    at: float
    result: JsonDict
    flat: JsonDict
    verdict: Verdict = CONTINUE
    failure: str | None = None

    @classmethod
    def of(
        cls,
        report: ResultReported,
        flat: JsonDict,
        verdict: Verdict = CONTINUE,
        failure: str | None = None,
    ) -> JudgedResult:
        """`report` judged: `verdict`, or the `failure` it is."""
        return cls(report.trial_id, report.at, report.result, flat, verdict, failure)


class WaitingExploit(msgspec.Struct, frozen=True, gc=False):
    """PBT's exploit of a waiting trial (PAUSED or PENDING, no save in
    flight), as the scheduler made it (`ExploitsWaiting`). Built by the
    experiment's step after the event that made it possible; never logged:
    the log keeps that event."""

    trial_id: str
    exploit: Exploit


LifecycleEvent: TypeAlias = (
    TrialEvent
    | ClusterResourcesChanged
    | ExperimentInterrupted
    | ExperimentResumed
    | JudgedResult
    | WaitingExploit
)
"""What the table keys on: a trial's own events, the three experiment-wide
events that change trials (what the cluster holds, an interrupt, a
resume), a judged result and an exploit of a waiting trial."""

PENDING = TrialStatus.PENDING
RUNNING = TrialStatus.RUNNING
PAUSED = TrialStatus.PAUSED
TERMINATED = TrialStatus.TERMINATED
ERROR = TrialStatus.ERROR


def new_trial(spec: TrialSpec) -> TrialState:
    """A trial is born PENDING, with nothing recorded."""
    return TrialState(spec=spec)


def reset_after_crash(trial: TrialState) -> TrialState:
    """The trial as it resumes from a persisted state after the driver died:
    RUNNING becomes PENDING; saves and restores in flight and the memory
    checkpoint died with the workers, so a restart uses the newest persistent
    checkpoint."""
    status = PENDING if trial.status is RUNNING else trial.status
    return msgspec.structs.replace(
        trial,
        status=status,
        saving_to=(),
        restoring_from=None,
        checkpoints=CheckpointHistory(persistent=trial.checkpoints.persistent),
        exploited=_saves_dropped(trial.exploited),
    )


def retry_errored(trial: TrialState) -> TrialState:
    """An ERROR trial made PENDING again (a resume with `resume_errored`):
    it restarts from its newest persistent checkpoint, with its failures
    still counted."""
    return msgspec.structs.replace(reset_after_crash(trial), status=PENDING)


def should_recover(trial: TrialState) -> bool:
    """Retry while fewer than `max_failures` failures were counted, forever
    when it is negative. True even without a checkpoint: the trial then
    starts over from scratch."""
    max_failures = trial.spec.max_failures
    return max_failures < 0 or trial.num_failures < max_failures


def exports(trial: TrialState) -> tuple[ExportFormat, ...]:
    """What a trial that has just been stopped exports from its worker
    (`export_formats`): its formats when it ended TERMINATED; an errored
    trial exports nothing, as in Ray. (The shell asks only a worker that
    still holds the trial.)"""
    return trial.spec.export_formats if trial.status is TERMINATED else ()


def start(trial: TrialState, at: float) -> Applied:
    """PENDING or PAUSED -> RUNNING, restoring the current checkpoint if any.
    `start_time` is set by the first start only."""
    restore_from = current_checkpoint(trial)
    started = msgspec.structs.replace(
        trial,
        status=RUNNING,
        start_time=at if trial.start_time is None else trial.start_time,
        restoring_from=restore_from,
    )
    return Applied(started, (StartTrial(trial_id=trial.trial_id, restore_from=restore_from),))


def record_result(
    trial: TrialState,
    result: JsonDict,
    at: float,
    *,
    terminate: bool,
    flat: Mapping[str, JsonValue] | None = None,
) -> TrialState:
    """Make `result` the last result (annotated with trial id, `done` and the
    experiment tag), fold it into the metric analysis and take the worker
    location it reports (`hostname` or `node_ip`, and `pid`). `flat` is the
    result flattened, when the caller has it already (the annotations are
    never numbers, so analysing the plain result gives the same stats)."""
    recorded = annotate(
        result,
        trial_id=trial.trial_id,
        done=terminate,
        experiment_tag=trial.spec.experiment_tag,
    )
    location = trial.location
    if "hostname" in result or "node_ip" in result or "pid" in result:
        location = _reported_location(recorded, location)
    kept = analyse(trial, flatten(result) if flat is None else flat, flatten(recorded))
    if trial.unanalysed:  # a restore's: every metric of a recorded result is analysed
        trial = msgspec.structs.replace(trial, unanalysed=())
    return msgspec.structs.replace(
        trial,
        recorded_result=recorded,
        last_update_time=at,
        recorded_stats=kept,
        location=location,
    )


def _reported_location(result: JsonDict, known: Location) -> Location:
    """The worker location a result reports, keeping what it leaves out."""
    hostname = result.get(HOSTNAME, result.get(NODE_IP))
    pid = result.get(PID)
    if hostname == known.hostname and pid == known.pid and is_int(pid):
        return known  # the same worker as the last result: nearly always
    return Location(
        hostname=hostname if isinstance(hostname, str) else known.hostname,
        pid=pid if is_int(pid) else known.pid,
    )


def _with_save(
    trial: TrialState,
    storage: CheckpointStorage,
    commands: list[Command],
    result: JsonDict | None = None,
) -> TrialState:
    commands.append(SaveCheckpoint(trial_id=trial.trial_id, storage=storage, result=result))
    return msgspec.structs.replace(trial, saving_to=(*trial.saving_to, storage))


def _persists_due(trial: TrialState) -> bool:
    """Whether a checkpoint due on the trial's last result is saved to
    storage even when the trial pauses or is exploited on it (see
    `CheckpointPolicy.persist_due`)."""
    policy = trial.spec.checkpoint_policy
    return policy.persist_due is True and should_checkpoint(policy, trial.last_result)


def end_training(trial: TrialState, marker: Mapping[str, JsonValue], at: float) -> Applied:
    """The trainable ended on its own (`marker` is its end marker, see
    `results.is_end_marker`): the trial is TERMINATED on its last result,
    now marked `done` (a trial that never reported keeps no result). The
    marker counts as no result: nothing is analysed or checked, and a save
    is due only for `checkpoint_at_end` or a checkpoint the marker flags
    (one the function made after its last report)."""
    ended = msgspec.structs.replace(marked_done(trial), last_update_time=at)
    commands: list[Command] = []
    if trial.spec.checkpoint_policy.at_end or marker.get(SHOULD_CHECKPOINT) is True:
        ended = _with_save(ended, CheckpointStorage.PERSISTENT, commands)
    commands.append(StopTrial(trial_id=trial.trial_id))
    return Applied(msgspec.structs.replace(ended, status=TERMINATED), tuple(commands))


def decide(trial: TrialState, decision: Decision, *, checkpoint: bool = False) -> Applied:
    """Carry out a decision on a RUNNING trial whose result was just
    recorded: CONTINUE (checkpointing first when due, or when `checkpoint`
    asks), PAUSE (a memory checkpoint, persistent when `checkpoint` asks or
    one is due and the policy keeps what is due; release the worker) or
    STOP (checkpointing first when due)."""
    trial_id = trial.trial_id
    due = checkpoint or should_checkpoint(trial.spec.checkpoint_policy, trial.last_result)
    if decision is Decision.CONTINUE and not due:
        return Applied(trial, (ContinueTrial(trial_id=trial_id),))  # the common case
    commands: list[Command] = []
    if decision is Decision.PAUSE:
        persist = checkpoint or _persists_due(trial)
        storage = CheckpointStorage.PERSISTENT if persist else CheckpointStorage.MEMORY
        return _pause(_with_save(trial, storage, commands), commands)
    if due:
        trial = _with_save(trial, CheckpointStorage.PERSISTENT, commands)
    if decision is Decision.CONTINUE:
        commands.append(ContinueTrial(trial_id=trial_id))
        return Applied(trial, tuple(commands))
    commands.append(StopTrial(trial_id=trial_id))
    return Applied(msgspec.structs.replace(trial, status=TERMINATED), tuple(commands))


def _pause(trial: TrialState, commands: list[Command]) -> Applied:
    """PAUSED after `commands` (its save among them), the worker released."""
    commands.append(PauseTrial(trial_id=trial.trial_id))
    return Applied(msgspec.structs.replace(trial, status=PAUSED), tuple(commands))


def exploit(trial: TrialState, taken: Exploit) -> Applied:
    """PBT's exploit on a RUNNING trial: it takes the exploit's config and
    continues from another trial's checkpoint, keeping its own id, history
    and failures; until it saves one of its own persistently, that
    checkpoint is where it restarts from (`TrialState.exploited`)."""
    reset = _exploited(trial, taken)
    reset = msgspec.structs.replace(reset, restoring_from=taken.restore_from)
    command = ResetTrial(
        trial_id=trial.trial_id,
        config=taken.config,
        experiment_tag=taken.experiment_tag,
        restore_from=taken.restore_from,
    )
    return Applied(reset, (command, *_records(taken)))


def exploit_waiting(trial: TrialState, taken: Exploit) -> Applied:
    """PBT's exploit on a PAUSED or PENDING trial with no save in flight
    (synchronous PBT exploits a population waiting at its barrier): it takes
    the exploit's config, and its next start restores the donor's
    checkpoint. Its memory checkpoint, older now, is dropped. The table's
    `WaitingExploit` rows carry it out (`_on_waiting_exploit`)."""
    exploited = _exploited(trial, taken)
    commands: list[Command] = []
    memory = trial.checkpoints.memory
    if memory is not None:
        commands.append(DeleteCheckpoint(trial_id=trial.trial_id, checkpoint=memory))
        history = CheckpointHistory(persistent=trial.checkpoints.persistent)
        exploited = msgspec.structs.replace(exploited, checkpoints=history)
    commands += _records(taken)
    return Applied(exploited, tuple(commands))


def _exploited(trial: TrialState, taken: Exploit) -> TrialState:
    spec = msgspec.structs.replace(
        trial.spec, config=taken.config, experiment_tag=taken.experiment_tag
    )
    if not taken.restarts_from_donor:
        return msgspec.structs.replace(trial, spec=spec)
    since = Exploited(checkpoint=taken.restore_from, saves_ahead=len(trial.saving_to))
    return msgspec.structs.replace(trial, spec=spec, exploited=since)


def _records(taken: Exploit) -> tuple[RecordExploit, ...]:
    return () if taken.record is None else (taken.record,)


def _save_landed(exploited: Exploited | None, storage: CheckpointStorage) -> Exploited | None:
    """`exploited` once a save landed (or was dropped): one of the saves
    ahead of it, or a persistent save of the trial's own that ends it."""
    if exploited is None:
        return None
    if exploited.saves_ahead:
        return msgspec.structs.replace(exploited, saves_ahead=exploited.saves_ahead - 1)
    return None if storage is CheckpointStorage.PERSISTENT else exploited


def _saves_dropped(exploited: Exploited | None) -> Exploited | None:
    """`exploited` once every save in flight was dropped (the worker died)."""
    if exploited is None or not exploited.saves_ahead:
        return exploited
    return msgspec.structs.replace(exploited, saves_ahead=0)


def conclude(
    trial: TrialState,
    result: JsonDict,
    at: float,
    verdict: Verdict,
    *,
    flat: JsonDict | None = None,
) -> Applied:
    """The one way a RUNNING trial takes a result: record it and carry out
    `verdict`, the answer to it (the trial's own rules, joined by the
    experiment with its scheduler's and stopper's): stop, pause or go on,
    saving first when asked, or PBT's exploit and go on or pause. An
    exploit first saves a checkpoint due on this result (the policy keeping
    what is due), as the trial's own; a paused one then restores the
    donor's checkpoint on the worker and saves that state to memory,
    labelled with the donor's result, before the worker is released: the
    trial resumes from the donor's state."""
    terminate = verdict.decision is Decision.STOP
    recorded = record_result(trial, result, at, terminate=terminate, flat=flat)
    taken = verdict.exploit
    if taken is not None and not terminate:
        commands: list[Command] = []
        if _persists_due(recorded):
            recorded = _with_save(recorded, CheckpointStorage.PERSISTENT, commands)
        reset = exploit(recorded, taken)
        commands += reset.commands
        if verdict.decision is Decision.PAUSE:
            label = taken.restore_from.metrics or None
            paused = _with_save(reset.state, CheckpointStorage.MEMORY, commands, result=label)
            return _pause(paused, commands)
        commands.append(ContinueTrial(trial_id=trial.trial_id))
        return Applied(reset.state, tuple(commands))
    return decide(recorded, verdict.decision, checkpoint=verdict.checkpoint)


def fail(trial: TrialState, error: str, at: float, *, recoverable: bool = True) -> Applied:
    """Count the failure and stop the worker, writing the error entry; the
    trial goes back to PENDING while `should_recover` held before this
    failure (and the failure is `recoverable`), else to ERROR. The memory
    checkpoint is dropped: the worker that held it is gone, so a retry
    restores the newest persistent one."""
    recover = recoverable and should_recover(trial)
    failures = trial.num_failures + 1
    failed = msgspec.structs.replace(
        trial,
        status=PENDING if recover else ERROR,
        num_failures=failures,
        error_message=error,
        saving_to=(),
        restoring_from=None,
        checkpoints=CheckpointHistory(persistent=trial.checkpoints.persistent),
        exploited=_saves_dropped(trial.exploited),
    )
    entry = error_entry(failures, at, error)
    return Applied(failed, (StopTrial(trial_id=trial.trial_id, error=entry),))


def own_verdict(trial: TrialState, flat: JsonDict) -> Verdict | StopCriterionError:
    """What the trial's own rules say about a result (`flat`, flattened):
    `STOP` on `done` or a reached criterion, else `CONTINUE` (these very
    constants, so a caller may test them with `is`), or the error of a
    criterion the result cannot be checked against. The one place the
    stopping criterion is read."""
    stopped = check_stop(trial.spec.stopping_criterion, flat)
    if stopped is False:
        return CONTINUE
    return STOP if stopped is True else stopped


def judge_alone(trial: TrialState, event: ResultReported) -> JudgedResult:
    """A result judged by the trial's own rules only (no scheduler, no
    stopper): what the table's `ResultReported` row carries out."""
    flat = flatten(event.result)
    verdict = own_verdict(trial, flat)
    if isinstance(verdict, StopCriterionError):
        return JudgedResult.of(event, flat, failure=verdict.message)
    return JudgedResult.of(event, flat, verdict)


def _on_start_requested(trial: TrialState, event: StartRequested) -> Outcome:
    if trial.saving_to:
        return _reject(trial, event, "its checkpoint save is still in flight")
    return start(trial, event.at)


def _on_trial_started(trial: TrialState, event: TrialStarted) -> Outcome:
    """Where the worker is; and the directory's name, if it is the first
    one recorded (a name, once recorded, is the trial's for good)."""
    if event.dirname is None or trial.dirname is not None:
        return Applied(msgspec.structs.replace(trial, location=event.location))
    return Applied(msgspec.structs.replace(trial, location=event.location, dirname=event.dirname))


def _on_result(trial: TrialState, event: ResultReported) -> Outcome:
    if is_end_marker(event.result):
        return end_training(trial, event.result, event.at)
    return _on_judged(trial, judge_alone(trial, event))


def _on_judged(trial: TrialState, judged: JudgedResult) -> Outcome:
    if judged.failure is not None:
        return fail(trial, judged.failure, judged.at)
    return conclude(trial, judged.result, judged.at, judged.verdict, flat=judged.flat)


def _on_waiting_exploit(trial: TrialState, event: WaitingExploit) -> Outcome:
    if trial.saving_to:
        return _reject(trial, event, "its checkpoint save is still in flight")
    return exploit_waiting(trial, event.exploit)


def _on_checkpoint_saved(trial: TrialState, event: CheckpointSaved) -> Outcome:
    storage = event.checkpoint.storage
    if not trial.saving_to:
        return _reject(trial, event, "no checkpoint save was requested")
    if trial.saving_to[0] is not storage:
        return _reject(
            trial, event, f"the next save in flight is {trial.saving_to[0]}, not {storage}"
        )
    history, dropped = record_checkpoint(
        trial.checkpoints, event.checkpoint, trial.spec.checkpoint_policy
    )
    saved = msgspec.structs.replace(
        trial,
        checkpoints=history,
        saving_to=trial.saving_to[1:],
        exploited=_save_landed(trial.exploited, storage),
    )
    deletions = tuple(DeleteCheckpoint(trial_id=trial.trial_id, checkpoint=c) for c in dropped)
    return Applied(saved, deletions)


def _on_restored(trial: TrialState, event: TrialRestored) -> Outcome:
    if trial.restoring_from is None:
        return _reject(trial, event, "the trial is not restoring a checkpoint")
    metrics = trial.restoring_from.metrics
    restored = msgspec.structs.replace(trial, restoring_from=None)
    if metrics:
        restored = with_last_result(restored, metrics)
    return Applied(restored)


def _on_failed(trial: TrialState, event: TrialFailed) -> Outcome:
    if trial.status in (PAUSED, TERMINATED) and not trial.saving_to:
        status = trial.status.value.lower()
        return _reject(trial, event, f"a {status} trial without a save in flight has no worker")
    if trial.status is TERMINATED:
        # The trial's own work is done; only the save that failed is dropped
        # (saves answer in order), so the experiment can still end.
        exploited = _save_landed(trial.exploited, CheckpointStorage.MEMORY)  # nothing saved
        return Applied(
            msgspec.structs.replace(trial, saving_to=trial.saving_to[1:], exploited=exploited)
        )
    return fail(trial, event.error, event.at)


def _on_pause_requested(trial: TrialState, _event: PauseRequested) -> Outcome:
    return decide(trial, Decision.PAUSE)


def _on_stop_requested(trial: TrialState, _event: StopRequested) -> Outcome:
    commands: list[Command] = []
    if trial.status is RUNNING and trial.last_result:
        trial = marked_done(trial)
        if trial.spec.checkpoint_policy.at_end:
            trial = _with_save(trial, CheckpointStorage.PERSISTENT, commands)
    commands.append(StopTrial(trial_id=trial.trial_id))
    return Applied(msgspec.structs.replace(trial, status=TERMINATED), tuple(commands))


def _on_resources_update(trial: TrialState, event: ResourcesUpdateRequested) -> Outcome:
    spec = msgspec.structs.replace(trial.spec, resources=event.resources)
    return Applied(msgspec.structs.replace(trial, spec=spec, awaiting_resources=False))


def _on_cluster_known(trial: TrialState, event: ClusterResourcesChanged) -> Outcome:
    message = never_fits(trial.spec.resources, event.total)
    if message is None:
        return Applied(trial)
    return fail(trial, message, event.at, recoverable=False)


def _on_interrupted(trial: TrialState, _event: ExperimentInterrupted) -> Outcome:
    if trial.is_finished and not trial.saving_to:
        return Applied(trial)
    return Applied(reset_after_crash(trial))


def _on_resumed(trial: TrialState, event: ExperimentResumed) -> Outcome:
    status = trial.status
    if status is ERROR:
        if event.restart_errored:
            return Applied(new_trial(trial.spec))
        if event.resume_errored:
            return Applied(retry_errored(trial))
    # Saves in flight died with the old driver, a finished trial's too (the
    # save taken as it stopped): left in place, they would hold back the end.
    # So did the chain a waiting trial was in (`ChainTrials`).
    reset = reset_after_crash(trial)
    if reset.chained_behind is not None:
        reset = msgspec.structs.replace(reset, chained_behind=None)
    if status is not ERROR and status is not TERMINATED and not event.resume_unfinished:
        return Applied(msgspec.structs.replace(reset, status=TERMINATED))
    return Applied(reset)


_E = TypeVar("_E", bound="LifecycleEvent")
_Handler = Callable[[TrialState, "LifecycleEvent"], Outcome]


class Rule(NamedTuple):
    """One row of the table: the statuses an event can lead to, why, and
    the handler that computes the trial after it (`apply` checks that its
    status is one of `targets`)."""

    targets: tuple[TrialStatus, ...]
    summary: str
    handle: _Handler


def _row(
    status: TrialStatus,
    event: type[_E],
    targets: tuple[TrialStatus, ...],
    summary: str,
    handle: Callable[[TrialState, _E], Outcome],
) -> tuple[tuple[TrialStatus, type[LifecycleEvent]], Rule]:
    key = cast("type[LifecycleEvent]", event)  # mypy cannot widen type[_E] to the union
    return (status, key), Rule(targets, summary, handles(event, handle))


TRANSITIONS: Mapping[tuple[TrialStatus, type[LifecycleEvent]], Rule] = dict(
    [
        _row(
            PENDING,
            StartRequested,
            (RUNNING,),
            "start, restoring the current checkpoint",
            _on_start_requested,
        ),
        _row(PENDING, StopRequested, (TERMINATED,), "stop before it ever ran", _on_stop_requested),
        _row(
            PENDING,
            ResourcesUpdateRequested,
            (PENDING,),
            "ask for other resources",
            _on_resources_update,
        ),
        _row(
            PENDING,
            ClusterResourcesChanged,
            (PENDING, ERROR),
            "asks for more than the whole cluster has: it can never start",
            _on_cluster_known,
        ),
        _row(
            PENDING,
            WaitingExploit,
            (PENDING,),
            "take PBT's exploit: the donor's config, its checkpoint at the next start",
            _on_waiting_exploit,
        ),
        _row(
            PENDING,
            ExperimentInterrupted,
            (PENDING,),
            "stays: a resume runs it",
            _on_interrupted,
        ),
        _row(
            PENDING,
            ExperimentResumed,
            (PENDING, TERMINATED),
            "wait again; end if not resume_unfinished",
            _on_resumed,
        ),
        _row(
            RUNNING, TrialStarted, (RUNNING,), "the worker is up: record where", _on_trial_started
        ),
        _row(
            RUNNING,
            ResultReported,
            (RUNNING, TERMINATED, PENDING, ERROR),
            "record; stop on `done` or a criterion; checkpoint when due; "
            "an unevaluable criterion is a failure; the end marker stops",
            _on_result,
        ),
        _row(
            RUNNING,
            JudgedResult,
            (RUNNING, PAUSED, TERMINATED, PENDING, ERROR),
            "record; carry out the joined verdict (go on, pause, stop, save first, "
            "exploit); a failing result is a failure",
            _on_judged,
        ),
        _row(
            RUNNING,
            CheckpointSaved,
            (RUNNING,),
            "track the save; drop what retention cuts",
            _on_checkpoint_saved,
        ),
        _row(
            RUNNING,
            TrialRestored,
            (RUNNING,),
            "restore done: its result is the last one",
            _on_restored,
        ),
        _row(
            RUNNING,
            TrialFailed,
            (PENDING, ERROR),
            "count it; retry while should_recover",
            _on_failed,
        ),
        _row(
            RUNNING,
            PauseRequested,
            (PAUSED,),
            "save to memory, release the worker",
            _on_pause_requested,
        ),
        _row(
            RUNNING,
            StopRequested,
            (TERMINATED,),
            "stop; checkpoint first when at_end",
            _on_stop_requested,
        ),
        _row(
            RUNNING,
            ExperimentInterrupted,
            (PENDING,),
            "its worker goes with the driver: wait again, without what was in flight",
            _on_interrupted,
        ),
        _row(
            RUNNING,
            ExperimentResumed,
            (PENDING, TERMINATED),
            "its worker died with the driver: wait again, without what was in flight; "
            "end if not resume_unfinished",
            _on_resumed,
        ),
        _row(
            PAUSED,
            StartRequested,
            (RUNNING,),
            "resume from the current checkpoint",
            _on_start_requested,
        ),
        _row(
            PAUSED,
            CheckpointSaved,
            (PAUSED,),
            "the save taken on pausing",
            _on_checkpoint_saved,
        ),
        _row(
            PAUSED,
            TrialRestored,
            (PAUSED,),
            "the donor's state restored by PBT's exploit before its pause",
            _on_restored,
        ),
        _row(PAUSED, TrialFailed, (PENDING, ERROR), "the save taken on pausing failed", _on_failed),
        _row(PAUSED, StopRequested, (TERMINATED,), "stop while paused", _on_stop_requested),
        _row(
            PAUSED,
            WaitingExploit,
            (PAUSED,),
            "take PBT's exploit: the donor's config and checkpoint, its memory one dropped",
            _on_waiting_exploit,
        ),
        _row(
            PAUSED,
            ResourcesUpdateRequested,
            (PAUSED,),
            "ask for other resources",
            _on_resources_update,
        ),
        _row(
            PAUSED,
            ExperimentInterrupted,
            (PAUSED,),
            "stays, without the memory checkpoint and what was in flight",
            _on_interrupted,
        ),
        _row(
            PAUSED,
            ExperimentResumed,
            (PAUSED, TERMINATED),
            "the memory checkpoint is gone: resume from the newest persistent one; "
            "end if not resume_unfinished",
            _on_resumed,
        ),
        _row(
            TERMINATED,
            CheckpointSaved,
            (TERMINATED,),
            "the save taken on the way out",
            _on_checkpoint_saved,
        ),
        _row(
            TERMINATED,
            TrialFailed,
            (TERMINATED,),
            "the save taken on the way out failed: drop it",
            _on_failed,
        ),
        _row(
            TERMINATED,
            ExperimentInterrupted,
            (TERMINATED,),
            "stays; a save in flight is dropped",
            _on_interrupted,
        ),
        _row(
            TERMINATED,
            ExperimentResumed,
            (TERMINATED,),
            "stays; a save in flight is dropped",
            _on_resumed,
        ),
        _row(ERROR, ExperimentInterrupted, (ERROR,), "stays", _on_interrupted),
        _row(
            ERROR,
            ExperimentResumed,
            (ERROR, PENDING),
            "stays, unless resume_errored (from its newest persistent checkpoint) "
            "or restart_errored (from scratch)",
            _on_resumed,
        ),
    ]
)
"""The table: (status, event type) -> Rule. An event a status does not
list is rejected."""


def _reject(trial: TrialState, event: LifecycleEvent, reason: str) -> Rejection:
    return Rejection(
        trial_id=trial.trial_id, event=type(event).__name__, status=trial.status, reason=reason
    )


def accepted_events(status: TrialStatus) -> tuple[str, ...]:
    """The names of the trial events a trial in `status` accepts (the
    experiment-wide ones are not sent to a trial: a resume reaches every
    trial, whatever its status)."""
    return tuple(
        event.__name__ for (s, event) in TRANSITIONS if s is status and event in _TRIAL_EVENTS
    )


_TRIAL_EVENTS = frozenset(get_args(TrialEvent))


def check(trial: TrialState, event: LifecycleEvent) -> Rejection | None:
    """The rejection `apply` would give because the table does not allow
    `event` in the trial's status (or it is for another trial), else None."""
    owner = getattr(event, "trial_id", trial.trial_id)  # experiment-wide events: every trial
    if owner != trial.trial_id:
        return _reject(trial, event, f"the event is for trial {owner}")
    event_type = type(event)
    if (trial.status, event_type) not in TRANSITIONS:
        if event_type is ResourcesUpdateRequested and trial.status is RUNNING:
            return _reject(trial, event, "cannot update resources while the trial is running")
        accepted = ", ".join(accepted_events(trial.status)) or "nothing: the status is final"
        return _reject(trial, event, f"a {trial.status} trial accepts {accepted}")
    return None


class OffTableError(AssertionError):
    """A row's handler led somewhere its row does not list: a bug in this
    module, never the caller's."""


def apply(trial: TrialState, event: LifecycleEvent) -> Outcome:
    """The trial after `event`, with the commands for the shell; or a
    `Rejection` (and the trial unchanged) when the event is illegal. It
    runs on every result, so the legal case is looked up first and `check`
    only words a rejection."""
    rule = TRANSITIONS.get((trial.status, type(event)))
    trial_id = trial.spec.trial_id
    if rule is None or getattr(event, "trial_id", trial_id) != trial_id:  # a wide event: any
        rejection = check(trial, event)
        assert rejection is not None  # check words what the lookup found
        return rejection
    outcome = rule.handle(trial, event)
    if type(outcome) is Applied and outcome.state.status not in rule.targets:
        raise OffTableError(
            f"{type(event).__name__} took a {trial.status} trial to "
            f"{outcome.state.status}, which its row does not list"
        )
    return outcome


def transitions_dot() -> str:
    """The transition table as a Graphviz digraph: one node per status and
    one edge per (status, next status), labelled with the events that take
    it (what each does is in `format_transitions`); an edge that keeps the
    status is a loop. Made from `TRANSITIONS`, so the picture is the table
    the code runs."""
    events: dict[tuple[TrialStatus, TrialStatus], list[str]] = {}
    for (status, event), rule in TRANSITIONS.items():
        for target in rule.targets:
            events.setdefault((status, target), []).append(event.__name__)
    lines = [
        "digraph trial_lifecycle {",
        "  rankdir=LR; nodesep=0.8; ranksep=1.4;",
        '  node [shape=box, style=rounded, fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
        *(f"  {status.value};" for status in TrialStatus),
    ]
    for (status, target), names in events.items():
        label = "\\n".join(names)
        lines.append(f'  {status.value} -> {target.value} [label="{label}"];')
    lines.append("}")
    return "\n".join(lines)


def format_transitions() -> str:
    """The transition table as aligned text: status, event, targets, summary."""
    rows = [
        (status.value, event.__name__, " | ".join(t.value for t in rule.targets), rule.summary)
        for (status, event), rule in TRANSITIONS.items()
    ]
    header = ("status", "event", "next status", "what happens")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    lines = [
        f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}"
        for r in [header, *rows]
    ]
    return "\n".join(lines)
