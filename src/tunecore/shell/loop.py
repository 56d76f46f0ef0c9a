"""The imperative shell's loop: events in, `step`, commands out.

    while the experiment is not done:
        events = executor.next_events()   (or a Tick when nothing happened
                                           and the core says it matters)
        for each event: state, commands = step(state, event)
                        carry out the commands (executor, storage, callbacks)

Nothing else changes the experiment's state. With a `Journal`, every event
is logged before `step` sees it (rejected ones too: replay must meet the
same rejections; a round's records reach the file in one write, see
`feed`) and the state is snapshotted now and then; see
`tunecore.shell.journal`. This module decides nothing a
pure function could: it only translates commands into calls (start an actor,
make a checkpoint directory, append to error.txt, call the user's
`sample_from`, ask a searcher object) and completions into events. It never
reads the core's policies: what they wait for, and how far a worker may run
ahead, come as commands (a taken-over state's waits, once, from
`requests.outstanding`). A rejected event (a result that raced with a stop, say) is logged
and skipped; a callback that raises is reported and skipped. On Ctrl-C the
core is told the experiment was interrupted (`ExperimentInterrupted`: it
ends at once, no trial is finished by it, so a resume runs them on), and
every worker is ended on the way out; a second Ctrl-C (or the first with
`TUNE_DISABLE_SIGINT_HANDLER=1`) raises `KeyboardInterrupt`, the log whole.

Why one module of over 400 lines: the loop carries out every command the
core gives (`_COMMANDS`), each with the I/O it needs; a command's handler is
a few lines, and one table keeps them where the loop is read.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from tunecore.core import lifecycle
from tunecore.core.dispatch import handles
from tunecore.core.experiment import (
    ExperimentState,
    SteppedWithChanges,
    step,
    step_with_changes,
)
from tunecore.core.experiment.idle import tick_to_log
from tunecore.core.experiment.requests import outstanding
from tunecore.core.naming import error_entry
from tunecore.core.results import (
    SHOULD_CHECKPOINT,
    as_heard,
    is_end_marker,
    iteration_of,
    repeated_at_end,
)
from tunecore.core.schedulers.imperative import decision_wanted
from tunecore.core.schedulers.resource_changing import allocation_wanted
from tunecore.model import (
    AskScheduler,
    AskSearcher,
    ChainTrials,
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ClusterResourcesChanged,
    Command,
    ContinueTrial,
    DeleteCheckpoint,
    DrawValues,
    ExperimentDone,
    ExperimentEvent,
    ExperimentInterrupted,
    ExperimentStopRequested,
    Horizon,
    JsonDict,
    PauseTrial,
    RecordExploit,
    Rejection,
    ResetTrial,
    ResolveResources,
    ResourcesUpdateRequested,
    ResultReported,
    SaveCheckpoint,
    StartTrial,
    StopTrial,
    TrialFailed,
    TrialRestored,
    TrialStarted,
    TrialState,
    TrialStatus,
)
from tunecore.model.storable import UnstorableValueError
from tunecore.shell.allocations import ResourceAllocator
from tunecore.shell.callbacks import Callback, reads_trials
from tunecore.shell.executors.base import ChainedStart
from tunecore.shell.exploit_copies import ExploitCopies
from tunecore.shell.files_mark import FilesMark, make_mark
from tunecore.shell.imperative import SchedulerRuntime
from tunecore.shell.inbox import request_of
from tunecore.shell.interrupts import INTERRUPTED, InterruptGuard
from tunecore.shell.journal import Journal
from tunecore.shell.listed_trials import ListedTrials
from tunecore.shell.mirror.stored_state import delete_taken
from tunecore.shell.pbt_policy import record_exploit
from tunecore.shell.reported_objects import ReportedObjects, split
from tunecore.shell.run_plan import LoopParts, RunPlan
from tunecore.shell.stoppers import UserStoppers
from tunecore.shell.storage import shared_storage
from tunecore.shell.storage.layout import NotInExperimentError
from tunecore.shell.storage.store import checkpoint_root
from tunecore.shell.trainable.errors import failure_reason
from tunecore.shell.trainable.function import SCRATCH_DIR
from tunecore.shell.trainable.result_objects import ReportedResult
from tunecore.shell.trainable.worker import TrialContext
from tunecore.shell.trial_view import Trial, shown_as

logger = logging.getLogger(__name__)

INBOX_INTERVAL_S = 0.5
"""The inbox (`tunecore stop`/`add`) is read at most this often, so a fast
loop does not list a directory per event."""

MAX_ERROR_CHARS = 1 << 20
"""A trial's error text too long for one record of the log is cut to this."""


