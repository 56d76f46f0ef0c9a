"""The object that lives in a worker (a Ray actor, or a thread of the
in-process executor) and runs trials there, one at a time.

A host outlives its trials: when a trial ends, the executor may hand the
same host the next trial with the same resources (`assign`), which is what
makes reusing a Ray actor cheap. A released trainable whose class has its
own `reset_config` is kept, and takes the next trial in place (Ray's actor
reuse: `reset_config` instead of a new `setup`; `cleanup` runs when it is
finally discarded); any other is stopped at once and the next trial gets a
fresh one. `reset` asks the current trainable to take a new config in
place (PBT), falling back to a fresh one when the trainable cannot.

Where a trial's files go depends on its context. Without a store the
driver's experiment directory is shared with every worker (checked with
the run's token, `shell.storage.shared_storage`): the trainable writes there
directly. With a store (a URI `storage_path`) the trainable works in
node-local scratch and the host persists its checkpoints, exports and
`log_to_file` output through the store (`shell.trainable.persist`); the
driver's paths are never opened on the worker.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TextIO, cast

from tunecore.core.results import ends_batch, flatten, is_end_marker
from tunecore.core.stopping import check_stop
from tunecore.model import Horizon, JsonDict
from tunecore.model.numbers import is_number
from tunecore.shell.executors.claim import claim_start
from tunecore.shell.executors.taken import STDERR, STDOUT, WORKING_DIR, Hold, TakenInTurn
from tunecore.shell.executors.tee import Tee
from tunecore.shell.storage import shared_storage
from tunecore.shell.storage.own_files import directory_fd
from tunecore.shell.trainable.checkpoint_files import SavedCheckpoint, is_earlier, is_null
from tunecore.shell.trainable.classapi import ClassTrainable
from tunecore.shell.trainable.output_files import open_in_trial_dir
from tunecore.shell.trainable.persist import MirroredTrial
from tunecore.shell.trainable.worker import TrialContext, WorkerTrainable

TrainableFactory = Callable[[JsonDict, TrialContext], WorkerTrainable]

Batch = tuple[int, float | None, Horizon | None]
"""`train_many`'s arguments: at most this many results, within this many
seconds, up to this horizon."""

Chained = tuple[JsonDict, TrialContext, Batch, "Chained | None"]
"""`assign_and_train`'s arguments for a chained trial, its own `then` last."""

Started = tuple[tuple[str, int], list[JsonDict], str | None, "Started | None"]
"""`assign_and_train`'s reply: the location, then `Trained`."""

Trained = tuple[list[JsonDict], str | None, Started | None]
"""`train_many`'s reply: the results, the error that ended the batch, and
the chained trial's reply (None: it did not run)."""


def function_returned(results: list[JsonDict], error: str | None) -> bool:
    """Whether a batch ended with the trial's function returning (its end
    marker last, no error): only then may its worker go on to the trial
    chained behind it, which `train_many` and the executor both judge."""
    return error is None and bool(results) and is_end_marker(results[-1])


def _echoed(file: TextIO, found: TextIO | None) -> TextIO:
    """A trial's stream: its `file`, echoed to the stream `found` in place."""
    return cast(TextIO, Tee(file, found))


