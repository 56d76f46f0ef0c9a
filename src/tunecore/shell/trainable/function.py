"""`FunctionTrainable`: a user's training function as a `WorkerTrainable`.

The function runs in a daemon thread of its own (the seed's _RunnerThread;
started ahead, while the run before ended, see `runners.py`) and talks
to this object through a `TrialSession` (see `session.py`): the first
`train()` starts the function, every later one releases the function
from the report it is parked in; both then wait for the function's next
message. So between calls the function is always parked in a `report()`
or has ended, and `save()`, `stop()` and the rest never race with it.
The exception is the run-ahead (`may_run_ahead`): in a batch of results
no answer to which can be anything but "go on", the function passes the
reports that cannot end the batch without waiting, so a result costs no
thread hand-off; it still waits at the first that may, and at any report
carrying a checkpoint, so a save or a stop lands where it would have.

How a run ends, as `train()` sees it:

- a report: the result, with the automatic fields (`results.py`) and
  `should_checkpoint: True` when it carried a checkpoint;
- the function returned, or raised StopIteration (after what it returned
  was reported, see `session.py`): the *end marker*, `{"done": True,
  "__duplicate__": True}` (`RESULT_DUPLICATE`, Ray's key), with
  `should_checkpoint` when the function made a checkpoint after its last
  report. It is no result: the core ends the trial on its last result
  (`lifecycle.end_training`) and nothing counts, checks or logs the marker.
  A function may end without ever reporting (a trial with no results, as
  in Ray 2.x), or end at once because it was restored past its end;
- the function raised: `TrainableError` with the traceback text.

Checkpoints are directories the function reported (`report(...,
checkpoint=...)`, taken into the trial's own `worker_checkpoints/` before
`report()` returns, see `session.py`, or the legacy `checkpoint_dir()`
block); `save()` copies the latest one, with its iteration in
`.tunecore_checkpoint.json`, or writes a null checkpoint when there is none
(see `checkpoint_files.py`). Restoring takes effect at the next start of
the function: `restore()` ends a running function, and `get_checkpoint()`
(or the legacy `checkpoint_dir` argument) gives the next run the restored
directory. Directories tunecore makes for the function (copies of reported
checkpoints, `checkpoint_dir()` blocks, `restore_from_bytes`) live in
`<trial_dir>/worker_checkpoints/<worker>/`, each worker's own (two may
hold one trial's files for a moment: one leaving it, one taking it over),
and are deleted by `stop()` and `reset()`, and by the loop once a run ends (a killed Ray actor never
stops its trainable); a checkpoint directory the user made is never
deleted.

Why one module of over 400 lines: `FunctionTrainable` is one state machine
over its function's thread (start, release, save, restore, stop), and how
a run ends can only be read from the whole of it; reading the function's
form (`function_form`) sits in front because only this class needs it.
"""

from __future__ import annotations

import enum
import functools
import inspect
import logging
import math
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from tunecore.core.results import DONE, RESULT_DUPLICATE, SHOULD_CHECKPOINT, TRAINING_ITERATION
from tunecore.model import Horizon, JsonDict
from tunecore.shell.trainable import runners
from tunecore.shell.trainable.checkpoint import Checkpoint
from tunecore.shell.trainable.checkpoint_files import (
    CheckpointMeta,
    is_null,
    make_temporary_dir,
    pack_checkpoint,
    read_meta,
    unpack_checkpoint,
    write_checkpoint,
)
from tunecore.shell.trainable.config_objects import ConfigObjects
from tunecore.shell.trainable.errors import TrainableError
from tunecore.shell.trainable.exports import export_checkpoint
from tunecore.shell.trainable.results import ResultClock
from tunecore.shell.trainable.session import (
    Ended,
    Message,
    Raised,
    Reported,
    StatusReporter,
    TrialSession,
)
from tunecore.shell.trainable.worker import TrialContext

logger = logging.getLogger(__name__)

SCRATCH_DIR = "worker_checkpoints"

# How long stop() waits for the function to unwind from its report.
_STOP_JOIN_TIMEOUT_S = 5.0
# How often train() checks that the function has not returned unheard while
# it waits (the wait itself ends as soon as a message arrives).
_LIVENESS_POLL_S = 1.0