class ExperimentLoop:
    """Runs one experiment to its end. See the module docstring."""

    def __init__(self, state: ExperimentState, plan: RunPlan, parts: LoopParts) -> None:
        """Run from `state` as `plan` says (`shell.run_plan`: made once,
        before the run, by `api.plan.plan_run`), with `parts`."""
        self.state = state
        self._plan = plan
        self._executor = parts.executor
        self._storage = storage = parts.storage
        self._storage_token = shared_storage.claim(storage.experiment_dir)
        self._callbacks = parts.callbacks
        self._on_state = parts.on_state
        self._trial_dirname = parts.trial_dirname
        storage.know_recorded(state.trials.values())
        self._views = parts.views
        self._clock = parts.clock
        self._journal = parts.journal
        self._inbox = parts.inbox
        self._stopper = parts.stopper
        self._functions = parts.functions
        self._allocator = parts.allocator
        self._scheduler_object = parts.scheduler_object
        self._searchers = parts.searchers
        self._resources_of = parts.resources_of
        self._store = parts.store
        self._lease_generation = parts.lease_generation
        self._after_shipped = parts.after_shipped
        self._inbox_read = -math.inf
        self._dirs: dict[str, Path | str] = {}
        """Each trial's directory: a `Path` while it may run, its string
        once it has ended (`_settle_dir`)."""
        self._listed = ListedTrials(self._view)  # the callbacks' `trials`
        self._steps = 0  # loop steps done: the callbacks' `iteration`, as Ray's
        self._hosted: set[str] = set()  # trials that have a worker now
        self._stepped_from = state  # the state before the step whose commands run now
        self._interrupts = InterruptGuard()
        self._answers: list[ExperimentEvent] = []  # fed right after their command
        self._drawn: list[ExperimentEvent] = []  # the policies' answers: fed first
        self._requests_owed = True  # the state's requests, carried out at the first feed
        self._halted: str | None = None
        self._exploit_copies = ExploitCopies(storage, parts.store, parts.after_shipped)
        # Whether snapshots may vouch for the trial files (`shell.files_mark`):
        # a local experiment's, whose files are in line with its log.
        self._mark_files = plan.mark_files and parts.store is None
        self._chains: dict[str, ChainTrials] = {}  # what `ChainTrials` said (`run_chains`)
        self._ever_chained: set[str] = set()

    # -- running ------------------------------------------------------------

    def run(self) -> ExperimentState:
        """Drive the experiment until `ExperimentDone`; return the final state.

        Ctrl-C, as Ray Tune's SIGINT handler has it: the first one ends the
        experiment (`ExperimentInterrupted`) and this returns; any later one
        raises `KeyboardInterrupt` from wherever the loop is, and so does the
        first with `RunPlan.stop_on_sigint` False (it is logged first). None
        lands inside the writing of the log (`InterruptGuard.critical`, the
        final snapshot included), so the log is whole and a resume goes on."""
        with self._interrupts.installed():
            return self._run()

    def _run(self) -> ExperimentState:
        try:
            try:
                # The first step starts trials and prints: a Ctrl-C may land in it too.
                total = self._executor.cluster_resources()
                self._step([ClusterResourcesChanged(at=self._clock(), total=total)])
                while not self.state.done:
                    if self._halted is not None:
                        self.feed([ExperimentInterrupted(at=self._clock(), reason=self._halted)])
                        break
                    events = self._executor.next_events(self._plan.poll_seconds)
                    requests = self._requests()
                    self._step([*requests, *events] or self._idle(), requests)
            except KeyboardInterrupt:
                logger.warning(
                    "Interrupted: ending the workers; unfinished trials resume "
                    "with Tuner.restore (or `tunecore resume`)%s",
                    "" if self._plan.stop_on_sigint else " (TUNE_DISABLE_SIGINT_HANDLER is set)",
                )
                self.feed([ExperimentInterrupted(at=self._clock(), reason=INTERRUPTED)])
                if not self._plan.stop_on_sigint:
                    raise
            else:
                # Exports and releases still running; not after an end that
                # left trials to a resume (a policy object failed, as at
                # Ctrl-C): their workers are ended as they stand.
                if self._halted is None and self.state.finished == self.state.created:
                    self._executor.drain(timeout=60.0)
        finally:
            # A KeyboardInterrupt may pass through here (see `run`): the log
            # closes whole all the same, and the callbacks hear no end, as
            # Ray's skip their `on_experiment_end` then.
            raising = isinstance(sys.exception(), KeyboardInterrupt)
            if self._journal is not None:
                with self._interrupts.critical():
                    self._journal.close(self.state)
            self._executor.shutdown()
            self._sweep_worker_dirs()
            self._exploit_copies.drop_all()
            if not raising:
                self._callbacks.on_experiment_end(self._trials(Callback.on_experiment_end))
            self._storage.close()
            self._drop_unstarted_chains()
        return self.state

    def _idle(self) -> list[ExperimentEvent]:
        """A round that brought no event: a `Tick`, when the core says one
        can change a decision (`core.experiment.idle`), else nothing; the
        round is still a step for the callbacks and the progress reporter."""
        tick = tick_to_log(self.state, self._clock())
        return [] if tick is None else [tick]

    def _step(
        self, events: Sequence[ExperimentEvent], requests: Sequence[ExperimentEvent] = ()
    ) -> None:
        """One step of the loop, as Ray's `TuneController.step` is one:
        `on_step_begin(n)` with the steps done so far, the round's events
        fed (every trial hook in between hears `n`), the stoppers'
        `stop_all` asked, `on_step_end(n + 1)`. A step is one round of what
        the executor reported in `poll_seconds` (several events, a Tick, or
        none when idle), where Ray's handles at most one event and waits
        0.1 s for it: the counts differ, and on either depend on timing."""
        self._callbacks.on_step_begin(self._steps, self._trials(Callback.on_step_begin))
        self.feed(events)
        self._delete_taken(requests)
        self._ask_stop_all()
        self._steps += 1
        self._callbacks.on_step_end(self._steps, self._trials(Callback.on_step_end))

    def files_repaired(self) -> None:
        """A resume has put the trial files back in line with the log
        (`shell.resume`): snapshots may vouch for them again."""
        self._mark_files = self._store is None

    def tell_restored(self) -> None:
        """A resume's files are in line and no trial has started again:
        the callbacks hear of the trials as restored
        (`Callback.on_experiment_restore`)."""
        self._callbacks.on_experiment_restore(self._trials(Callback.on_experiment_restore))

    def _files_mark(self) -> FilesMark | None:
        """Once every trial file write queued so far is done, the mark
        saying so for a snapshot of the state now."""
        self._storage.drain()
        return make_mark(self.state, self._path, self._exploit_copies.holders())

    def halt(self, reason: str) -> None:
        """End the run at the next round as an interruption (from any
        thread): unfinished trials wait for a resume, as after Ctrl-C."""
        self._halted = reason

    def _drop_unstarted_chains(self) -> None:
        """A chained trial the core never started (the experiment stopped
        first) may have run on its worker: what it wrote goes, with the
        directory made for it, as if it had never been chained."""
        for trial_id in self._ever_chained:
            trial = self.state.trials[trial_id]
            if trial.start_time is None:
                shutil.rmtree(self._path(trial), ignore_errors=True)

    def _sweep_worker_dirs(self) -> None:
        """A worker deletes the scratch directory of a trial it stops (see
        `shell.trainable.function`), but a Ray actor that is killed (not
        kept for reuse, or idle at the end) never gets to: once no worker
        runs, delete what is left."""
        for directory in self._dirs.values():
            shutil.rmtree(Path(directory, SCRATCH_DIR), ignore_errors=True)

    def _requests(self) -> list[ExperimentEvent]:
        """What was posted to the inbox, at most every `INBOX_INTERVAL_S`."""
        now = time.monotonic()
        if self._inbox is None or now - self._inbox_read < INBOX_INTERVAL_S:
            return []
        self._inbox_read = now
        return self._inbox.take(self._clock())

    def _delete_taken(self, requests: Sequence[ExperimentEvent]) -> None:
        """Delete the stored inbox requests just logged, once the log that
        records them is in the store too: a driver that dies before loses
        no request, and a resume never takes one twice (the log names it)."""
        names = [name for event in requests if (name := request_of(event))]
        if self._store is not None and names:
            (self._after_shipped or _at_once)(functools.partial(delete_taken, self._store, names))

    def feed(self, events: Sequence[ExperimentEvent]) -> None:
        """Apply `events` one by one (logged first), carrying out what each
        one's commands say. `run` feeds what the executors report; a resume
        feeds its `ExperimentResumed` here before running. The log gets the
        round's records in one write at the end (and before a checkpoint is
        deleted, `_delete`): until then only the workers and files the log
        repairs on resume (result files, a checkpoint saved again) can have
        acted on them, and a driver that dies takes its workers along."""
        with self._storage.writes_held():  # the round's result files after its log
            self._feed(events)
            if self._journal is not None:
                self._flush_log(self._journal)
                marked = self._files_mark if self._mark_files else None
                self._journal.maybe_snapshot(self.state, marked)
        if self._on_state is not None:
            self._on_state(self.state)

    def _feed(self, events: Sequence[ExperimentEvent]) -> None:
        queue = deque(events)
        if self._requests_owed:  # a fresh or resumed state may wait on the shell already
            self._requests_owed = False
            for request in outstanding(self.state):
                self._carry_out(request)
            self._queue_answers(queue)
        while queue:
            event = queue.popleft()
            if isinstance(event, CheckpointSaved):
                portable = self._storage.portable(event.checkpoint)
                event = msgspec.structs.replace(event, checkpoint=portable)
            if isinstance(event, TrialStarted):
                event = self._named(event)
            objects = None
            if isinstance(event, ResultReported) and type(event.result) is ReportedResult:
                result, objects = split(event.result)  # the log and the core get the JSON form
                event = msgspec.structs.replace(event, result=result)
            if isinstance(event, ResultReported) and self._stopper is not None:
                event = self._judged(event, self._stopper, objects)
            preview = None
            if isinstance(event, ResultReported):
                if self._scheduler_object is not None:
                    event = self._decided(event, self._scheduler_object)
                event, preview = self._told_result(event, objects)
                if self._allocator is not None:
                    event, preview = self._allocated(event, preview, self._allocator)
            self._stepped_from = self.state
            try:
                commands = self._logged_step(event, preview)
            except UnstorableValueError as error:
                queue.appendleft(self._unstorable(event, error))
                continue
            if commands is None:
                continue
            self._observe(event)
            self._tell_searcher()
            for command in commands:
                self._carry_out(command)
            self._queue_answers(queue)

    def _queue_answers(self, queue: deque[ExperimentEvent]) -> None:
        """Put the answers to the commands just carried out first in the
        queue, the policies' (`DrawValues`, `AskSearcher`) before the
        trials': every log so far has them in that order (the core gives
        the requests last, so the user's functions run in the order they
        always did)."""
        if self._drawn or self._answers:
            queue.extendleft(reversed([*self._drawn, *self._answers]))
            self._drawn.clear()
            self._answers.clear()

    def _flush_log(self, journal: Journal) -> None:
        """Write the held records, with Ctrl-C held back: an interrupt
        between the write and the writer's count of it would have the
        records written twice."""
        with self._interrupts.critical():
            journal.flush()

    def _logged_step(
        self, event: ExperimentEvent, outcome: SteppedWithChanges | Rejection | None = None
    ) -> tuple[Command, ...] | None:
        """Log `event`, step the core (unless `outcome` is that step, taken
        already) and record what it applied, with Ctrl-C held back meanwhile
        (see `InterruptGuard`): the log never holds an event the state did
        not get. None if the core rejected it (logged too: replay must meet
        the same rejections)."""
        journal = self._journal
        with self._interrupts.critical():
            if journal is not None:
                journal.record(event)
            if outcome is None:
                outcome = step_with_changes(self.state, event)
            if isinstance(outcome, Rejection):
                logger.debug("Skipped: %s", outcome)
                if journal is not None:
                    journal.applied(())
                return None
            self.state, commands, changed = outcome
            self._listed.changed(changed)
            if journal is not None:
                journal.applied(commands)
        return commands

    def _unstorable(self, event: ExperimentEvent, error: UnstorableValueError) -> ExperimentEvent:
        """What to feed instead of an event the log cannot store (it never
        reached the log, see `tunecore.model.storable`): a trial's event
        becomes that trial's failure, naming the value; a failure's own
        text is kept, with the characters UTF-8 cannot hold escaped and cut
        to `MAX_ERROR_CHARS` (so the failure fed instead always encodes).
        Any other event ends the run with the error."""
        if isinstance(event, TrialFailed):
            text = event.error.encode("utf-8", "backslashreplace").decode("utf-8")
            if len(text) > MAX_ERROR_CHARS:
                text = f"{text[:MAX_ERROR_CHARS]}\n[cut at {MAX_ERROR_CHARS} characters]"
            return msgspec.structs.replace(event, error=text)
        trial_id = getattr(event, "trial_id", None)
        if not isinstance(trial_id, str) or trial_id not in self.state.trials:
            raise error
        reason = f"{type(event).__name__} of this trial could not be logged: {error}"
        logger.error("Trial %s fails: %s", trial_id, reason)
        return TrialFailed(trial_id=trial_id, at=event.at, error=reason)

    def _told_result(
        self, event: ResultReported, objects: ReportedObjects | None
    ) -> tuple[ResultReported, SteppedWithChanges | Rejection]:
        """Tell the callbacks about a result before it is logged, as Ray Tune
        does before it decides on checkpoints: `step` is pure, so the result
        as the core records it can be shown first, with the `objects` it
        carried (kept as the trial's, `shell.reported_objects`). A callback
        that sets `should_checkpoint` in the result it is given makes it the
        result the trial reported (and the one logged); then the step is
        taken again. The result shown lacks `experiment_tag`, which the
        trial's `last_result` has: Ray adds it only after its callbacks
        (its result files' loggers among them) heard the result
        (`core.results.as_heard`). So the trial they get is the trial as it
        was before this result, as Ray's is: its `last_result` and
        `metric_analysis` the previous result's (`{}` before its first),
        its status RUNNING even when this result ends it; and `trials`
        holds it so too (the state is the one before the step). Its objects
        are recorded as the trial's only after the callbacks. Returns the
        event to log and its step."""
        outcome = step_with_changes(self.state, event)
        if isinstance(outcome, Rejection) or is_end_marker(event.result):
            return event, outcome  # the end of a function is no result of its own
        trial = outcome[0].trials[event.trial_id]
        before = self.state.trials[event.trial_id]
        if (
            trial.recorded_result is before.recorded_result
            or trial.num_failures > before.num_failures
            or not trial.has_result
        ):
            # Not taken: the trial failed on it (a missing metric), and an
            # errored trial's result is packed anew (`TrialState.recorded_result`).
            return event, outcome
        heard = as_heard(trial.last_result)  # a copy: the callbacks may change it
        shown = heard if objects is None else objects.merged(heard)
        hearing = (
            self._view(before)
            if objects is None
            else self._views.hearing(before, objects, self._dir)
        )
        self._callbacks.on_trial_result(
            self._steps, self._trials(Callback.on_trial_result), hearing, shown
        )
        if objects is not None:
            self._views.objects.record(event.trial_id, objects)
        elif self._views.objects:  # an earlier result's go
            self._views.objects.forget(event.trial_id)
        if shown.get(SHOULD_CHECKPOINT) is True and event.result.get(SHOULD_CHECKPOINT) is not True:
            event = msgspec.structs.replace(event, result={**event.result, SHOULD_CHECKPOINT: True})
            return event, step_with_changes(self.state, event)
        return event, outcome

    def _allocated(
        self,
        event: ResultReported,
        preview: SteppedWithChanges | Rejection,
        allocator: ResourceAllocator,
    ) -> tuple[ResultReported, SteppedWithChanges | Rejection]:
        """The result with the user's allocation function's answer on it,
        stepped again, when the scheduler wanted one for it (see
        `tunecore.shell.allocations`); else as it came."""
        if isinstance(preview, Rejection):
            return event, preview
        if allocation_wanted(preview[0].scheduler) != event.trial_id:
            return event, preview
        answer = allocator.allocate(self.state, preview[0], event.trial_id, self._view)
        event = msgspec.structs.replace(event, allocation=answer)
        return event, step_with_changes(self.state, event)

    def _decided(self, event: ResultReported, runtime: SchedulerRuntime) -> ResultReported:
        """The result with the user's scheduler object's verdict on it
        when the core wants one for it (a step taken to see; see
        `tunecore.shell.imperative`), else as it came. Asked before the
        callbacks hear the result, as Ray asks. What else the object asked
        (stops, pauses of other trials) is fed after the result."""
        preview = step(self.state, event)
        if (
            isinstance(preview, Rejection)
            or decision_wanted(preview[0].scheduler) != event.trial_id
        ):
            return event
        decision, then = runtime.decide(
            self.state, preview[0], event.trial_id, self._view, event.at
        )
        self._drawn.extend(then)
        return msgspec.structs.replace(event, decision=decision)

    def _judged(
        self, event: ResultReported, stopper: UserStoppers, objects: ReportedObjects | None
    ) -> ResultReported:
        """The result with the user's stoppers' verdict in it (see
        `tunecore.shell.stoppers`), when it is one `step` takes: a result
        of a running trial. The stoppers see the `objects` it carried.
        The end marker of a function that returned is no result: as Ray
        Tune 2.60's controller does, the stoppers hear the trial's last
        result again, marked `done`, with that result's objects (unless
        the experiment is from before `ExperimentConfig.end_repeats_result`);
        the trial stops on it whatever they say, so no verdict is logged."""
        trial = self.state.trials.get(event.trial_id)
        if trial is None or trial.status is not TrialStatus.RUNNING:
            return event
        if is_end_marker(event.result):
            if self.state.config.end_repeats_result is True:
                last = self._views.objects.of(event.trial_id)
                stopper.judge(event.trial_id, repeated_at_end(trial), last)
            return event
        stopped_by = stopper.judge(event.trial_id, event.result, objects)
        if stopped_by is None:
            return event
        return msgspec.structs.replace(event, stopped_by=stopped_by)

    def _ask_stop_all(self) -> None:
        """The user's stoppers' `stop_all`, asked after every round of
        events; a True stops the experiment through the core, logged."""
        if self._stopper is None or self.state.done or self.state.stopping is not None:
            return
        reason = self._stopper.stop_all()
        if reason is not None:
            self.feed([ExperimentStopRequested(at=self._clock(), reason=reason)])

    def _observe(self, event: ExperimentEvent) -> None:
        """Tell the callbacks what an accepted event did."""
        if isinstance(event, CheckpointSaved):
            trial = self.state.trials[event.trial_id]
            self._callbacks.on_trial_save(
                self._steps, self._trials(Callback.on_trial_save), self._view(trial)
            )
            if event.checkpoint.holds_state:  # Ray's controller skips an empty save
                located = self._storage.located(event.checkpoint)
                self._callbacks.on_checkpoint(
                    self._steps, self._trials(Callback.on_checkpoint), self._view(trial), located
                )
        elif isinstance(event, TrialRestored):
            # No `on_trial_restore`: Ray Tune 2.60's controller never calls
            # it (not on a retry, a resumed pause or an exploit either).
            self._exploit_copies.restored(event.trial_id)
        elif isinstance(event, TrialFailed):
            trial = self.state.trials[event.trial_id]
            if trial.status in (TrialStatus.PENDING, TrialStatus.RUNNING):  # retried
                self._callbacks.on_trial_recover(
                    self._steps, self._trials(Callback.on_trial_recover), self._view(trial)
                )
            elif trial.status is TrialStatus.TERMINATED:  # its last save failed
                logger.warning(
                    "Trial %s finished, but the checkpoint taken as it ended failed: %s",
                    trial.trial_id,
                    failure_reason(event.error),
                )
                note = f"The checkpoint taken as the trial ended failed.\n{event.error}"
                self._storage.append_error(
                    self._dir(trial), error_entry(trial.num_failures + 1, event.at, note)
                )

    # -- commands -------------------------------------------------------------

    def _carry_out(self, command: Command) -> None:
        """Dispatch on the command's type: a trial's command acts on the
        trial it names, as it stands now (`_COMMANDS`); the others concern
        the whole experiment, its end and what its policies wait for
        (`_EXPERIMENT_COMMANDS`)."""
        for_trial = _COMMANDS.get(type(command))
        if for_trial is None:
            _EXPERIMENT_COMMANDS[type(command)](self, command)
        else:
            trial_id: str = command.trial_id  # type: ignore[union-attr]  # every trial command has one
            for_trial(self, command, self.state.trials[trial_id])

    def _done(self, command: ExperimentDone) -> None:
        if command.error:
            logger.error("The experiment ended early: %s", command.error)

    def _draw_values(self, command: DrawValues) -> None:
        """The user's functions' values a policy waits for
        (`tunecore.shell.functions`), if this run has the functions."""
        drawn = None if self._functions is None else self._functions.draw(command, self._clock())
        if drawn is not None:
            self._drawn.append(drawn)

    def _tell_searcher(self) -> None:
        """Tell the searcher object what the step just taken recorded for
        it (a result, an end), as Ray tells its searcher each result as it
        arrives: an object that raises ends the experiment at that event
        (`SearcherRuntime.tell_new`), not at its next ask."""
        if self._searchers is None:
            return
        failed = self._searchers.tell_new(self.state, self._clock())
        if failed is not None:
            self._drawn.append(failed)

    def _ask_searcher(self, command: AskSearcher) -> None:
        """A searcher object's suggestion (`tunecore.shell.searchers`)."""
        if self._searchers is None:
            return
        answer = self._searchers.ask(self.state, command, self._clock())
        if answer is not None:
            self._drawn.append(answer)

    def _ask_scheduler(self, command: AskScheduler) -> None:
        """The user's scheduler object's answer (`tunecore.shell.imperative`);
        none once the experiment is over (nothing more can be logged).
        The answer goes before the other policies' answers to the same
        step: it must be the next event fed (`core.schedulers.imperative`),
        since a searcher's suggestion fed first adds a trial, whose step
        asks again while the notes just told are still owed, and the
        object would hear them twice."""
        if self._scheduler_object is None:
            return
        answers = self._scheduler_object.answer(self.state, command, self._view, self._clock())
        if not self.state.done:
            self._drawn[0:0] = answers

    def _start(self, command: StartTrial, trial: TrialState) -> None:
        """A trial that was chained is handed to the executor before its
        directory is made here: a worker may still run it ahead, and the
        directory is made by the start claim that decides who runs it
        (`executors.claim`), the executor's to make for the driver."""
        chained = trial.trial_id in self._ever_chained
        exploited = trial.exploited
        if not chained and exploited is not None and command.restore_from == exploited.checkpoint:
            # PBT exploited the trial while it waited: its worker restores
            # the donor's checkpoint, copied first as `_reset` does.
            restore = self._exploit_copy(command.restore_from, trial)
            if restore is None:
                return
            command = msgspec.structs.replace(command, restore_from=restore)
        context = self._context(trial, command.until, self._path(trial) if chained else None)
        if chained:
            self._submit(command, trial, context)
            self._dir(trial)
        self._storage.write_params(Path(context.trial_dir), trial.spec.config)
        self._tell_as_ray_shows(Callback.on_trial_start, trial, TrialStatus.PENDING)
        self._hosted.add(trial.trial_id)
        if not chained:
            self._submit(command, trial, context)

    def _submit(self, command: StartTrial, trial: TrialState, context: TrialContext) -> None:
        self._executor.start(
            trial.trial_id,
            trial.spec.resources,
            trial.spec.config,
            context,
            self._located(command.restore_from),
            then=self._chained_behind(trial.trial_id),
        )

    def _chain_trials(self, command: ChainTrials, _trial: TrialState) -> None:
        """Remembered for the trial's `StartTrial`, which comes next;
        ignored unless this run chains (`run_chains`)."""
        if self._plan.run_chains:
            self._chains[command.trial_id] = command
            self._ever_chained.update(command.then)

    def _chained_behind(self, trial_id: str) -> list[ChainedStart]:
        """The trials chained behind `trial_id`, as its worker runs them."""
        chain = self._chains.pop(trial_id, None)
        if chain is None:
            return []
        started: list[ChainedStart] = []
        for chained, until in zip(chain.then, chain.until, strict=True):
            trial = self.state.trials[chained]
            context = self._context(trial, until, self._path(trial))
            started.append(ChainedStart(chained, trial.spec.config, context))
        return started

    def _continue(self, command: ContinueTrial, trial: TrialState) -> None:
        self._executor.train(trial.trial_id, self._until(command.until))

    def _pause(self, _command: PauseTrial, trial: TrialState) -> None:
        self._hosted.discard(trial.trial_id)
        self._executor.release(trial.trial_id)

    def _resolve_resources(self, _command: ResolveResources, trial: TrialState) -> None:
        self._answers.append(self._resolve(trial))

    def _save_checkpoint(self, command: SaveCheckpoint, trial: TrialState) -> None:
        self._save(trial, command.storage, command.result)

    def _stop_trial(self, command: StopTrial, trial: TrialState) -> None:
        self._stop(trial, command.error)

    def _delete_checkpoint(self, command: DeleteCheckpoint, _trial: TrialState) -> None:
        self._delete(self._storage.located(command.checkpoint))

    def _resolve(self, trial: TrialState) -> ExperimentEvent:
        """What a new trial asks for, from its config by the user's code
        (`ResolveResources`); the answer is an event, so replay needs no code."""
        if self._resources_of is None:
            raise ValueError(
                f"trial {trial.trial_id} needs its resources worked out from its config "
                "(with_resources(trainable, function) or default_resource_request), but "
                "this run has no such function: pass the trainable again "
                "(Tuner.restore(path, trainable=...))"
            )
        resources = self._resources_of(trial.spec.config)
        return ResourcesUpdateRequested(
            trial_id=trial.trial_id, at=self._clock(), resources=resources
        )

    def _save(
        self, trial: TrialState, storage: CheckpointStorage, label: JsonDict | None = None
    ) -> None:
        """Ask the worker for a checkpoint, labelled with `label` or else the
        trial's last result (its iteration names the directory: a
        `training_iteration` the trainable reported itself below 0 names
        it as 0, the storage numbering a name already taken)."""
        result = trial.last_result if label is None else label
        iteration = max(iteration_of(result), 0)
        if storage is CheckpointStorage.MEMORY:
            self._executor.save_to_memory(trial.trial_id, iteration, result)
            return
        recorded = trial.checkpoints.persistent  # never written over
        try:
            if self._store is not None:  # the worker writes it to the store: nothing here
                directory = self._storage.checkpoint_path(self._dir(trial), iteration, recorded)
            else:
                directory = self._storage.checkpoint_dir(self._dir(trial), iteration, recorded)
        except NotInExperimentError as error:  # the trial's directory, not the run's
            reason = f"its checkpoint of iteration {iteration} could not be saved: {error}"
            logger.error("Trial %s fails: %s", trial.trial_id, reason)
            self._answers.append(
                TrialFailed(trial_id=trial.trial_id, at=self._clock(), error=reason)
            )
            return
        self._executor.save(trial.trial_id, str(directory), iteration, result)

    def _stop(self, trial: TrialState, error: str | None) -> None:
        if error is not None:
            self._storage.append_error(self._dir(trial), error)
        formats = lifecycle.exports(trial)
        hosted = trial.trial_id in self._hosted
        self._hosted.discard(trial.trial_id)
        if formats and hosted:
            export_dir = self._dir(trial) / "export"
            self._executor.export(trial.trial_id, [f.value for f in formats], str(export_dir))
        self._executor.release(trial.trial_id)
        if trial.status is TrialStatus.ERROR:
            # error.txt is written by the file thread: let it finish, so a
            # callback reading `trial.error_file` finds the failure, as in Ray
            self._storage.drain()
            self._callbacks.on_trial_error(
                self._steps, self._trials(Callback.on_trial_error), self._view(trial)
            )
        elif trial.status is TrialStatus.TERMINATED:
            before = self._stepped_from.trials.get(trial.trial_id)
            was = TrialStatus.RUNNING if before is None or before.is_finished else before.status
            self._tell_as_ray_shows(Callback.on_trial_complete, trial, was)
        if trial.is_finished:
            self._settle_dir(trial.trial_id)

    def _settle_dir(self, trial_id: str) -> None:
        """Keep an ended trial's directory as its string (shared with the
        `Path` it was, and with the trial's `Result`): a `Path` per ended
        trial, with its parts, was 0.3 KB of the driver's memory each for
        as long as the run lasted (issue 41)."""
        known = self._dirs.get(trial_id)
        if isinstance(known, Path):
            self._dirs[trial_id] = str(known)
            self._storage.settle_dir(trial_id)

    def _delete(self, checkpoint: CheckpointRef) -> None:
        """Retention's delete. In a store, only once the log that ordered
        it is in the store too (`after_shipped`): the stored log then never
        names a checkpoint already gone, whenever the driver dies. The log
        gets the round's records first: the event that made the checkpoint
        unneeded must never be lost once it is gone."""
        if self._journal is not None:
            self._flush_log(self._journal)
        if checkpoint.storage is CheckpointStorage.MEMORY:
            self._executor.forget(checkpoint)
        elif self._store is not None:
            rel = self._storage.stored_checkpoint(checkpoint)
            if rel is None:
                return
            delete = functools.partial(self._store.delete_dir, checkpoint_root(rel)[0])
            (self._after_shipped or _at_once)(delete)
        else:
            self._storage.delete_checkpoint(Path(checkpoint.path))

    def _reset(self, command: ResetTrial, trial: TrialState) -> None:
        """PBT's exploit. The donor's checkpoint is copied into this trial's
        directory first, synchronously: a later DeleteCheckpoint of the donor
        must not pull it away while this trial's worker restores it. When
        the copy fails (the donor's directory was deleted behind tunecore's
        back), the exploit cannot happen: the trial fails through the core,
        as if its worker had, with the path in the error."""
        restore = self._exploit_copy(command.restore_from, trial)
        if restore is None and command.restore_from is not None:
            return
        self._storage.write_params(self._dir(trial), command.config)
        context = self._context(trial, command.until)
        self._executor.reset(trial.trial_id, command.config, context, restore)

    def _exploit_copy(
        self, checkpoint: CheckpointRef | None, trial: TrialState
    ) -> CheckpointRef | None:
        """The donor's checkpoint to restore, located, and copied into the
        trial's directory when persistent (see `_reset`); None when the
        copy failed, the trial then failing through the core."""
        restore = self._located(checkpoint)
        if restore is None or restore.storage is not CheckpointStorage.PERSISTENT:
            return restore
        try:
            return self._exploit_copies.take(restore, trial.trial_id, self._dir(trial))
        except OSError as error:
            reason = (
                f"PBT's exploit could not copy the checkpoint {restore.path} "
                f"to restore from: {error}"
            )
            self._answers.append(
                TrialFailed(trial_id=trial.trial_id, at=self._clock(), error=reason)
            )
            return None

    def _record_exploit(self, command: RecordExploit, _trial: TrialState) -> None:
        """PBT's policy line (`log_config=True`), in Ray's files."""
        record_exploit(self._storage.experiment_dir, command)

    # -- helpers ----------------------------------------------------------------

    def _located(self, checkpoint: CheckpointRef | None) -> CheckpointRef | None:
        """A checkpoint to restore, at the path a worker can open."""
        return None if checkpoint is None else self._storage.located(checkpoint)

    def _dirname(self, trial: TrialState) -> str | None:
        """The trial's directory name its log records, or the one the
        user's `trial_dirname_creator` gives it (`trial_dirname_of`), if
        either; None for a default name."""
        if trial.dirname is None and self._trial_dirname is None:
            return None
        return self._storage.trial_dirname_of(trial, self._trial_dirname)

    def _named(self, event: TrialStarted) -> TrialStarted:
        """`event` with the trial's directory name, on the first start of
        a trial a `trial_dirname_creator` named (`TrialState.dirname`):
        once logged, a resume uses it, whatever the creator or the naming
        rules say then."""
        trial = self.state.trials.get(event.trial_id)
        if trial is None or trial.dirname is not None or self._trial_dirname is None:
            return event
        name = self._storage.trial_dirname_of(trial, self._trial_dirname)
        return msgspec.structs.replace(event, dirname=name)

    def _path(self, trial: TrialState) -> Path:
        """Where the trial's directory is, without making it (`_dir`)."""
        known = self._dirs.get(trial.trial_id)
        if known is not None:
            return Path(known) if isinstance(known, str) else known
        return self._storage.path / self._storage.trial_dirname_of(trial, self._trial_dirname)

    def _dir(self, trial: TrialState) -> Path:
        known = self._dirs.get(trial.trial_id)
        if known is None:
            dirname = self._dirname(trial)
            known = self._storage.trial_dir(
                trial.spec, dirname, at_once=self._plan.trial_dirs_at_once
            )
            self._dirs[trial.trial_id] = known
        return Path(known) if isinstance(known, str) else known

    def hand_over_dirs(self) -> dict[str, str]:
        """After the run: every trial's directory (made if it was not) as
        its string, the very string the loop kept, so a result made from it
        holds no copy; the loop and the storage forget theirs (until the
        collector's next full collection they lived on with the run's
        other objects, 0.5 KB a trial: issue 41)."""
        dirs: dict[str, str] = {}
        for trial_id, trial in self.state.trials.items():
            known = self._dirs.get(trial_id)
            dirs[trial_id] = known if isinstance(known, str) else os.fspath(self._dir(trial))
        self._dirs = {}
        self._listed = ListedTrials(self._view)
        self._storage.forget_dirs()
        return dirs

    def trial_dir(self, trial_id: str) -> Path:
        """Where a trial of this experiment writes (created on first use)."""
        return self._dir(self.state.trials[trial_id])

    def _until(self, horizon: Horizon | None) -> Horizon | None:
        """How far a worker may train ahead of the answers: the command's
        horizon, but never with stoppers of the user's own, which judge
        each result here (the core does not know them)."""
        return None if self._stopper is not None else horizon

    def _context(
        self, trial: TrialState, until: Horizon | None, directory: Path | None = None
    ) -> TrialContext:
        """What the trial's worker needs, in `directory` (made by the
        worker) or the trial's directory, made here; `until` is the
        command's run-ahead horizon."""
        stdout, stderr = self._plan.output_files or (None, None)
        return TrialContext(
            trial_id=trial.trial_id,
            trial_name=self._views.name(trial),
            trial_dir=str(self._dir(trial) if directory is None else directory),
            experiment_dir=str(self._storage.experiment_dir),
            stopping_criterion=dict(trial.spec.stopping_criterion),
            until=self._until(until),
            resources=trial.spec.resources,
            stdout_file=stdout,
            stderr_file=stderr,
            chdir=self._plan.chdir,
            storage_token=self._storage_token,
            store=self._store,
            lease_generation=self._lease_generation,
            sync_artifacts=self._plan.sync_artifacts,
            sync_artifacts_on_checkpoint=self._plan.sync_artifacts_on_checkpoint,
        )

    def _view(self, trial: TrialState) -> Trial:
        """The trial as callbacks see it (made once per state)."""
        return self._views.of(trial, self._dir)

    def _tell_as_ray_shows(
        self, hook: Callable[..., None], trial: TrialState, status: TrialStatus
    ) -> None:
        """Call the callbacks' `hook` (`on_trial_start`, `on_trial_complete`)
        with the trial in the `status` Ray Tune's controller shows there,
        in `trials` too: it calls them before it sets the new status (a
        starting trial is PENDING, a completing one RUNNING, or PENDING or
        PAUSED if it was stopped waiting), where the core's state has it
        already. Afterwards `trials` holds the trial as it is."""
        view = self._view(trial)
        trials = self._trials(hook, shown=view)
        with shown_as(view, status):
            getattr(self._callbacks, hook.__name__)(self._steps, trials, view)

    def _trials(self, hook: Callable[..., None], shown: Trial | None = None) -> list[Trial]:
        """Every trial in creation order, for the callbacks' `hook` (a
        `Callback` method), with `shown`, the view it is given of a trial,
        in that trial's place: one list across calls, as Ray's controller
        passes its own `_trials` to each, brought up to date in place by
        the trials changed since (`shell.listed_trials`), when a callback's
        hook may read it (`reads_trials`): tunecore's own loggers never
        do, and a run that holds no list holds no view of a finished trial."""
        if reads_trials(self._callbacks, hook.__name__):
            return self._listed.current(self.state, shown)
        return self._listed.trials


