"""What a user's training function calls while tunecore runs it.

    def train(config):
        start = 0
        if (checkpoint := get_checkpoint()) is not None:
            start = load(checkpoint.path)
        for step in range(start, 100):
            ...
            report({"loss": loss}, checkpoint=Checkpoint.from_directory(saved))

The function runs in a thread of its own (see `function.py`). Each run of
it has one `TrialSession`, bound to that thread through a context variable,
so `report()` and friends find the trial they belong to, and many trials
can run in one process (the in-process executor) without sharing one.
A thread the function starts reports for its trial too, as in Ray Tune,
whose session is the process's (`_of_this_thread`). Called anywhere else,
they raise a RuntimeError; but `report()` and
`get_checkpoint()` in a process running no trial at all (the training
function called directly, to train a final model with the best config)
warn and return None, as Ray Tune's do.

The handshake, as in the seed's StatusReporter: `report()` puts the result
on the session's queue and then blocks on a semaphore until the driver asks
for the next result (`train()` releases it). So the function never runs
ahead of the driver: between two `train()` calls it is parked inside a
`report()`, and a pause or a stop lands exactly there. The one exception
is asked for by the driver's side: `resume(ahead=n)` lets the next `n`
reports hand their results over without waiting (the executor's run-ahead,
where no answer can be anything but "go on"); a report carrying a
checkpoint, or a flag that ends a batch (`done`, `should_checkpoint`),
waits all the same, so a save still sees the state of the report it
answers; so does one carrying its own `training_iteration`, which the
run-ahead's horizon (counted in results) cannot foresee. Each `Reported`
says whether its report waits (`parked`). A stop releases the semaphore
with the stop flag set; `report()` then raises `_StopRequested`, a
BaseException (so a user's `except Exception:` cannot swallow it), which
unwinds the function, running its `finally` blocks, and is not an error.

Invariant: every run of a function posts exactly one end message after its
last `Reported` (`Ended`, `Raised` or `Unwound`), whatever happens, so the
driver never waits for a thread that is gone.

Results may also come from outside the function's thread: a `Relay`
(`relay.py`) attached with `relay()` forwards those of work the function
waits on (a Ray Train run). Its reports and the function's take turns, one
handshake at a time; a stop request ends its work (`Relay.on_stop`), and
the run posts its end message only once the relay has closed.

What a function returns is reported as its last result, as in Ray 2.x: a
dict as it is, a number as `{"_metric": number}` (Ray skips both when they
are empty or zero); anything else is an error.

A checkpoint reported from a directory the user owns is copied into the
trial's `worker_checkpoints/` before `report()` hands it over, because
Ray's documented pattern reports from a `tempfile.TemporaryDirectory()`
that is gone once `report()` returns, while tunecore may have to save the
trial's latest checkpoint much later (a pause, a PBT save, a checkpoint
frequency). Only the latest such directory is kept: reporting a new one
deletes the one before, which the driver had its chance to save while the
function was parked in the report that carried it. Directories already in
`worker_checkpoints/` (from `checkpoint_dir()` or a restore) are not copied.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import numbers
import os
import queue
import shutil
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from tunecore.core.checkpoints import checkpoint_dirname
from tunecore.core.results import DEFAULT_METRIC, TRAINING_ITERATION, ends_batch
from tunecore.model import JsonDict
from tunecore.model.errors import require_int
from tunecore.shell.trainable.checkpoint import Checkpoint, is_ray_checkpoint
from tunecore.shell.trainable.relay import Relay
from tunecore.shell.trainable.results import json_result
from tunecore.shell.trainable.train_worker import (
    from_ray_checkpoint,
    ray_train_worker,
    to_ray_checkpoint,
)
from tunecore.shell.trainable.worker import TrialContext

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Reported:
    """The function reported `metrics`, with a new checkpoint if it made one.
    `measured_s` is how long it ran since it last resumed (or started).
    `private`: the checkpoint is tunecore's copy of the user's directory,
    which nobody else sees or changes, so saves may hard-link its files."""

    metrics: JsonDict
    checkpoint: Checkpoint | None
    measured_s: float
    private: bool = False
    parked: bool = True
    """Whether the function waits in this report for `resume` (False: it
    was allowed to go on, and runs toward its next message)."""


@dataclass(frozen=True, slots=True)
class Ended:
    """The function returned (or raised StopIteration). `checkpoint` is one
    made with `checkpoint_dir()` after the last report, if any."""

    checkpoint: Checkpoint | None


@dataclass(frozen=True, slots=True)
class Raised:
    """The function raised; `traceback` is the formatted traceback."""

    traceback: str


@dataclass(frozen=True, slots=True)
class Unwound:
    """The function ended because it was asked to stop."""


Message: TypeAlias = Reported | Ended | Raised | Unwound


class _StopRequested(BaseException):
    """Raised inside the user's function by `report()` once the trainable was
    stopped; it only unwinds the function and is never reported as an error."""


_CURRENT: contextvars.ContextVar[TrialSession | None] = contextvars.ContextVar(
    "tunecore_trial_session", default=None
)
# Functions running in this process under a session: a report from a thread
# none of them started is an error while one runs, not a no-op.
_RUNNING: set[TrialSession] = set()


class TrialSession:
    """One run of a user function: its trial, the checkpoint it starts from,
    and the channel to the driver (a queue of messages one way, a semaphore
    the other). The function's thread calls `run` and, through the module
    functions, `report`; the driver calls `next_message`, `resume` and
    `request_stop`."""

    def __init__(
        self,
        context: TrialContext,
        *,
        restore_from: Checkpoint | None,
        scratch_dir: str,
        ahead: int = 0,
    ) -> None:
        self.context = context
        self.restore_from = restore_from
        self._scratch_dir = scratch_dir
        self._messages: queue.SimpleQueue[Message] = queue.SimpleQueue()
        # A token per resume or stop request: a counting semaphore, in C.
        self._continue: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._resumed_at = time.monotonic()
        # Reports the function may still pass without waiting (`resume`).
        self._ahead = ahead
        # A checkpoint made with checkpoint_dir() and not reported yet.
        self._pending: Checkpoint | None = None
        # The last directory made for the function's checkpoints, by
        # checkpoint_dir() or by copying a reported one (tunecore's to delete).
        self._owned: str | None = None
        # One report's handshake at a time: a relay reports from its own thread.
        self._reporting = threading.Lock()
        # Relays by kind, and whether a stop ended work the function waits on.
        self._relays: dict[str, Relay] = {}
        self._relays_lock = threading.Lock()
        self._stop_ends_outside_work = False
        self.threads_before: frozenset[threading.Thread] = frozenset()

    # -- the function's thread ----------------------------------------------------------------

    def run(self, call: Callable[[], object]) -> None:
        """Run the function bound to this session, then post how it ended."""
        token = _CURRENT.set(self)
        # Threads alive before the run cannot be the function's (`_of_this_thread`).
        self.threads_before = frozenset(threading.enumerate())
        _RUNNING.add(self)
        self._resumed_at = time.monotonic()
        try:
            try:
                output = call()
            finally:
                self._close_relays()
            self._report_returned(output)
        except _StopRequested:
            self._messages.put(Unwound())
        except StopIteration:
            self._messages.put(Ended(self._take_pending()))
        except BaseException:
            text = traceback.format_exc()
            if self._stop.is_set():
                # A relay that ended the function's outside work on the stop
                # (an aborted Ray Train run) makes the function raise: expected.
                log = logger.debug if self._stop_ends_outside_work else logger.warning
                log("Trial %s raised while stopping:\n%s", self.context.trial_id, text)
                self._messages.put(Unwound())
            else:
                self._messages.put(Raised(text))
        else:
            self._messages.put(Ended(self._take_pending()))
        finally:
            _RUNNING.discard(self)
            _CURRENT.reset(token)

    def report(self, metrics: Mapping[str, object], checkpoint: Checkpoint | None) -> None:
        """Hand one result to the driver and wait until it wants the next."""
        with self._reporting:
            self._report(metrics, checkpoint)

    def _report(self, metrics: Mapping[str, object], checkpoint: Checkpoint | None) -> None:
        self._raise_if_stopping()
        measured = time.monotonic() - self._resumed_at
        result = json_result("report(metrics)", metrics)
        if is_ray_checkpoint(checkpoint):  # a library's, Ray's class: the same directory
            checkpoint = from_ray_checkpoint(checkpoint)
        if checkpoint is not None and not isinstance(checkpoint, Checkpoint):
            raise TypeError(
                f"report(checkpoint=...) takes a Checkpoint (Checkpoint.from_directory(path)), "
                f"got a {type(checkpoint).__module__}.{type(checkpoint).__qualname__}"
            )
        private = False
        if checkpoint is None:
            checkpoint = self._pending
        elif not self._in_scratch(checkpoint.path):
            checkpoint, private = self._copied(checkpoint), True
        self._pending = None
        go_on = (
            self._ahead > 0
            and checkpoint is None
            and not ends_batch(result)
            and TRAINING_ITERATION not in result
        )
        self._messages.put(Reported(result, checkpoint, measured, private, parked=not go_on))
        if go_on:
            self._ahead -= 1
        else:
            self._continue.get()
            self._raise_if_stopping()
        self._resumed_at = time.monotonic()

    def relay(self, kind: str, make: Callable[[], Relay]) -> Relay:
        """The run's relay of `kind` (see `relay.py`), made by `make` and
        attached the first time it is asked for: a run keeps one per kind,
        as Ray Tune keeps one queue per session for Ray Train's reports.
        Asked for while the trial is stopping, it unwinds the function."""
        with self._relays_lock:
            self._raise_if_stopping()
            relay = self._relays.get(kind)
            if relay is None:
                relay = self._relays[kind] = make()
            return relay

    def forward(self, metrics: Mapping[str, object]) -> bool:
        """A relay's `report` (from its own thread): hand one result to the
        driver and wait until it wants the next; False, instead of
        unwinding, once the trial is stopping (the result is dropped)."""
        try:
            self.report(metrics, None)
        except _StopRequested:
            return False
        return True

    def _close_relays(self) -> None:
        """Close every relay (see `Relay.close`), then raise the first error one raised."""
        with self._relays_lock:
            relays = list(self._relays.values())
        errors: list[BaseException] = []
        for relay in relays:
            try:
                relay.close()
            except BaseException as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def _report_returned(self, output: object) -> None:
        """Report what the function returned (see the module doc)."""
        if output is None or (isinstance(output, numbers.Number | Mapping) and not output):
            return
        if isinstance(output, Mapping):
            self.report(output, None)
        elif isinstance(output, numbers.Number):
            self.report({DEFAULT_METRIC: output}, None)
        else:
            raise ValueError(
                f"the training function returned a {type(output).__name__}; return nothing, "
                "a dict of metrics (its last result) or a single number"
            )

    def _in_scratch(self, path: str) -> bool:
        scratch = os.path.abspath(self._scratch_dir)
        return os.path.commonpath([scratch, os.path.abspath(path)]) == scratch

    def _copied(self, checkpoint: Checkpoint) -> Checkpoint:
        """A copy of the user's checkpoint directory that tunecore owns (a
        checkpoint in storage, say one from `Result.checkpoint`, is
        downloaded)."""
        os.makedirs(self._scratch_dir, exist_ok=True)
        copy = tempfile.mkdtemp(prefix="reported_", dir=self._scratch_dir)
        try:
            local = checkpoint.local_dir()
            if local is None:
                checkpoint.to_directory(copy)
            else:
                shutil.copytree(local, copy, symlinks=True, dirs_exist_ok=True)
        except BaseException:
            shutil.rmtree(copy, ignore_errors=True)
            raise
        self._own(copy)
        return Checkpoint.from_directory(copy)

    def _own(self, path: str) -> None:
        """`path` holds the function's latest checkpoint; the directory it
        supersedes is deleted (see the module doc for why that is safe)."""
        previous, self._owned = self._owned, path
        if previous is not None and previous != path:
            shutil.rmtree(previous, ignore_errors=True)

    def new_checkpoint_dir(self, step: int) -> str:
        """An empty directory for the checkpoint of `step`, inside the trial."""
        require_int("checkpoint_dir(step)", step, minimum=0)
        path = os.path.join(self._scratch_dir, checkpoint_dirname(step))
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def mark_checkpoint(self, path: str) -> None:
        """`path` (made by `new_checkpoint_dir`) goes with the next report;
        the directory it supersedes is deleted."""
        self._own(path)
        self._pending = Checkpoint.from_directory(path)

    def _take_pending(self) -> Checkpoint | None:
        pending, self._pending = self._pending, None
        return pending

    def _raise_if_stopping(self) -> None:
        if self._stop.is_set():
            raise _StopRequested

    # -- the driver's thread ------------------------------------------------------------------

    def next_message(self, timeout: float) -> Message | None:
        """The function's next message, or None if none came within `timeout`."""
        try:
            return self._messages.get(timeout=timeout)
        except queue.Empty:
            return None

    def resume(self, ahead: int = 0) -> None:
        """Let the function continue from the report it is parked in, and
        pass the next `ahead` reports without waiting (see the module doc).
        Call it only while the function is parked: the count is the
        function's own until its next wait."""
        self._ahead = ahead
        self._continue.put(None)

    def request_stop(self) -> None:
        """Make the function's current (or next) report raise `_StopRequested`,
        and end the outside work its relays report for."""
        with self._relays_lock:
            self._stop.set()
            relays = list(self._relays.values())
        for relay in relays:
            if relay.on_stop():
                self._stop_ends_outside_work = True
        self._continue.put(None)