class FunctionForm(enum.Enum):
    """The signatures a training function may have (the seed's wrap_function)."""

    CONFIG = "fn(config)"
    REPORTER = "fn(config, reporter)"
    CHECKPOINT_DIR = "fn(config, checkpoint_dir=None)"


_FORMS_KEPT = 64
_forms: dict[int, tuple[object, FunctionForm]] = {}
"""`function_form`'s answers by function: a worker makes a trainable per
trial, and reading a signature costs more than the rest of that. Each entry
holds its function, so no other object can take its id meanwhile."""


def function_form(fn: object) -> FunctionForm:
    """Which accepted signature `fn` has (found once per function), or a
    ValueError naming its parameters and the accepted forms."""
    known = _forms.get(id(fn))
    if known is not None and known[0] is fn:
        return known[1]
    form = _read_function_form(fn)
    if len(_forms) >= _FORMS_KEPT:
        del _forms[next(iter(_forms))]  # the oldest: a worker runs one function
    _forms[id(fn)] = (fn, form)
    return form


def _read_function_form(fn: object) -> FunctionForm:
    """`function_form`, read from the function's signature.

    `config` is passed positionally (any name will do); `reporter` and
    `checkpoint_dir` by keyword, so they must have exactly those names.
    A function taking both is refused: it could not tell which API it is."""
    name = _describe(fn)
    if inspect.isclass(fn) or not callable(fn):
        raise TypeError(f"{name} is not a training function (a class must subclass Trainable)")
    if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn):
        raise ValueError(
            f"{name} is a generator or coroutine function; a training function is a plain "
            "function that calls report(...) for each result"
        )
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot read the parameters of {name}: {exc}") from exc
    parameters = signature.parameters
    both = {"reporter", "checkpoint_dir"} <= parameters.keys()
    if not both and "checkpoint_dir" in parameters and _binds(signature, checkpoint_dir=None):
        return FunctionForm.CHECKPOINT_DIR
    if not both and "reporter" in parameters and _binds(signature, reporter=None):
        return FunctionForm.REPORTER
    if _binds(signature):
        return FunctionForm.CONFIG
    found = ", ".join(parameters) or "none"
    accepted = ", ".join(form.value for form in FunctionForm)
    raise ValueError(
        f"{name} has the parameters ({found}); a training function must have one of the "
        f"forms {accepted} (the second parameter named exactly 'reporter' or "
        "'checkpoint_dir', not both)"
    )


def _binds(signature: inspect.Signature, **keywords: object) -> bool:
    try:
        signature.bind({}, **keywords)
    except TypeError:
        return False
    return True


def _describe(fn: object) -> str:
    qualname = getattr(fn, "__qualname__", None)
    return f"the function {qualname!r}" if isinstance(qualname, str) else repr(fn)


@dataclass(frozen=True, slots=True)
class _Latest:
    """The checkpoint `save()` would save: the last one the function
    reported, or the one it was restored from, with its counts."""

    checkpoint: Checkpoint
    meta: CheckpointMeta
    # tunecore's private copy (see `Reported.private`): saves link its files.
    private: bool = False


@dataclass(slots=True)
class _Run:
    session: TrialSession
    runner: runners.Run
    ended: bool = False
    resumed: bool = False  # the function runs toward its next message, not yet taken