class TrialHost:
    """Runs the operations the executor sends, for the trial assigned."""

    def __init__(self, factory: TrainableFactory) -> None:
        self._factory = factory
        self._trainable: WorkerTrainable | None = None
        self._spare: ClassTrainable | None = None  # the last trial's, kept for reuse
        self._opened: list[tuple[TakenInTurn[TextIO], Hold[TextIO]]] = []  # log_to_file
        self._in_dir: Hold[str] | None = None  # chdir_to_trial_dir
        self._mirrored: MirroredTrial | None = None  # the trial's scratch, with a store
        self._criterion: dict[str, float | bool] = {}  # the trial's stopping criterion
        self._checked: tuple[str, str] | None = None  # the shared storage seen, and its run
        self._experiment_dir = ""

    def location(self) -> tuple[str, int]:
        return socket.gethostname(), os.getpid()

    def assign(self, config: JsonDict, context: TrialContext) -> tuple[str, int]:
        """Start hosting a trial (ending the previous one, if any): in the
        kept trainable when it takes the config, else in a fresh one."""
        self.release()
        self._criterion = context.stopping_criterion
        self._experiment_dir = context.experiment_dir
        if context.store is not None:
            self._mirrored = MirroredTrial(context, context.store)
            self._mirrored.open()
            context = self._mirrored.local_context(context)
        else:
            shared = (context.experiment_dir, context.storage_token)
            if context.storage_token and shared != self._checked:
                shared_storage.check(*shared)  # once per run: the answer does not change
                self._checked = shared
            os.makedirs(context.trial_dir, exist_ok=True)
        self._redirect(context)
        if context.chdir:
            self._in_dir = WORKING_DIR.take(context.trial_dir)
        spare, self._spare = self._spare, None
        if spare is not None and spare.reset(config, context):
            self._trainable = spare
        else:
            if spare is not None:
                spare.stop()
            self._trainable = self._factory(config, context)
        return self.location()

    def assign_and_train(
        self,
        config: JsonDict,
        context: TrialContext,
        batch: Batch,
        then: Chained | None = None,
    ) -> Started:
        """`assign`, then `train_many`, in one call (one round trip for a
        trial started on a reused worker): the location, then what
        `train_many` gives."""
        location = self.assign(config, context)
        return (location, *self.train_many(batch, then))

    def _redirect(self, context: TrialContext) -> None:
        """Send the process's output to the trial's files (`log_to_file`),
        which must be inside the trial directory (`open_in_trial_dir`),
        echoed to the stream they replace, as Ray does (`Tee`)."""
        for name, stream in (("stdout_file", STDOUT), ("stderr_file", STDERR)):
            filename = getattr(context, name)
            if filename is not None:
                target = open_in_trial_dir(context.trial_dir, filename)
                self._opened.append((stream, stream.take_over(functools.partial(_echoed, target))))

    def reset(self, config: JsonDict, context: TrialContext) -> bool:
        """A new config for the current trial, in place when supported; a
        trainable that refuses is discarded (it may be half reset)."""
        local = context if self._mirrored is None else self._mirrored.local_context(context)
        if self._trainable is not None and self._trainable.reset(config, local):
            return True
        refused, self._trainable = self._trainable, None
        if refused is not None:
            refused.stop()
        self.assign(config, context)
        return False

    def train(self) -> JsonDict:
        try:
            return self._current().train()
        except Exception:
            self._keep_output()
            raise

    def train_many(self, batch: Batch, then: Chained | None = None) -> Trained:
        """The results of one batch (`_train_batch`), the error that ended
        it early, if any, and what the chained trial `then` gave: it is
        assigned and trained the same way (`core.experiment.chains`) only
        when this trial's function returned within the batch and this
        worker's start claim of it succeeded (`executors.claim`); otherwise
        it is not run (None), nor the rest of the chain."""
        results, error = self._train_batch(*batch)
        returned = function_returned(results, error)
        if then is None or not returned or not claim_start(then[1]):
            return results, error, None
        return results, error, self.assign_and_train(*then)

    def _train_batch(
        self, limit: int, max_s: float | None, until: Horizon | None
    ) -> tuple[list[JsonDict], str | None]:
        """Up to `limit` results in one call (the opt-in result buffer, or
        the executor's run-ahead), and the error that ended the batch early,
        if any.

        A batch ends at `done`, at a result that carries a checkpoint (its
        save must see that state), at a function's final repeat, where the
        trial's stopping criterion does not say go on (`check_stop`) and at
        the first result whose `until` key reaches its threshold (or lacks
        it): the driver decides there, so none of those lands late. With
        `max_s` (the run-ahead), a result after the first is waited for only
        until the batch is `max_s` old: a step that takes longer, or never
        ends, does not hold back the results before it (the function trains
        on and the next call returns its result; a class trainable's batch
        ends at its first result). The results produced before an error are
        kept.
        """
        results: list[JsonDict] = []
        trainable = self._current()
        deadline = None if max_s is None else time.monotonic() + max_s
        while len(results) < limit:
            # Where no answer but "go on" is possible, the function need not
            # wait at each report (a stopping criterion is checked here, so
            # then it waits at every one).
            ahead = 0 if self._criterion else limit - len(results) - 1
            trainable.may_run_ahead(ahead, until)
            try:
                if results and deadline is not None:
                    left = max(deadline - time.monotonic(), 0.0)
                    result = trainable.train_within(left)
                    if result is None:  # not yet: the next call takes it
                        break
                else:
                    result = trainable.train()
            except Exception:  # the trial's failure, reported after its results
                self._keep_output()
                return results, traceback.format_exc()
            results.append(result)
            if ends_batch(result):
                break
            if self._decided_at(result, until):
                break
        return results, None

    def _decided_at(self, result: JsonDict, until: Horizon | None) -> bool:
        """Whether the driver may decide anything but CONTINUE on `result`:
        the trial's stopping criterion, or the scheduler's horizon."""
        if not self._criterion and until is None:
            return False
        flat = flatten(result)
        if self._criterion and check_stop(self._criterion, flat) is not False:
            return True
        if until is None:
            return False
        key, threshold = until
        value = flat.get(key)
        return not is_number(value) or cast(float, value) >= threshold

    def save(self, checkpoint_dir: str) -> SavedCheckpoint:
        """Save into `checkpoint_dir` and return the path to restore from,
        and whether the trainable saved a null checkpoint or an earlier
        result's (read where it wrote it). With a store, `checkpoint_dir` is the driver's name for
        it: the checkpoint goes to scratch, then to the store, and only a
        complete upload returns."""
        trainable = self._current()
        marks: list[tuple[bool, bool]] = []

        def save(directory: str) -> str:
            path = trainable.save(directory)
            marks.append((is_null(path), is_earlier(path)))
            return path

        if self._mirrored is None:
            _refuse_links(checkpoint_dir, self._experiment_dir)
            path = save(checkpoint_dir)
        else:
            path = self._mirrored.save(checkpoint_dir, save)
            self._flush()
            # the output so far, should the node be lost
            self._mirrored.upload_output(checkpoint=True)
        empty, earlier = marks[0]
        return SavedCheckpoint(path, empty=empty, earlier=earlier)

    def save_to_bytes(self) -> bytes:
        return self._current().save_to_bytes()

    def restore(self, path: str) -> None:
        """Restore the current trial from the checkpoint in `path`; a
        directory deleted since it was saved fails the trial, naming it.
        With a store, the checkpoint is downloaded to scratch first."""
        trainable = self._current()
        if self._mirrored is not None:
            self._mirrored.restore(path, trainable.restore)
            return
        if not os.path.isdir(path):
            raise FileNotFoundError(
                f"the checkpoint directory {path} to restore from does not exist "
                "(deleted after it was saved?)"
            )
        trainable.restore(path)

    def export(self, formats: list[str], export_dir: str) -> dict[str, str]:
        trainable = self._current()
        if self._mirrored is None:
            return trainable.export(formats, export_dir)
        return self._mirrored.export(export_dir, lambda local: trainable.export(formats, local))

    def restore_from_bytes(self, data: bytes) -> None:
        self._current().restore_from_bytes(data)

    def release(self) -> None:
        """End the current trial; the host stays usable for the next."""
        trainable, self._trainable = self._trainable, None
        if isinstance(trainable, ClassTrainable) and trainable.reusable:
            if self._spare is not None:
                self._spare.stop()
            self._spare = trainable
        elif trainable is not None:
            trainable.stop()
        self._restore_streams()
        in_dir, self._in_dir = self._in_dir, None
        if in_dir is not None:  # a reused worker starts where it began
            WORKING_DIR.give_back(in_dir)
        mirrored, self._mirrored = self._mirrored, None
        if mirrored is not None:
            mirrored.close()  # after the streams: their files are complete

    def _keep_output(self) -> None:
        """A mirrored trial's output to the store as its trainable fails,
        before the failure is reported: its restart, perhaps on another
        worker at once, then finds it."""
        if self._mirrored is not None:
            self._flush()
            self._mirrored.keep_output()

    def _flush(self) -> None:
        for _, hold in self._opened:
            hold.value.flush()

    def _restore_streams(self) -> None:
        """End this host's redirections (`taken`: in-process trials share
        the streams), then close its files."""
        opened, self._opened = self._opened, []
        for stream, hold in opened:
            stream.give_back(hold)
        for _, hold in opened:
            hold.value.close()

    def _current(self) -> WorkerTrainable:
        if self._trainable is None:
            raise RuntimeError("no trial is assigned to this worker")
        return self._trainable


def _refuse_links(checkpoint_dir: str, experiment_dir: str) -> None:
    """`NotRegularFileError` naming the first directory from the experiment
    directory down to `checkpoint_dir` that is a symbolic link: the driver
    made the checkpoint's directory empty, and a link planted there (or in
    place of the trial directory) since would have the save copy the
    checkpoint into the directory linked to. A `checkpoint_dir` outside the
    experiment directory (a path a user passed) is the user's to choose."""
    directory, beneath = Path(os.path.abspath(checkpoint_dir)), Path(experiment_dir)
    if not experiment_dir or not directory.is_relative_to(beneath):
        return
    with contextlib.suppress(FileNotFoundError):  # not made yet: the save makes it
        os.close(directory_fd(directory, beneath))
