"""The simulated executor: a whole experiment in virtual time, with no
sleeping, no threads and nothing on disk.

A trainable is a pure function `(config, iteration) -> (metrics, seconds)`;
`seconds` is how long that iteration takes on the virtual clock. Pass
`clock=executor.now` to `ExperimentLoop` and the loop, the core and every
scheduler run exactly as they do on real workers, only as fast as `step`
goes, and the same inputs give the same events bit for bit. That makes it
the tool for what-if runs of a scheduler over known learning curves, and
for tests that need a real loop without real time.

Theory of operation. Every operation is given a completion time when it is
issued: `max(now, the trial's previous completion) + its duration`, with the
durations

    start (assign)   `start_seconds`
    train            the seconds the trainable returns
    save (either)    `save_seconds`
    restore, reset, export   0

`next_events` pops, from a heap of `(time, issue number, trial id)`, every
completion due at the earliest time, moves the clock there and turns them
into events with `completion_event`, so they have the shape real executors'
events have. Completions without an event (reset, export) are consumed
silently and the next time is tried. A trainable that raises (or returns
bad seconds or metrics) completes its step at once with a `TrialFailed`
carrying the traceback; its worker is freed, as a real one's would be.

Invariants:

- The clock never goes back. It moves only in `next_events`: to the earliest
  due completion, or, when nothing is pending, by the `timeout` a real
  executor would have waited (so `Tick`s still advance `time_budget_s`).
- Per-trial FIFO: a trial's completion times never decrease in issue order,
  and the heap breaks ties by issue number, so each trial's operations
  complete in the order issued. `OrderedOperations` holds them, and each
  popped heap entry must be the head of its trial's FIFO.
- A worker's state (config, iteration and time counters) changes when an
  operation is issued, not when it completes. Since a trial's operations run
  in issue order, each one sees the state a real worker would have had; a
  checkpoint records the counters as they stand when its save is issued.
- Checkpoints are records, never files: `checkpoint path -> CheckpointMeta`,
  persistent ones under the directory the loop made (which stays empty),
  memory ones under `memory://{trial_id}/{n}` as in `InProcessExecutor`.
  A restore from a path this executor never saved (the loop's copy of a
  donor checkpoint for a PBT exploit, a user's restore path) continues from
  what the `CheckpointRef` itself records: its iteration and its metrics'
  `time_total_s`.
- Determinism: no wall clock, no randomness, no process ids. Workers are
  numbered from 1 and a start takes the lowest free number; dicts are only
  ever looked up by key, never iterated, so hash order cannot leak in.
- Workers are reused as on Ray: a released trial's worker is free once the
  trial's last pending operation completes.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tunecore.core.results import (
    DATE,
    DATE_FORMAT,
    DONE,
    HOSTNAME,
    NODE_IP,
    PID,
    TIME_THIS_ITER_S,
    TIME_TOTAL_S,
    TIMESTAMP,
)
from tunecore.model import (
    CheckpointRef,
    CheckpointStorage,
    ExperimentEvent,
    Horizon,
    JsonDict,
    Resources,
    TrialFailed,
)
from tunecore.model.errors import require_finite_non_negative, require_int
from tunecore.model.numbers import is_number
from tunecore.shell.executors.base import (
    ChainedStart,
    Operation,
    OrderedOperations,
    Pending,
    completion_event,
)
from tunecore.shell.executors.queued import QueuedWorkers
from tunecore.shell.trainable.checkpoint_files import CheckpointMeta, SavedCheckpoint
from tunecore.shell.trainable.results import ResultClock, plain_json_dict
from tunecore.shell.trainable.worker import TrialContext

SimulatedTrainable = Callable[[JsonDict, int], tuple[Mapping[str, object], float]]
"""`(config, iteration) -> (metrics, seconds)`, iteration counted from 1.
The metrics are any mapping `tune.report` would take (a `dict[str, float]`
type-checks; NumPy scalars pass), copied into plain JSON as they arrive."""

HOST = "simulated"
"""The hostname of every simulated worker (results and `TrialStarted`)."""
HOST_IP = "127.0.0.1"
"""Its `node_ip` in results."""

_OWNER = "SimulatedExecutor"


@dataclass
class _Worker:
    """A trial's virtual worker. `clock` keeps the counters real trainables
    keep (`ResultClock`), so results carry the same automatic fields."""

    pid: int
    config: JsonDict
    clock: ResultClock


@dataclass(frozen=True)
class _Failed:
    """What a training step that raised completes with: the traceback."""

    error: str


@dataclass(frozen=True)
class _Due:
    """What an operation completes with, and its issue number (to check
    that the heap and the trial's FIFO agree)."""

    sequence: int
    value: object = None


class SimulatedExecutor(QueuedWorkers):
    """See the module docstring. `max_iterations` makes the result of that
    iteration `done=True`, as a function trainable that returns would.
    A trial whose config `fresh_on_resume` holds for saves nothing when it
    is paused, and begins again from its first iteration when resumed, as a
    function trainable with no checkpoint of its own does."""

    def __init__(
        self,
        trainable: SimulatedTrainable,
        *,
        resources: Resources,
        start_time: float = 0.0,
        max_iterations: int | None = None,
        start_seconds: float = 0.0,
        save_seconds: float = 0.0,
        fresh_on_resume: Callable[[JsonDict], bool] | None = None,
    ) -> None:
        require_finite_non_negative(f"{_OWNER}.start_time", start_time)
        require_finite_non_negative(f"{_OWNER}.start_seconds", start_seconds)
        require_finite_non_negative(f"{_OWNER}.save_seconds", save_seconds)
        if max_iterations is not None:
            require_int(f"{_OWNER}.max_iterations", max_iterations, minimum=1)
        self._trainable = trainable
        self._fresh_on_resume = fresh_on_resume
        self._total = resources
        self._max_iterations = max_iterations
        self._start_seconds = float(start_seconds)
        self._save_seconds = float(save_seconds)
        self._now = float(start_time)
        self._ops: OrderedOperations[_Due] = OrderedOperations()
        self._due: list[tuple[float, int, str]] = []
        self._sequence = itertools.count()
        self._dropped: set[int] = set()
        self._ready_at: dict[str, float] = {}
        self._workers: dict[str, _Worker] = {}
        self._idle: list[int] = []
        self._pids = itertools.count(1)
        self._releasing: set[str] = set()
        self._checkpoints: dict[str, CheckpointMeta] = {}
        self._memory_keys = itertools.count()

    def now(self) -> float:
        """The virtual clock: the time of the completions last handed out,
        plus the timeouts of the polls that found nothing pending since."""
        return self._now

    def cluster_resources(self) -> Resources:
        return self._total

    # -- issuing ----------------------------------------------------------------

    def _issue(
        self,
        trial_id: str,
        operation: Operation,
        seconds: float,
        value: object = None,
        *,
        iteration: int = 0,
        metrics: JsonDict | None = None,
        memory_key: str = "",
    ) -> float:
        """Queue an operation taking `seconds` after the trial's previous
        one (or now); return when it completes."""
        at = max(self._now, self._ready_at.get(trial_id, self._now)) + seconds
        self._ready_at[trial_id] = at
        sequence = next(self._sequence)
        pending = Pending(
            operation,
            _Due(sequence, value),
            iteration=iteration,
            metrics=metrics if metrics is not None else {},
            memory_key=memory_key,
        )
        self._ops.push(trial_id, pending)
        heapq.heappush(self._due, (at, sequence, trial_id))
        return at

    def start(
        self,
        trial_id: str,
        resources: Resources,
        config: JsonDict,
        context: TrialContext,
        restore: CheckpointRef | None,
        *,
        then: Sequence[ChainedStart] = (),
    ) -> None:
        """Chained trials (`then`) are not run ahead: each starts as usual."""
        pid = heapq.heappop(self._idle) if self._idle else next(self._pids)
        self._workers[trial_id] = _Worker(pid=pid, config=config, clock=ResultClock())
        assign = functools.partial(
            self._issue, trial_id, Operation.ASSIGN, self._start_seconds, (HOST, pid)
        )
        self._begin(trial_id, assign, restore, context.until)

    def _restore(self, trial_id: str, checkpoint: CheckpointRef) -> None:
        meta = self._checkpoints.get(checkpoint.path)
        self._workers[trial_id].clock.restored(meta if meta is not None else _meta_of(checkpoint))
        self._issue(trial_id, Operation.RESTORE, 0.0)

    def train(self, trial_id: str, until: Horizon | None = None) -> None:
        """Run the trainable for the worker's next iteration now (it is a
        pure function of the config and the iteration); the result arrives
        when its seconds have passed. One result per call: the virtual
        clock has no round trip to save (`until` is not needed)."""
        worker = self._workers[trial_id]
        iteration = worker.clock.iteration + 1
        try:
            metrics, seconds = self._trainable(worker.config, iteration)
            require_finite_non_negative(
                f"the seconds of trial {trial_id}'s iteration {iteration}", seconds
            )
            result = plain_json_dict(
                f"the metrics of trial {trial_id}'s iteration {iteration}", metrics
            )
        except Exception:  # the trial's failure, as on a real worker
            self._issue(trial_id, Operation.TRAIN, 0.0, _Failed(traceback.format_exc()))
            return
        result[TIME_THIS_ITER_S] = float(seconds)
        if self._max_iterations is not None and iteration >= self._max_iterations:
            result[DONE] = True
        # fill() stamps wall-clock time and this process's pid; both are
        # replaced by their virtual counterparts below.
        worker.clock.fill(result, float(seconds))
        result[PID] = worker.pid
        result[HOSTNAME] = HOST
        result[NODE_IP] = HOST_IP
        at = self._issue(trial_id, Operation.TRAIN, float(seconds), result)
        # The completion time (nothing reads it before), in UTC: the same
        # seed gives the same log on every machine.
        result[TIMESTAMP] = int(at)
        result[DATE] = time.strftime(DATE_FORMAT, time.gmtime(at))

    def save(self, trial_id: str, checkpoint_dir: str, iteration: int, metrics: JsonDict) -> None:
        """A persistent checkpoint at `checkpoint_dir`, recorded, not written
        (a null one for a trial `fresh_on_resume` holds for, as a function
        trainable with no checkpoint of its own saves)."""
        fresh = self._saves_nothing(trial_id)
        self._checkpoints[checkpoint_dir] = self._kept_meta(trial_id, fresh)
        self._issue(
            trial_id,
            Operation.SAVE,
            self._save_seconds,
            SavedCheckpoint(checkpoint_dir, empty=fresh),
            iteration=iteration,
            metrics=metrics,
        )

    def save_to_memory(self, trial_id: str, iteration: int, metrics: JsonDict) -> None:
        key = f"memory://{trial_id}/{next(self._memory_keys)}"
        self._checkpoints[key] = self._kept_meta(trial_id, self._saves_nothing(trial_id))
        self._issue(
            trial_id,
            Operation.SAVE_TO_MEMORY,
            self._save_seconds,
            iteration=iteration,
            metrics=metrics,
            memory_key=key,
        )

    def _saves_nothing(self, trial_id: str) -> bool:
        """Whether the trial has no checkpoint of its own (`fresh_on_resume`)."""
        config = self._workers[trial_id].config
        return self._fresh_on_resume is not None and self._fresh_on_resume(config)

    def _kept_meta(self, trial_id: str, fresh: bool) -> CheckpointMeta:
        """The counts a save keeps: a null checkpoint's restart from its
        first iteration (the seed's FunctionRunner.save sets iteration=0
        for an empty checkpoint), else the worker's own."""
        return EMPTY_META if fresh else self._workers[trial_id].clock.meta()

    def reset(
        self, trial_id: str, config: JsonDict, context: TrialContext, restore: CheckpointRef | None
    ) -> None:
        """PBT's exploit: the same worker takes `config` in place (the
        counters carry on unless `restore` sets them)."""
        self._workers[trial_id].config = config
        self._issue(trial_id, Operation.RESET, 0.0)
        if restore is not None:
            self._restore(trial_id, restore)

    def export(self, trial_id: str, formats: list[str], export_dir: str) -> None:
        self._issue(trial_id, Operation.EXPORT, 0.0)

    def _holds(self, trial_id: str) -> bool:
        return trial_id in self._workers

    def _free(self, trial_id: str, *, reusable: bool = True, stuck: bool = False) -> None:
        """The worker's pid is free for the next trial (a simulated worker
        is always reusable: a failure leaves nothing behind)."""
        self._releasing.discard(trial_id)
        self._ready_at.pop(trial_id, None)
        worker = self._workers.pop(trial_id, None)
        if worker is not None:
            heapq.heappush(self._idle, worker.pid)

    def forget(self, checkpoint: CheckpointRef) -> None:
        if checkpoint.storage is CheckpointStorage.MEMORY:
            self._checkpoints.pop(checkpoint.path, None)

    # -- completing ---------------------------------------------------------------

    def next_events(self, timeout: float) -> list[ExperimentEvent]:
        """The completions due at the earliest pending time, the clock moved
        there; [] (the clock moved by `timeout`) only when nothing is pending."""
        while self._due:
            at = self._due[0][0]
            self._now = at
            events: list[ExperimentEvent] = []
            while self._due and self._due[0][0] == at:
                _, sequence, trial_id = heapq.heappop(self._due)
                event = self._complete(trial_id, sequence)
                if event is not None:
                    events.append(event)
            if events:
                return events
        if math.isfinite(timeout) and timeout > 0:
            self._now += timeout
        return []

    def _complete(self, trial_id: str, sequence: int) -> ExperimentEvent | None:
        if sequence in self._dropped:  # issued after a failure; its worker is gone
            self._dropped.discard(sequence)
            return None
        pending = self._ops.pop(trial_id)
        assert pending.handle.sequence == sequence, "a trial's operations completed out of order"
        value = pending.handle.value
        if isinstance(value, _Failed):
            self._dropped.update(p.handle.sequence for p in self._ops.drop(trial_id))
            self._free(trial_id)
            return TrialFailed(trial_id=trial_id, at=self._now, error=value.error)
        self._free_if_released(trial_id)
        return completion_event(trial_id, pending, value, self._now)

    def drain(self, timeout: float) -> None:
        """The experiment is over: what is still pending (exports) is dropped."""
        self._ops = OrderedOperations()
        self._due.clear()
        for trial_id in sorted(self._releasing):
            self._free(trial_id)

    def shutdown(self) -> None:
        self.drain(0.0)
        self._workers.clear()
        self._idle.clear()
        self._ready_at.clear()
        self._checkpoints.clear()


EMPTY_META = CheckpointMeta(training_iteration=0, time_total_s=0.0)
"""What a memory save of a trial that begins again when resumed records."""


def _meta_of(checkpoint: CheckpointRef) -> CheckpointMeta:
    """What a checkpoint this executor did not save would say about itself:
    the iteration the ref records, and the total time of its result."""
    total = checkpoint.metrics.get(TIME_TOTAL_S)
    seconds = float(total) if is_number(total) else 0.0
    return CheckpointMeta(training_iteration=checkpoint.training_iteration, time_total_s=seconds)