class StatusReporter:
    """The `reporter` handed to a legacy `fn(config, reporter)`:
    `reporter(loss=0.1)` is `report({"loss": 0.1})`."""

    def __init__(self, session: TrialSession) -> None:
        self._session = session

    def __call__(self, **metrics: object) -> None:
        self._session.report(metrics, None)

    @property
    def trial_id(self) -> str:
        return self._session.context.trial_id

    @property
    def trial_name(self) -> str:
        return self._session.context.trial_name

    @property
    def logdir(self) -> str:
        return self._session.context.trial_dir


def report(
    metrics: Mapping[str, object],
    *,
    checkpoint: Checkpoint | None = None,
    checkpoint_dir_name: str | None = None,
    **ray_train_options: object,
) -> None:
    """Report one result, with the checkpoint it belongs to if there is one,
    and wait until tunecore asks for the next (it may never: the trial can
    be paused or stopped here). The metrics must be plain JSON values.
    In a Ray Train worker it is Ray Train's `report` (see train_worker).

    `checkpoint_dir_name` is `ray.train.report`'s, which names the
    checkpoint's directory only in Ray Train V2's workers (where it is
    passed on): in a Tune trial Ray 2.60 logs that it ignores it, and so
    does tunecore, whose trials name their checkpoints
    `checkpoint_<iteration>`. `ray_train_options` are the rest of Ray Train
    V2's `report` arguments (`checkpoint_upload_mode`, `validation`, ...),
    passed on in a Ray Train worker; a trial takes none (a TypeError, as
    `ray.tune.report` raises)."""
    train = None if _of_this_thread() else ray_train_worker()
    if train is not None:
        named = {} if checkpoint_dir_name is None else {"checkpoint_dir_name": checkpoint_dir_name}
        train.report(
            metrics,
            checkpoint=to_ray_checkpoint(train, checkpoint),
            **named,
            **ray_train_options,
        )
        return
    if ray_train_options:
        raise TypeError(
            f"report() got {', '.join(sorted(ray_train_options))}: Ray Train's report "
            "arguments, which only a Ray Train worker (a trainer's training function) takes; "
            "a trial's report takes metrics, checkpoint and checkpoint_dir_name"
        )
    if checkpoint_dir_name is not None:
        logger.warning(
            "report(checkpoint_dir_name=%r) is ignored: a trial's checkpoint directories are "
            "named checkpoint_<iteration> (Ray 2.60 ignores it in a Tune trial too; only Ray "
            "Train V2's workers use it).",
            checkpoint_dir_name,
        )
    session = _current_or_none("report")
    if session is not None:
        session.report(metrics, checkpoint)