_Doer = Callable[[ExperimentLoop, Command, TrialState], None]


_COMMANDS: dict[type[Command], _Doer] = {
    ResolveResources: handles(ResolveResources, ExperimentLoop._resolve_resources),
    StartTrial: handles(StartTrial, ExperimentLoop._start),
    ChainTrials: handles(ChainTrials, ExperimentLoop._chain_trials),
    ContinueTrial: handles(ContinueTrial, ExperimentLoop._continue),
    SaveCheckpoint: handles(SaveCheckpoint, ExperimentLoop._save_checkpoint),
    PauseTrial: handles(PauseTrial, ExperimentLoop._pause),
    StopTrial: handles(StopTrial, ExperimentLoop._stop_trial),
    DeleteCheckpoint: handles(DeleteCheckpoint, ExperimentLoop._delete_checkpoint),
    ResetTrial: handles(ResetTrial, ExperimentLoop._reset),
    RecordExploit: handles(RecordExploit, ExperimentLoop._record_exploit),
}
"""What the loop does for each command the core gives about a trial."""

_EXPERIMENT_COMMANDS: dict[type[Command], Callable[[ExperimentLoop, Command], None]] = {
    DrawValues: handles(DrawValues, ExperimentLoop._draw_values),
    AskSearcher: handles(AskSearcher, ExperimentLoop._ask_searcher),
    AskScheduler: handles(AskScheduler, ExperimentLoop._ask_scheduler),
    ExperimentDone: handles(ExperimentDone, ExperimentLoop._done),
}
"""What the loop does for each command about the whole experiment."""


def _at_once(action: Callable[[], None]) -> None:
    action()