class FunctionTrainable:
    """A `WorkerTrainable` running `fn` (see the module doc)."""

    def __init__(
        self,
        fn: Callable[..., object],
        config: JsonDict,
        context: TrialContext,
        objects: ConfigObjects | None = None,
    ) -> None:
        self._form = function_form(fn)
        self._fn = fn
        self._objects = objects or ConfigObjects()
        # Each worker's own part of a trial's `worker_checkpoints/`: a trial
        # PBT pauses on one worker may resume on another while the first is
        # reset for a new trial, and the first must delete only what it made.
        self._worker_dir = uuid.uuid4().hex[:12]
        self._begin(config, context)

    def _begin(self, config: JsonDict, context: TrialContext) -> None:
        """The state of a trainable that has not run for this trial yet."""
        self._config = config
        self._context = context
        self._clock = ResultClock()
        self._run: _Run | None = None
        self._restore_from: Checkpoint | None = None
        self._latest: _Latest | None = None
        # A result came without a checkpoint since `_latest` was reported:
        # a save then holds an earlier result's (`CheckpointMeta.earlier`).
        self._behind = False
        self._stopped = False
        self._ahead = 0  # reports the next resume lets the function pass

    # -- WorkerTrainable ----------------------------------------------------------------------

    def train(self) -> JsonDict:
        """Start or resume the function and return its next result."""
        result = self._train(None)
        assert result is not None  # no deadline: it waits for the message
        return result

    def train_within(self, timeout: float) -> JsonDict | None:
        """Start or resume the function; its next result if it comes within
        `timeout` seconds, else None while the function goes on (the next
        call waits for that result instead of resuming it again)."""
        return self._train(time.monotonic() + timeout)

    def may_run_ahead(self, results: int, until: Horizon | None) -> None:
        """Let the next `train()` or `train_within()` that resumes the
        function allow up to `results` further reports without waiting,
        none of them at or past `until` (a horizon on the clock's
        `training_iteration`, which counts every result; any other key
        allows none). Reports carrying a checkpoint or ending a batch wait
        anyway (`TrialSession.report`). It holds for the next call only,
        whether or not that call resumes or starts the function."""
        if results <= 0 or (until is not None and until[0] != TRAINING_ITERATION):
            self._ahead = 0
            return
        if until is not None and not math.isinf(until[1]):
            # Result j after the resume has iteration it0 + j; results
            # 1..k pass without waiting, so each must stay below the horizon.
            results = min(results, math.ceil(until[1] - self._clock.iteration) - 1)
        self._ahead = max(results, 0)

    def _train(self, deadline: float | None) -> JsonDict | None:
        ahead, self._ahead = self._ahead, 0  # granted to this call only
        if self._stopped:
            raise RuntimeError(f"trial {self._context.trial_id}: the trainable was stopped")
        run = self._run
        if run is None:
            run = self._run = self._start(ahead)
        elif run.ended:
            raise RuntimeError(
                f"trial {self._context.trial_id}: the function has ended; restore or reset "
                "the trainable before training it again"
            )
        elif not run.resumed:
            run.session.resume(ahead)
        run.resumed = True
        message = self._next_message(run, deadline)
        if message is None:
            return None
        # A report the function passed without waiting: it runs on toward
        # its next message, which the next call takes without resuming.
        run.resumed = isinstance(message, Reported) and not message.parked
        if isinstance(message, Reported):
            return self._on_reported(message)
        run.ended = True
        if isinstance(message, Ended):
            return self._end_marker(message)
        if isinstance(message, Raised):
            raise TrainableError(
                f"Trial {self._context.trial_id} raised an exception. "
                f"Traceback:\n{message.traceback}"
            )
        raise TrainableError(f"Trial {self._context.trial_id}: the function unwound unasked")

    def save(self, checkpoint_dir: str) -> str:
        """Copy the latest checkpoint into `checkpoint_dir` (a null checkpoint
        if the function never reported one); returns `checkpoint_dir`."""
        latest = self._latest
        private = latest is not None and latest.private
        write_checkpoint(checkpoint_dir, *self._what_to_save(), link=private)
        return checkpoint_dir

    def save_to_bytes(self) -> bytes:
        return pack_checkpoint(*self._what_to_save())

    def export(self, formats: list[str], export_dir: str) -> dict[str, str]:
        """A function's only exportable form is its latest checkpoint."""
        return export_checkpoint(self, formats, export_dir)

    def restore(self, path: str) -> None:
        """The next start of the function resumes from the checkpoint in
        `path` (a running function is ended first); a null checkpoint means
        starting fresh."""
        self._end_run()
        self._clock.restored(read_meta(path))
        self._behind = False
        if is_null(path):
            self._restore_from = self._latest = None
        else:
            checkpoint = Checkpoint.from_directory(path)
            self._restore_from = checkpoint
            self._latest = _Latest(checkpoint, self._clock.meta())

    def restore_from_bytes(self, data: bytes) -> None:
        """Unpack into a temporary checkpoint directory and restore from it."""
        temporary = make_temporary_dir(self._scratch_dir())
        try:
            unpack_checkpoint(data, temporary)
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise
        self.restore(temporary)

    def reset(self, config: JsonDict, context: TrialContext) -> bool:
        """End the current run; the next `train()` starts the function afresh
        for the new trial (this is what lets an actor be reused)."""
        self._release()
        self._begin(config, context)
        return True

    def stop(self) -> None:
        """Unwind the function from its report and delete what tunecore made."""
        self._release()
        self._stopped = True

    # -- the run ------------------------------------------------------------------------------

    def _start(self, ahead: int) -> _Run:
        session = TrialSession(
            self._context,
            restore_from=self._restore_from,
            scratch_dir=self._scratch_dir(),
            ahead=ahead,
        )
        entrypoint = self._entrypoint(session)
        runner = runners.start(
            functools.partial(session.run, entrypoint),
            name=f"tunecore-trial-{self._context.trial_id}",
        )
        return _Run(session, runner)

    def _entrypoint(self, session: TrialSession) -> Callable[[], object]:
        # Each run gets its own copy: the function may mutate its config,
        # and the in-process executor shares the driver's objects. The
        # param space's objects replace their placeholders here.
        config = self._objects.resolve(self._config)
        if self._form is FunctionForm.REPORTER:
            return functools.partial(self._fn, config, reporter=StatusReporter(session))
        if self._form is FunctionForm.CHECKPOINT_DIR:
            restore_from = session.restore_from
            path = None if restore_from is None else restore_from.path
            return functools.partial(self._fn, config, checkpoint_dir=path)
        return functools.partial(self._fn, config)

    def _next_message(self, run: _Run, deadline: float | None = None) -> Message | None:
        """The function's next message; None once `deadline` (monotonic) passes."""
        while True:
            wait = _LIVENESS_POLL_S
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0))
            message = run.session.next_message(wait)
            if message is not None:
                return message
            if run.runner.finished.is_set():
                # Every run posts its end before its call returns (the
                # session's invariant), so look once more before giving up.
                message = run.session.next_message(0)
                if message is None:
                    run.ended = True
                    raise TrainableError(
                        f"Trial {self._context.trial_id}: the function returned "
                        "without a word (a bug in tunecore)"
                    )
                return message
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def _on_reported(self, message: Reported) -> JsonDict:
        result = self._clock.fill(message.metrics, message.measured_s)
        self._keep_checkpoint(result, message.checkpoint, private=message.private)
        self._behind = message.checkpoint is None
        return result

    def _end_marker(self, message: Ended) -> JsonDict:
        marker: JsonDict = {DONE: True, RESULT_DUPLICATE: True}
        self._keep_checkpoint(marker, message.checkpoint)
        return marker

    def _keep_checkpoint(
        self, result: JsonDict, checkpoint: Checkpoint | None, *, private: bool = False
    ) -> None:
        """A checkpoint that came with `result` becomes the one to save, at
        the counts of `result`, and the result asks the driver to save it."""
        if checkpoint is not None:
            self._latest = _Latest(checkpoint, self._clock.meta(), private)
            result[SHOULD_CHECKPOINT] = True

    def _what_to_save(self) -> tuple[str | None, CheckpointMeta]:
        """The directory to save (None: a null checkpoint) and its metadata."""
        latest = self._latest
        if latest is None:
            return None, CheckpointMeta()
        if self._behind:
            return latest.checkpoint.path, msgspec.structs.replace(latest.meta, earlier=True)
        return latest.checkpoint.path, latest.meta

    def _end_run(self) -> None:
        """Stop the running function, if any, and wait (briefly) for it to return."""
        run, self._run = self._run, None
        if run is None or run.runner.finished.is_set():
            return
        run.session.request_stop()
        if not run.runner.finished.wait(_STOP_JOIN_TIMEOUT_S):
            logger.warning(
                "Trial %s: the function did not return within %.0f s of being stopped; "
                "its daemon thread is left running",
                self._context.trial_id,
                _STOP_JOIN_TIMEOUT_S,
            )

    def _release(self) -> None:
        self._end_run()
        shutil.rmtree(self._scratch_dir(), ignore_errors=True)

    def _scratch_dir(self) -> str:
        return os.path.join(self._context.trial_dir, SCRATCH_DIR, self._worker_dir)
