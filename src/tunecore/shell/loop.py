"""The imperative shell's loop: events in, `step`, commands out.

    while the experiment is not done:
        events = executor.next_events()   (or a Tick when nothing happened)
        for each event: state, commands = step(state, event)
                        carry out the commands (executor, storage, callbacks)

Nothing else changes the experiment's state. With a `Journal`, every event
is logged before `step` sees it (rejected ones too: replay must meet the
same rejections) and the state is snapshotted now and then; see
`tunecore.shell.journal`. This module decides nothing a
pure function could: it only translates commands into calls (start an actor,
make a checkpoint directory, append to error.txt) and completions into
events. A rejected event (a result that raced with a stop, say) is logged
and skipped; a callback that raises is reported and skipped. On Ctrl-C the
core is told the experiment was interrupted (`ExperimentInterrupted`: it
ends at once, no trial is finished by it, so a resume runs them on), and
every worker is ended on the way out.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import overload

import msgspec

from tunecore.core.experiment import ExperimentState, step
from tunecore.core.naming import trial_name
from tunecore.model import (
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ClusterResourcesChanged,
    Command,
    ContinueTrial,
    DeleteCheckpoint,
    ExperimentDone,
    ExperimentEvent,
    ExperimentInterrupted,
    PauseTrial,
    Rejection,
    ResetTrial,
    ResultReported,
    SaveCheckpoint,
    StartTrial,
    StopTrial,
    Tick,
    TrialFailed,
    TrialRestored,
    TrialState,
    TrialStatus,
)
from tunecore.shell.callbacks import CallbackList
from tunecore.shell.executors.base import Executor
from tunecore.shell.inbox import Inbox
from tunecore.shell.journal import Journal
from tunecore.shell.storage import ExperimentStorage
from tunecore.shell.trainable.worker import TrialContext

logger = logging.getLogger(__name__)

INBOX_INTERVAL_S = 0.5
"""The inbox (`tunecore stop`/`add`) is read at most this often, so a fast
loop does not list a directory per event."""

EventObserver = Callable[[ExperimentEvent], None]


class ExperimentLoop:
    """Runs one experiment to its end. See the module docstring."""

    def __init__(
        self,
        state: ExperimentState,
        executor: Executor,
        storage: ExperimentStorage,
        callbacks: CallbackList,
        *,
        on_state: Callable[[ExperimentState], None] | None = None,
        on_event: EventObserver | None = None,
        trial_dirname: Callable[[TrialState], str] | None = None,
        trial_name_of: Callable[[TrialState], str] | None = None,
        output_files: tuple[str, str] | None = None,
        chdir: bool = False,
        clock: Callable[[], float] = time.time,
        poll_seconds: float = 1.0,
        journal: Journal | None = None,
        inbox: Inbox | None = None,
    ) -> None:
        self.state = state
        self._executor = executor
        self._storage = storage
        self._callbacks = callbacks
        self._on_state = on_state
        self._on_event = on_event
        self._trial_dirname = trial_dirname
        self._trial_name_of = trial_name_of
        self._output_files = output_files
        self._chdir = chdir
        self._clock = clock
        self._poll = poll_seconds
        self._journal = journal
        self._inbox = inbox
        self._inbox_read = -math.inf
        self._dirs: dict[str, Path] = {}
        self._trials_of: ExperimentState | None = None
        self._trials_cache: Sequence[TrialState] = ()
        self._iteration = 0
        self._exploits = 0
        self._hosted: set[str] = set()  # trials that have a worker now

    # -- running ------------------------------------------------------------

    def run(self) -> ExperimentState:
        """Drive the experiment until `ExperimentDone`; return the final state."""
        try:
            total = self._executor.cluster_resources()
            self.feed([ClusterResourcesChanged(at=self._clock(), total=total)])
            while not self.state.done:
                try:
                    events = self._executor.next_events(self._poll)
                    events = [*self._requests(), *events]
                    self._callbacks.on_step_begin(self._iteration, self._trials())
                    self.feed(events or [Tick(at=self._clock())])
                    self._callbacks.on_step_end(self._iteration, self._trials())
                except KeyboardInterrupt:
                    logger.warning(
                        "Interrupted: ending the workers; unfinished trials resume "
                        "with Tuner.restore (or `tunecore resume`)"
                    )
                    reason = "interrupted by the user (Ctrl-C)"
                    self.feed([ExperimentInterrupted(at=self._clock(), reason=reason)])
                    break
            else:
                self._executor.drain(timeout=60.0)  # exports and releases still running
        finally:
            if self._journal is not None:
                self._journal.close(self.state)
            self._executor.shutdown()
            self._callbacks.on_experiment_end(self._trials())
            self._storage.close()
        return self.state

    def _requests(self) -> list[ExperimentEvent]:
        """What was posted to the inbox, at most every `INBOX_INTERVAL_S`."""
        now = time.monotonic()
        if self._inbox is None or now - self._inbox_read < INBOX_INTERVAL_S:
            return []
        self._inbox_read = now
        return self._inbox.take(self._clock())

    def feed(self, events: Sequence[ExperimentEvent]) -> None:
        """Apply `events` one by one (logged first), carrying out what each
        one's commands say. `run` feeds what the executors report; a resume
        feeds its `ExperimentResumed` here before running."""
        journal = self._journal
        for event in events:
            if isinstance(event, CheckpointSaved):
                portable = self._storage.portable(event.checkpoint)
                event = msgspec.structs.replace(event, checkpoint=portable)  # noqa: PLW2901
            if self._on_event is not None:
                self._on_event(event)
            if journal is not None:
                journal.record(event)
            outcome = step(self.state, event)
            if isinstance(outcome, Rejection):
                logger.debug("Skipped: %s", outcome)
                if journal is not None:
                    journal.applied(())
                continue
            self.state, commands = outcome
            if journal is not None:
                journal.applied(commands)
            self._iteration += 1
            self._observe(event)
            for command in commands:
                self._carry_out(command)
        if journal is not None:
            journal.maybe_snapshot(self.state)
        if self._on_state is not None:
            self._on_state(self.state)

    def _observe(self, event: ExperimentEvent) -> None:
        """Tell the callbacks what an accepted event did."""
        if isinstance(event, ResultReported):
            trial = self.state.trials[event.trial_id]
            self._callbacks.on_trial_result(
                self._iteration, self._trials(), trial, trial.last_result
            )
        elif isinstance(event, CheckpointSaved):
            trial = self.state.trials[event.trial_id]
            self._callbacks.on_trial_save(self._iteration, self._trials(), trial)
            located = self._storage.located(event.checkpoint)
            self._callbacks.on_checkpoint(self._iteration, self._trials(), trial, located)
        elif isinstance(event, TrialRestored):
            trial = self.state.trials[event.trial_id]
            self._callbacks.on_trial_restore(self._iteration, self._trials(), trial)
        elif isinstance(event, TrialFailed):
            trial = self.state.trials[event.trial_id]
            if trial.status is TrialStatus.PENDING:  # it will be retried
                self._callbacks.on_trial_recover(self._iteration, self._trials(), trial)

    # -- commands -------------------------------------------------------------

    def _carry_out(self, command: Command) -> None:
        if isinstance(command, ExperimentDone):
            if command.error:
                logger.error("The experiment ended early: %s", command.error)
            return
        trial = self.state.trials[command.trial_id]
        trial_id = trial.trial_id
        if isinstance(command, StartTrial):
            context = self._context(trial)
            self._storage.write_params(Path(context.trial_dir), trial.spec.config)
            self._callbacks.on_trial_start(self._iteration, self._trials(), trial)
            self._hosted.add(trial_id)
            self._executor.start(
                trial_id,
                trial.spec.resources,
                trial.spec.config,
                context,
                self._located(command.restore_from),
            )
        elif isinstance(command, ContinueTrial):
            self._executor.train(trial_id)
        elif isinstance(command, SaveCheckpoint):
            self._save(trial, command.storage)
        elif isinstance(command, PauseTrial):
            self._hosted.discard(trial_id)
            self._executor.release(trial_id)
        elif isinstance(command, StopTrial):
            self._stop(trial, command.error)
        elif isinstance(command, DeleteCheckpoint):
            self._delete(self._storage.located(command.checkpoint))
        elif isinstance(command, ResetTrial):
            self._reset(trial, command)

    def _save(self, trial: TrialState, storage: CheckpointStorage) -> None:
        iteration = _iteration_of(trial)
        if storage is CheckpointStorage.MEMORY:
            self._executor.save_to_memory(trial.trial_id, iteration, trial.last_result)
            return
        directory = self._storage.checkpoint_dir(self._dir(trial), iteration)
        self._executor.save(trial.trial_id, str(directory), iteration, trial.last_result)

    def _stop(self, trial: TrialState, error: str | None) -> None:
        if error is not None:
            self._storage.append_error(self._dir(trial), error)
        formats = trial.spec.export_formats
        hosted = trial.trial_id in self._hosted
        self._hosted.discard(trial.trial_id)
        if formats and trial.status is TrialStatus.TERMINATED and hosted:
            export_dir = self._dir(trial) / "export"
            self._executor.export(trial.trial_id, [f.value for f in formats], str(export_dir))
        self._executor.release(trial.trial_id)
        if trial.status is TrialStatus.ERROR:
            self._callbacks.on_trial_error(self._iteration, self._trials(), trial)
        elif trial.status is TrialStatus.TERMINATED:
            self._callbacks.on_trial_complete(self._iteration, self._trials(), trial)

    def _delete(self, checkpoint: CheckpointRef) -> None:
        if checkpoint.storage is CheckpointStorage.MEMORY:
            self._executor.forget(checkpoint)
        else:
            self._storage.delete_checkpoint(Path(checkpoint.path))

    def _reset(self, trial: TrialState, command: ResetTrial) -> None:
        """PBT's exploit. The donor's checkpoint is copied into this trial's
        directory first, synchronously: a later DeleteCheckpoint of the donor
        must not pull it away while this trial's worker restores it."""
        restore = self._located(command.restore_from)
        if restore is not None and restore.storage is CheckpointStorage.PERSISTENT:
            self._exploits += 1
            copy = self._dir(trial) / f"exploit_{self._exploits:06d}"
            shutil.copytree(restore.path, copy, dirs_exist_ok=True)
            restore = CheckpointRef(
                storage=CheckpointStorage.PERSISTENT,
                path=str(copy),
                training_iteration=restore.training_iteration,
                metrics=restore.metrics,
            )
        self._storage.write_params(self._dir(trial), command.config)
        self._executor.reset(trial.trial_id, command.config, self._context(trial), restore)

    # -- helpers ----------------------------------------------------------------

    def _located(self, checkpoint: CheckpointRef | None) -> CheckpointRef | None:
        """A checkpoint to restore, at the path a worker can open."""
        return None if checkpoint is None else self._storage.located(checkpoint)

    def _dir(self, trial: TrialState) -> Path:
        known = self._dirs.get(trial.trial_id)
        if known is None:
            dirname = self._trial_dirname(trial) if self._trial_dirname is not None else None
            known = self._storage.trial_dir(trial.spec, dirname)
            self._dirs[trial.trial_id] = known
        return known

    def trial_dir(self, trial_id: str) -> Path:
        """Where a trial of this experiment writes (created on first use)."""
        return self._dir(self.state.trials[trial_id])

    def _context(self, trial: TrialState) -> TrialContext:
        stdout, stderr = self._output_files or (None, None)
        return TrialContext(
            trial_id=trial.trial_id,
            trial_name=(
                self._trial_name_of(trial)
                if self._trial_name_of is not None
                else trial_name(trial.spec)
            ),
            trial_dir=str(self._dir(trial)),
            experiment_dir=str(self._storage.experiment_dir),
            stdout_file=stdout,
            stderr_file=stderr,
            chdir=self._chdir,
        )

    def _trials(self) -> Sequence[TrialState]:
        """Every trial in creation order, for the callbacks: sorted only if a
        callback reads it, and once per state."""
        if self._trials_of is not self.state:
            self._trials_of = self.state
            self._trials_cache = _CreationOrder(self.state)
        return self._trials_cache


class _CreationOrder(Sequence[TrialState]):
    """The trials of a state in creation order, sorted on first read."""

    def __init__(self, state: ExperimentState) -> None:
        self._state = state
        self._sorted: list[TrialState] | None = None

    def _items(self) -> list[TrialState]:
        if self._sorted is None:
            state = self._state
            self._sorted = sorted(state.trials.values(), key=lambda t: state.index[t.trial_id])
        return self._sorted

    def __len__(self) -> int:
        return len(self._state.trials)

    @overload
    def __getitem__(self, index: int) -> TrialState: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TrialState]: ...
    def __getitem__(self, index: int | slice) -> TrialState | Sequence[TrialState]:
        return self._items()[index]


def _iteration_of(trial: TrialState) -> int:
    value = trial.last_result.get("training_iteration", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
