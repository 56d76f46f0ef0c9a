"""`PolicyDriver`: a trial scheduler driven offline, by hand, through the
experiment core tunecore itself runs.

A scheduler's decisions depend on more than the results it is given: which
trials are pending, running or paused, in which order they were added, what
fits, and the protocol around each verdict (a stopped trial is completed; a
paused one is saved and may be resumed; trials the scheduler drops are
stopped and removed). Keeping all that by hand is where offline tests go
wrong. The driver keeps none of it itself: every call becomes an event for
`tunecore.core.experiment.step`, and the commands that come back are
answered at once as a worker would answer them (a start is started, a save
is saved, in virtual time). So a policy sees exactly the calls, in exactly
the order, it sees in a real run, and the driver can never drift from it.

Trials start when the scheduler chooses them and their resources fit the
cluster given (`cpus`, one CPU per trial by default), right after the call
that made room: `started()` says which. Nothing here reads a clock, draws
randomness or touches a file; the same calls give the same decisions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tunecore.core.experiment import (
    ExperimentConfig,
    ExperimentState,
    Stepped,
    new_experiment,
    step,
    trial_id_of,
    trials_in_order,
)
from tunecore.core.experiment.snapshot import (
    BuiltinSearcher,
    ExperimentSnapshot,
    decode_state,
    encode_state,
)
from tunecore.core.results import DONE, RESULT_DUPLICATE, TRAINING_ITERATION
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.model import (
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ClusterResourcesChanged,
    Command,
    Decision,
    ExperimentEvent,
    JsonValue,
    Location,
    Mode,
    Rejection,
    Resources,
    ResultReported,
    SaveCheckpoint,
    StartTrial,
    StopRequested,
    Tick,
    TrialFailed,
    TrialRequested,
    TrialRestored,
    TrialStarted,
    TrialState,
    TrialStatus,
)

_BUILTIN_SCHEDULERS = frozenset(entry.resolve() for entry in SCHEDULERS.entries)


class RejectedCallError(ValueError):
    """The core refused an event the driver made from a call (a result for a
    trial that is not running, say): the call was not legal at that point."""


class PolicyDriver:
    """See the module docstring. Each call takes one virtual second."""

    def __init__(
        self,
        scheduler: TrialScheduler,
        *,
        cpus: float = 1.0,
        metric: str | None = None,
        mode: Mode | str | None = None,
        resources_per_trial: Resources | None = None,
    ) -> None:
        config = ExperimentConfig(
            trainable_name="policy_driver",
            trial_id_prefix="t",
            metric=metric,
            mode=None if mode is None else Mode(mode),
            resources_per_trial=resources_per_trial or Resources(cpu=1.0),
            checked_metrics={},  # the user feeds what the policy reads
            max_pending_trials=1 << 30,
        )
        self._state = new_experiment(config, scheduler=scheduler)
        self._now = 0.0
        self._iterations: dict[str, int] = {}
        self._saved = 0
        self._started: list[str] = []
        self.events: list[ExperimentEvent] = []
        """Every event fed to the core so far: `replay` them to get the same state."""
        self._feed(ClusterResourcesChanged(at=self._tick(), total=Resources(cpu=float(cpus))))

    # -- what the user calls -------------------------------------------------

    def add(self, config: Mapping[str, JsonValue] | None = None) -> str:
        """Add a trial (PENDING until the scheduler starts it); its id."""
        before = self._state.created
        self._feed(TrialRequested(at=self._tick(), config=dict(config or {})))
        return self._state_trial_id(before)

    def result(self, trial_id: str, **metrics: JsonValue) -> Decision:
        """Report a result of a RUNNING trial and return the scheduler's
        verdict on it, as the trial's status after it shows: CONTINUE (it
        runs on; PBT may have swapped its config), PAUSE or STOP.
        `training_iteration` counts up by itself unless given."""
        iteration = metrics.get(TRAINING_ITERATION, self._iterations.get(trial_id, 0) + 1)
        if not isinstance(iteration, int) or isinstance(iteration, bool):
            raise RejectedCallError(f"{TRAINING_ITERATION}={iteration!r} is not an int")
        result = {**metrics, TRAINING_ITERATION: iteration}
        self._feed(ResultReported(trial_id=trial_id, at=self._tick(), result=result))
        self._iterations[trial_id] = iteration  # only once the core took it
        status = self.status(trial_id)
        if status is TrialStatus.RUNNING:
            return Decision.CONTINUE
        return Decision.PAUSE if status is TrialStatus.PAUSED else Decision.STOP

    def complete(self, trial_id: str) -> None:
        """The RUNNING trial's trainable ended on its own after its last result."""
        marker: dict[str, JsonValue] = {DONE: True, RESULT_DUPLICATE: True}
        self._feed(ResultReported(trial_id=trial_id, at=self._tick(), result=marker))

    def fail(self, trial_id: str, error: str = "failed in the policy driver") -> None:
        """The RUNNING trial's worker failed (no retries: it ends in ERROR)."""
        self._feed(TrialFailed(trial_id=trial_id, at=self._tick(), error=error))

    def tick(self) -> None:
        """Let a virtual second pass with nothing reported."""
        self._feed(Tick(at=self._tick()))

    def stop(self, trial_id: str) -> None:
        """Stop a trial from outside, as `tunecore stop` or a stopper would."""
        self._feed(StopRequested(trial_id=trial_id, at=self._tick()))

    # -- what the user reads -------------------------------------------------

    @property
    def state(self) -> ExperimentState:
        """The whole experiment as the core holds it."""
        return self._state

    @property
    def scheduler(self) -> TrialScheduler:
        return self._state.scheduler

    def trial(self, trial_id: str) -> TrialState:
        return self._state.trials[trial_id]

    def status(self, trial_id: str) -> TrialStatus:
        return self._state.trials[trial_id].status

    def trial_ids(self, status: TrialStatus | None = None) -> list[str]:
        """Trial ids in the order they were added, those with `status` only if given."""
        ordered = trials_in_order(self._state)
        return [t.trial_id for t in ordered if status is None or t.status is status]

    def started(self) -> list[str]:
        """The trials the last call started or resumed, in order."""
        return list(self._started)

    @property
    def done(self) -> bool:
        """Whether the experiment has ended. As in a run whose searcher has
        nothing more to suggest, it ends once every trial added has ended
        (and `add` then raises `RejectedCallError`): add the trials that
        must meet each other before the last one ends."""
        return self._state.done

    def snapshot(self) -> bytes:
        """The experiment's state as tunecore snapshots it (scheduler included)."""
        return encode_state(self._state)

    def restore(self, snapshot: bytes) -> ExperimentState:
        """A snapshot decoded as a resume reads it; a scheduler of the
        user's own (a msgspec struct with `tag=True`) is decoded as its type."""
        scheduler = type(self._state.scheduler)
        if scheduler in _BUILTIN_SCHEDULERS:
            return decode_state(snapshot)
        kind = ExperimentSnapshot[scheduler, BuiltinSearcher]  # type: ignore[valid-type]
        return decode_state(snapshot, kind)

    # -- how calls become events ---------------------------------------------

    def _tick(self) -> float:
        self._now += 1.0
        return self._now

    def _state_trial_id(self, before: int) -> str:
        if self._state.created == before:
            raise RejectedCallError("the experiment took no new trial (has it ended?)")
        return trial_id_of(self._state.config, before)

    def _feed(self, event: ExperimentEvent) -> None:
        """Step the core with `event`, then answer its commands as a worker
        would, feeding those answers too, until nothing is left to answer."""
        self._started = []
        queue = [event]
        while queue:
            current = queue.pop(0)
            outcome = step(self._state, current)
            if isinstance(outcome, Rejection):
                if current is event:
                    raise RejectedCallError(f"{type(event).__name__} rejected: {outcome.reason}")
                raise AssertionError(f"the driver's own answer was rejected: {outcome}")
            self.events.append(current)
            queue.extend(self._answers(outcome))

    def _answers(self, outcome: Stepped) -> list[ExperimentEvent]:
        self._state, commands = outcome
        answers: list[ExperimentEvent] = []
        for command in commands:
            answers.extend(self._answer(command))
        return answers

    def _answer(self, command: Command) -> Sequence[ExperimentEvent]:
        """What a worker reports back for `command`, at the same moment."""
        at = self._now
        if isinstance(command, StartTrial):
            self._started.append(command.trial_id)
            location = Location(hostname="policy-driver", pid=0)
            started = TrialStarted(trial_id=command.trial_id, at=at, location=location)
            if command.restore_from is None:
                return (started,)
            return (started, TrialRestored(trial_id=command.trial_id, at=at))
        if isinstance(command, SaveCheckpoint):
            trial = self._state.trials[command.trial_id]
            self._saved += 1
            iteration = trial.last_result.get(TRAINING_ITERATION, 0)
            checkpoint = CheckpointRef(
                storage=command.storage,
                path=_checkpoint_path(command.storage, command.trial_id, self._saved),
                training_iteration=iteration if isinstance(iteration, int) else 0,
                metrics=trial.last_result,
            )
            return (CheckpointSaved(trial_id=command.trial_id, at=at, checkpoint=checkpoint),)
        # ContinueTrial, PauseTrial, StopTrial, ResetTrial, DeleteCheckpoint,
        # ChainTrials, ExperimentDone: nothing comes back (a worker goes on,
        # or is freed; chained trials start as any other here).
        return ()

    def replay_on(self, scheduler: TrialScheduler) -> ExperimentState:
        """The experiment after this driver's `events`, fed to a fresh one
        around `scheduler` (the same policy built again): the same state
        means the same decisions."""
        state = new_experiment(self._state.config, scheduler=scheduler)
        for event in self.events:
            outcome = step(state, event)
            if isinstance(outcome, Rejection):
                raise AssertionError(f"replay rejected {type(event).__name__}: {outcome.reason}")
            state = outcome[0]
        return state


def _checkpoint_path(storage: CheckpointStorage, trial_id: str, number: int) -> str:
    if storage is CheckpointStorage.MEMORY:
        return f"memory://{trial_id}/{number}"
    return f"{trial_id}/checkpoint_{number:06d}"