def get_checkpoint() -> Checkpoint | None:
    """The checkpoint this run should resume from, or None to start fresh
    (in a Ray Train worker, Ray Train's, see train_worker)."""
    train = None if _of_this_thread() else ray_train_worker()
    if train is not None:
        return from_ray_checkpoint(train.get_checkpoint())
    session = _current_or_none("get_checkpoint")
    return None if session is None else session.restore_from


def get_context() -> TrialContext:
    """The trial this function runs for: its id, name and directories. In a
    Ray Train worker it is Ray Train's `TrainContext` (world size and rank;
    see train_worker)."""
    train = None if _of_this_thread() else ray_train_worker()
    if train is not None:
        context: TrialContext = train.get_context()  # Ray Train's TrainContext
        return context
    return _current("get_context").context


@contextlib.contextmanager
def checkpoint_dir(step: int) -> Iterator[str]:
    """Ray's old `tune.checkpoint_dir`: a fresh directory inside the trial to
    write the checkpoint of `step` into; on leaving the block (without an
    error) it becomes the checkpoint of the next report.

        with checkpoint_dir(step) as path:
            save(model, os.path.join(path, "model"))
        report({"loss": loss})
    """
    session = _current("checkpoint_dir")
    path = session.new_checkpoint_dir(step)
    yield path
    session.mark_checkpoint(path)


def current_session() -> TrialSession | None:
    """The session of the trial whose function runs in the calling thread,
    if any (for integrations that attach a `Relay` to it)."""
    return _CURRENT.get()


def _current_or_none(call: str) -> TrialSession | None:
    """The calling trial's session; None, with a warning, in a process that
    runs no trial (Ray Tune warns and returns None there too: a script that
    calls its training function directly, outside Tune, runs on)."""
    if _of_this_thread() is None and not _RUNNING:
        warnings.warn(
            f"{call}() is meant to be called inside a function run by tunecore "
            "(Tuner.fit, tune.run); called outside any trial, it does nothing and "
            "returns None",
            UserWarning,
            stacklevel=3,
        )
        return None
    return _current(call)


def _current(call: str) -> TrialSession:
    session = _of_this_thread()
    if session is None:
        raise RuntimeError(
            f"{call}() must be called inside a function run by tunecore, from the thread "
            "tunecore runs it in or one it started; it was called outside any trial"
        )
    return session


def _of_this_thread() -> TrialSession | None:
    """The session of the function running in the calling thread or, for a
    thread such a function started, of that function: Ray Tune's session is
    the process's, so a report from a thread of the trial's counts there.
    A thread is taken as the function's when it began after the one run in
    this process did: a thread a finished trial left behind, or a thread
    while several trials run in the process (the in-process executor),
    belongs to none, and never reports into another trial."""
    session = _CURRENT.get()
    if session is not None:
        return session
    running = [*_RUNNING]  # one copy: other threads add and discard
    if len(running) != 1 or threading.current_thread() in running[0].threads_before:
        return None
    return running[0]
