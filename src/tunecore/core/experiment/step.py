"""`step(state, event)`: the one entry point the shell calls.

Rules this module lives by:

- `step` is pure: the same state and event always give the same new state
  and the same commands, and neither argument is mutated. Inside, one event
  is handled by a `_Step`, a private working copy that is discarded or turned
  into the new state at the end; nothing outside it is touched.
- Every change of a trial's status is the lifecycle table's
  (`lifecycle.apply`), and walks one way through `_Step._transition`: the
  table decides, `_Step.put` keeps the queues, the resource accounting and
  the counters of `ExperimentState` true, and the policies hear what the
  transition means for them (`_TELLERS`, keyed by the transition). A
  result is judged first (`_Step._judge`) and reaches the table as a
  `lifecycle.JudgedResult`.
- An illegal event returns a `Rejection` and the old state stays current.
- Order of work for an event: apply it to its trial (with the scheduler and
  the searcher asked or told), then ask the searcher for new trials while fewer than
  `max_pending_trials` wait, then start waiting trials the scheduler picks
  while they fit, then check for the end and for dead ends. The last three
  only run when something schedulable changed, so a result that lets its
  trial continue costs a few map updates.

Why one module of over 400 lines: one handler per event type and the private
working copy (`_Step`) they all change; split, the handlers would reach into
`_Step` from other modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import cast, get_args, overload

import immutables
import msgspec

from tunecore.core import lifecycle, resources
from tunecore.core.dispatch import handles
from tunecore.core.experiment import chains
from tunecore.core.experiment.books import Books, Queue
from tunecore.core.experiment.horizons import with_horizons
from tunecore.core.experiment.requests import after_step
from tunecore.core.experiment.state import (
    ExperimentConfig,
    ExperimentState,
    ids_in_order,
    trial_id_of,
)
from tunecore.core.lifecycle import JudgedResult, LifecycleEvent
from tunecore.core.policies import checked_metric, result_problem
from tunecore.core.results import (
    AUTOFILLED,
    DEFAULT_METRIC,
    flatten,
    is_end_marker,
    repeated_at_end,
)
from tunecore.core.schedulers.base import (
    ExploitsWaiting,
    TrialScheduler,
    waiting_exploits,
)
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.imperative import ImperativeScheduler, choice_wanted, take_decision
from tunecore.core.schedulers.resource_changing import sees_cluster, take_allocation
from tunecore.core.search.base import (
    SearchPolicy,
    answer_to,
    ask_wanted_by,
    asked_again,
    declining_by,
    paused_in,
    take_values,
)
from tunecore.core.search.declines import gave_up_message
from tunecore.core.stoppers import BuiltinStopper
from tunecore.core.stopping import StopCriterionError
from tunecore.model import (
    Asked,
    ChainRan,
    ChainTrials,
    ClusterResourcesChanged,
    Command,
    ContinueTrial,
    ExperimentDone,
    ExperimentEvent,
    ExperimentInterrupted,
    ExperimentResumed,
    ExperimentStopRequested,
    JsonDict,
    Rejection,
    ResolveResources,
    Resources,
    ResourcesUpdateRequested,
    ResultReported,
    SchedulerAnswered,
    SchedulerFailed,
    SearcherFailed,
    StartRequested,
    StartTrial,
    StopRequested,
    Tick,
    TrialChangeEvent,
    TrialFailed,
    TrialRequested,
    TrialSpec,
    TrialState,
    TrialStatus,
    ValuesDrawn,
)
from tunecore.model.decision import CONTINUE, STOP
from tunecore.model.numbers import is_number

Stepped = tuple[ExperimentState, tuple[Command, ...]]
SteppedWithChanges = tuple[ExperimentState, tuple[Command, ...], frozenset[str]]
"""A step as `step_with_changes` gives it: the new state, the commands, and
the ids of the trials the step created or changed."""

PENDING = TrialStatus.PENDING
RUNNING = TrialStatus.RUNNING
PAUSED = TrialStatus.PAUSED
TERMINATED = TrialStatus.TERMINATED
ERROR = TrialStatus.ERROR

API_METRIC_OWNER = "TuneConfig(metric=...)"
"""What asks for the experiment's metric, as the Python API names it."""


def new_experiment(
    config: ExperimentConfig,
    scheduler: TrialScheduler | None = None,
    searcher: SearchPolicy | None = None,
    stopper: BuiltinStopper | None = None,
    *,
    metric_owner: str = API_METRIC_OWNER,
) -> ExperimentState:
    """A fresh experiment; the scheduler and the searcher take the
    experiment's metric and mode where they have none (and raise a clear
    error if they need one and neither has it; a mode alone gives them
    Ray's anonymous metric `_metric`, which strict metric checking passes
    over, as Ray's does, except for a policy that needs it in every result:
    `policies.checked_metric`). `stopper` is the built-in
    stopper, if any (`tunecore.core.stoppers`). `metric_owner` is how a
    result without the metric names the setting that asks for it (the
    command line names its flag)."""
    policy = config.checkpoint_policy
    if policy.persist_due is None:  # a new experiment keeps what is due (see the field)
        policy = msgspec.structs.replace(policy, persist_due=True)
        config = msgspec.structs.replace(config, checkpoint_policy=policy)
    if config.end_repeats_result is None:  # a new experiment's stoppers hear an end (the field)
        config = msgspec.structs.replace(config, end_repeats_result=True)
    chosen = scheduler if scheduler is not None else FIFOScheduler()
    scheduler = chosen.with_objective(config.metric, config.mode)
    searcher = None if searcher is None else searcher.with_objective(config.metric, config.mode)
    if config.checked_metrics is None:
        checked: dict[str, str] = {}
        for metric, owner in (
            (None if config.metric == DEFAULT_METRIC else config.metric, metric_owner),
            (checked_metric(scheduler), type(scheduler).__name__),
            (checked_metric(searcher), type(searcher).__name__),
        ):
            if metric is not None:  # Ray's anonymous one only where a policy needs it
                checked.setdefault(metric, owner)
        config = msgspec.structs.replace(config, checked_metrics=checked)
    return ExperimentState(
        config=config,
        scheduler=scheduler,
        searcher=searcher,
        stopper=stopper,
    )


def step(state: ExperimentState, event: ExperimentEvent) -> Stepped | Rejection:
    """The experiment after `event` and the commands for the shell, or a
    `Rejection` when the event is illegal (the state is then unchanged)."""
    work = _worked(state, event)
    return work if isinstance(work, Rejection) else work.finish()


def step_with_changes(
    state: ExperimentState, event: ExperimentEvent
) -> SteppedWithChanges | Rejection:
    """`step`, and the ids of the trials whose state the step created or
    replaced (every trial whose `TrialState` in the new state is not the
    old one is among them): what the shell keeps per trial (the callbacks'
    `trials` list) follows the steps by these, in O(trials changed), where
    finding them by comparing the states would cost O(trials) a step."""
    work = _worked(state, event)
    if isinstance(work, Rejection):
        return work
    new_state, commands = work.finish()
    return new_state, commands, frozenset(work.touched)


def _worked(state: ExperimentState, event: ExperimentEvent) -> _Step | Rejection:
    """The working copy with `event` handled and the experiment settled."""
    if state.done and not isinstance(event, ExperimentResumed):
        return Rejection(event=type(event).__name__, reason="the experiment is over")
    work = _Step(state, event.at)
    rejection = _HANDLERS[type(event)](work, event)
    if rejection is not None:
        return rejection
    work.settle()
    return work


class _TrialsView(Sequence[TrialState]):
    """The trials of a queue, looked up only when read: handing the
    scheduler the pending and paused queues costs nothing."""

    def __init__(self, queue: Queue, trials: immutables.Map[str, TrialState]) -> None:
        self._queue = queue
        self._trials = trials

    def __len__(self) -> int:
        return len(self._queue)

    @overload
    def __getitem__(self, index: int) -> TrialState: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TrialState]: ...
    def __getitem__(self, index: int | slice) -> TrialState | Sequence[TrialState]:
        trials = list(self)
        return trials[index]

    def __iter__(self) -> Iterator[TrialState]:
        trials = self._trials
        return (trials[i] for i in self._queue.ids())


class _Step:
    """The working copy for one event. Private to `step`; see the module
    docstring for why mutation here keeps `step` pure."""

    __slots__ = (
        "_books",
        "at",
        "changed",
        "commands",
        "config",
        "resumed",
        "saves",
        "scheduler",
        "searcher",
        "state",
        "stopper",
        "touched",
        "trials",
    )

    def __init__(self, state: ExperimentState, at: float) -> None:
        self.state = state
        self.config = state.config
        self.at = at
        self.trials = state.trials
        self.saves = state.saves
        self.scheduler = state.scheduler
        self.searcher = state.searcher
        self.stopper = state.stopper
        self.touched: set[str] = set()  # the trials `put` or added: `step_with_changes`
        self.commands: list[Command] = []
        self.changed = False
        self.resumed = False
        self._books: Books | None = None

    @property
    def books(self) -> Books:
        if self._books is None:
            self._books = Books(self.state)
        return self._books

    # -- events -----------------------------------------------------------

    def _on_result_reported(self, event: ResultReported) -> Rejection | None:
        """A result: checked against the table first (only a running trial
        reports), judged (`_judge`), then carried out by the table. The end
        marker is no result to judge: the table's own row ends the trial,
        after the stopper heard it as the last result again
        (`ExperimentConfig.end_repeats_result`)."""
        trial = self.trials.get(event.trial_id)
        if trial is None:
            return _reject(event, f"there is no trial {event.trial_id!r}")
        if (trial.status, ResultReported) not in lifecycle.TRANSITIONS:
            return lifecycle.check(trial, event)  # words the table's refusal
        if is_end_marker(event.result):
            if self.stopper is not None and self.config.end_repeats_result is True:
                repeated = flatten(repeated_at_end(trial))
                self.stopper, _ = self.stopper.on_result(trial.trial_id, repeated)
            return self._transition(trial, event)
        return self._transition(trial, self._judge(trial, event))

    def _on_cluster_changed(self, event: ClusterResourcesChanged) -> Rejection | None:
        self.books.total = event.total
        self.scheduler = sees_cluster(self.scheduler, event.total)
        self.changed = True
        self._fail_unschedulable(tuple(self.books.pending.ids()))
        return None

    def _on_trial_requested(self, event: TrialRequested) -> Rejection | None:
        if self.books.stopping is not None:
            return _reject(event, f"the experiment is stopping ({self.books.stopping})")
        self._add_trial(event.config, {}, event.experiment_tag)
        return None

    def _on_policy_failed(self, event: SearcherFailed | SchedulerFailed) -> Rejection | None:
        """A searcher or scheduler object of the user's failed in the shell:
        the experiment ends with its error. As in Ray Tune, the trials it
        cuts short are left to a restore (`_interrupt`); a log from before
        `SearcherFailed.resumable` stopped them for good, and replays so."""
        if self.books.stopping is None:
            role = "searcher" if isinstance(event, SearcherFailed) else "scheduler"
            message = f"The {role} failed: {event.error}"
            if event.resumable is True:
                self._interrupt(ExperimentInterrupted(at=self.at, reason=message), error=message)
            else:
                self._stop_experiment(message, error=message)
        self.changed = True
        return None

    def _on_scheduler_answered(self, event: SchedulerAnswered) -> Rejection | None:
        """A scheduler object's answer (see `ImperativeScheduler`) arrived."""
        scheduler = self.scheduler
        answered = (
            scheduler.answered(event.told, event.chose, event.chosen)
            if isinstance(scheduler, ImperativeScheduler)
            else None
        )
        if answered is None:
            return _reject(event, "the scheduler waits for no such answer")
        self.scheduler = answered
        self.changed = True
        return None

    def _on_tick(self, _event: Tick) -> Rejection | None:
        self.changed = True
        return None

    def _on_chain_ran(self, event: ChainRan) -> Rejection | None:
        """The trials chained behind `event.trial_id` that its worker did
        not run leave the chain (`core.experiment.chains`)."""
        for trial_id in self.state.pending:
            trial = self.trials[trial_id]
            if trial.chained_behind == event.trial_id and trial_id not in event.ran:
                self.put(trial, msgspec.structs.replace(trial, chained_behind=None))
        return None

    def _on_stop_requested(self, event: ExperimentStopRequested) -> Rejection | None:
        self._stop_experiment(event.reason, error=None)
        return None

    def _on_interrupted(self, event: ExperimentInterrupted) -> Rejection | None:
        self._interrupt(event, error=None)
        return None

    def _on_resumed(self, event: ExperimentResumed) -> Rejection | None:
        self._resume(event)
        return None

    def _on_trial_event(self, event: TrialChangeEvent) -> Rejection | None:
        """A trial's event other than a result: its lifecycle table decides."""
        trial = self.trials.get(event.trial_id)
        if trial is None:
            return _reject(event, f"there is no trial {event.trial_id!r}")
        return self._transition(trial, event)

    def _take_values(self, event: ValuesDrawn) -> Rejection | None:
        """A policy's function values (see `ValuesWanted`) arrived."""
        if event.owner == "searcher":
            searcher = take_values(self.searcher, event.key, event.values)
            if searcher is None:
                return _reject(event, "the searcher waits for no such values")
            self.searcher = searcher
        else:
            scheduler = take_values(self.scheduler, event.key, event.values)
            if scheduler is None:
                return _reject(event, "the scheduler waits for no such values")
            self.scheduler = scheduler
        self.changed = True
        return None

    def _take_answer(self, event: Asked) -> Rejection | None:
        """A searcher object's answer (see `ExternalSearcher`) arrived."""
        searcher = answer_to(self.searcher, event)
        if searcher is None:
            return _reject(event, "the searcher waits for no such answer")
        self.searcher = searcher
        self.changed = True
        return None

    def _judge(self, trial: TrialState, event: ResultReported) -> JudgedResult:
        """The answer to a running trial's result, asked in Ray's order:
        strict metric checking, the built-in stopper (it sees every accepted
        result), the trial's own criterion (`lifecycle.own_verdict`), and
        only when none of them ends the trial, the scheduler and the
        searcher."""
        flat = flatten(event.result)
        problem = self._result_problem(trial, flat)
        if problem is not None:
            return JudgedResult.of(event, flat, failure=problem)
        trial_id = event.trial_id
        by_stopper = event.stopped_by is not None
        if self.stopper is not None:  # it sees every accepted result, as Ray's `Stopper`
            self.stopper, stop = self.stopper.on_result(trial_id, flat)
            by_stopper = stop or by_stopper
        own = lifecycle.own_verdict(trial, flat)
        if own is not CONTINUE:
            if isinstance(own, StopCriterionError):
                return JudgedResult.of(event, flat, failure=own.message)
            return JudgedResult.of(event, flat, STOP)
        if by_stopper:
            return JudgedResult.of(event, flat, STOP)
        problem = result_problem(self.scheduler, flat)
        if problem is not None:  # the scheduler's own check, where Ray's raises
            return JudgedResult.of(event, flat, failure=problem)
        scheduler = self.scheduler
        if event.allocation is not None:  # a resources_allocation_function's logged answer
            scheduler = take_allocation(scheduler, trial_id, event.allocation)
        if event.decision is not None:  # a Ray-style scheduler object's logged answer
            scheduler = cast(TrialScheduler, take_decision(scheduler, trial_id, event.decision))
        self.scheduler, verdict = scheduler.on_trial_result(trial, flat, self.trials)
        if self.searcher is not None:
            self.searcher = self.searcher.on_trial_result(trial_id, flat)
        return JudgedResult(trial_id, event.at, event.result, flat, verdict)  # hot: no `of`

    def _tell_completed(self, judged: JudgedResult, before: TrialState, _after: TrialState) -> None:
        """Stopped on its result: the policies hear it complete with it."""
        self.scheduler = self.scheduler.on_trial_complete(before, judged.flat)
        if self.searcher is not None:
            self.searcher = self.searcher.on_trial_complete(
                before.trial_id, judged.flat, error=False
            )

    def _tell_training_ended(
        self, _event: ResultReported, before: TrialState, after: TrialState
    ) -> None:
        """The trainable ended on its own (the end marker, the only result
        the step hands the table unjudged): as in Ray, the policies hear
        the trial complete with its last result (marked `done` now, as
        Ray's controller marks it, unless the log is from before
        `ExperimentConfig.end_repeats_result`), and no policy counts the
        marker as a result."""
        ended = after if self.config.end_repeats_result is True else before
        last = flatten(ended.last_result)
        self.scheduler = self.scheduler.on_trial_complete(before, last)
        if self.searcher is not None:
            self.searcher = self.searcher.on_trial_complete(
                before.trial_id, last or None, error=False
            )

    def _tell_stopped_running(
        self, _event: LifecycleEvent, _before: TrialState, after: TrialState
    ) -> None:
        last = flatten(after.last_result)
        self.scheduler = self.scheduler.on_trial_complete(after, last)
        if self.searcher is not None:
            self.searcher = self.searcher.on_trial_complete(after.trial_id, last, error=False)

    def _tell_stopped_waiting(
        self, _event: LifecycleEvent, _before: TrialState, after: TrialState
    ) -> None:
        self.scheduler = self.scheduler.on_trial_remove(after)
        if self.searcher is not None:
            self.searcher = self.searcher.on_trial_complete(after.trial_id, None, error=False)

    def _tell_errored(self, _event: LifecycleEvent, _before: TrialState, after: TrialState) -> None:
        """Failed for good; under `fail_fast` the experiment stops."""
        self.scheduler = self.scheduler.on_trial_error(after)
        if self.searcher is not None:
            self.searcher = self.searcher.on_trial_complete(after.trial_id, None, error=True)
        if self.config.fail_fast and self.books.stopping is None:
            message = f"fail_fast: trial {after.trial_id} failed: {after.error_message}"
            self._stop_experiment(message, error=message)

    def _tell_paused(self, judged: JudgedResult, _before: TrialState, after: TrialState) -> None:
        """A scheduler that paused the trial to resume it on other resources
        (`Verdict.resources`, `ResourceChangingScheduler`): it asks for them
        now, as a paused trial's `ResourcesUpdateRequested` would."""
        wanted = judged.verdict.resources
        if wanted is not None:
            update = ResourcesUpdateRequested(trial_id=after.trial_id, at=self.at, resources=wanted)
            self._transition(after, update)

    def _tell_resized(self, _event: LifecycleEvent, _before: TrialState, after: TrialState) -> None:
        """What waits may start now, or never (more than the cluster has)."""
        self.changed = True
        if after.status is PENDING:
            self._fail_unschedulable((after.trial_id,))

    def _tell_retried(self, _event: LifecycleEvent, _before: TrialState, after: TrialState) -> None:
        """An errored trial runs again after a resume."""
        self.scheduler = self.scheduler.on_trial_add(after)

    def _tell_ended_by_resume(
        self, _event: LifecycleEvent, _before: TrialState, after: TrialState
    ) -> None:
        """An unfinished trial ended by a resume without `resume_unfinished`."""
        self.scheduler = self.scheduler.on_trial_remove(after)

    def _result_problem(self, trial: TrialState, flat: JsonDict) -> str | None:
        """Strict metric checking, as Ray Tune does it: a result that
        reports anything of its own must include, as a number, every metric
        the experiment, its scheduler and its searcher optimise
        (`ExperimentConfig.checked_metrics`, found when it was made)."""
        config = self.config
        checked = config.checked_metrics
        if checked is None:  # a log from before checked_metrics
            checked = {} if config.metric is None else {config.metric: API_METRIC_OWNER}
        for metric, owner in checked.items():
            kind = type(flat.get(metric))
            if kind is float or kind is int or (metric in flat and is_number(flat[metric])):
                continue  # the exact types first: this runs on every result
            if all(key in AUTOFILLED for key in flat):
                return None
            if metric in flat:
                return (
                    f"Trial {trial.trial_id} reported {metric}={flat[metric]!r}; "
                    "it must be a number."
                )
            keys = ", ".join(sorted(flat))
            return (
                f"Trial {trial.trial_id} returned a result without the metric {metric!r} "
                f"that {owner} expects; keys present: {keys}. Include it in every report "
                "(or set the environment variable TUNE_DISABLE_STRICT_METRIC_CHECKING=1)."
            )
        return None

    def _resume(self, event: ExperimentResumed) -> None:
        """A new driver goes on from the replayed state. Workers, saves in
        flight and memory checkpoints died with the old one; the cluster is
        measured again before anything starts; a stop or an end from before
        is lifted (the end is decided again once the trials are settled),
        and the time budget counts only the time the experiment ran."""
        books = self.books
        books.total = None
        books.stopping = None
        books.error = None
        self.changed = True
        self.resumed = True
        if self.searcher is not None:  # a resume asks a searcher that gave up again
            self.searcher = asked_again(self.searcher, anew=True)
        for trial_id in ids_in_order(self.config, books.created):
            rejection = self._transition(self.trials[trial_id], event)
            assert rejection is None  # every status lists ExperimentResumed
            if self.trials[trial_id].awaiting_resources:  # the old driver never answered
                self.commands.append(ResolveResources(trial_id=trial_id))

    # -- transitions ------------------------------------------------------

    def _transition(self, trial: TrialState, event: LifecycleEvent) -> Rejection | None:
        """The one way a trial changes: the table (`lifecycle.apply`)
        decides, `put` keeps the books, the commands go out, and the
        policies hear what the transition means for them."""
        outcome = lifecycle.apply(trial, event)
        if isinstance(outcome, Rejection):
            return outcome
        after = outcome.state
        self.put(trial, after)
        self.commands.extend(outcome.commands)
        teller = _TELLERS.get((trial.status, type(event), after.status))
        if teller is not None:
            teller(self, event, trial, after)
        return None

    def put(self, before: TrialState, after: TrialState) -> None:
        """Store `after` and keep queues, resources and counters in step.
        A chain holds only waiting trials: one that leaves PENDING (started,
        stopped) leaves its chain."""
        if after.chained_behind is not None and after.status is not PENDING:
            after = msgspec.structs.replace(after, chained_behind=None)
        trial_id = after.spec.trial_id  # not the property: this runs on every event
        self.trials = self.trials.set(trial_id, after)
        self.touched.add(trial_id)
        saves = len(after.saving_to) - len(before.saving_to)
        if saves:
            # A save in flight holds back a resume and the experiment's end.
            self.saves += saves
            self.changed = True
        old, new = before.status, after.status
        if old is new:
            return
        self.changed = True
        self.books.leave(before)
        if self.searcher is not None and PAUSED in (old, new) and not after.is_finished:
            self.searcher = paused_in(self.searcher, trial_id, paused=new is PAUSED)
        self.books.enter(after)

    def _add_trial(self, config: JsonDict, evaluated: JsonDict, tag: str) -> None:
        number = self.books.created
        settings = self.config
        spec = TrialSpec(
            trial_id=trial_id_of(settings, number),
            trainable_name=settings.trainable_name,
            config=config,
            evaluated_params=evaluated,
            experiment_tag=tag or str(number),
            resources=settings.resources_per_trial,
            stopping_criterion=settings.stopping_criterion,
            checkpoint_policy=settings.checkpoint_policy,
            max_failures=settings.max_failures,
            export_formats=settings.export_formats,
            restore_path=settings.restore_path,
        )
        trial = lifecycle.new_trial(spec)
        if settings.resources_from_config:
            trial = msgspec.structs.replace(trial, awaiting_resources=True)
            self.commands.append(ResolveResources(trial_id=spec.trial_id))
        self.books.index = self.books.index.set(spec.trial_id, number)
        self.trials = self.trials.set(spec.trial_id, trial)
        self.touched.add(spec.trial_id)
        self.books.pending.insert(spec.trial_id, self.books.index)
        self.scheduler = self.scheduler.on_trial_add(trial)
        self.changed = True
        self._fail_unschedulable((spec.trial_id,))

    def _fail_unschedulable(self, trial_ids: Sequence[str]) -> None:
        """A waiting trial that asks for more than the whole cluster has can
        never start: it ends in ERROR with a message naming both, and the
        rest of the experiment goes on."""
        total = self.books.total
        if total is None:
            return
        known = ClusterResourcesChanged(total=total, at=self.at)
        for trial_id in tuple(trial_ids):
            trial = self.trials[trial_id]
            if trial.status is not PENDING or trial.awaiting_resources:
                continue
            self._transition(trial, known)

    def _stop_experiment(self, reason: str, *, error: str | None) -> None:
        """Stop every unfinished trial; the experiment ends when the last
        saves are in. A trial this step's event let continue (its result
        came in after the time budget ran out, say) is not continued: it
        stops where it is."""
        self.books.stopping = reason
        if error is not None and self.books.error is None:
            self.books.error = error
        self.changed = True
        # Creation order, never the map's: its order follows string hashes,
        # which differ between processes, and replay must give equal commands.
        for trial_id in ids_in_order(self.config, self.books.created):
            current = self.trials[trial_id]
            if not current.is_finished:
                self._transition(current, StopRequested(trial_id=trial_id, at=self.at))
        self.commands = [
            c
            for c in self.commands
            if not (isinstance(c, ContinueTrial) and self.trials[c.trial_id].is_finished)
        ]

    def _interrupt(self, event: ExperimentInterrupted, *, error: str | None) -> None:
        """End the experiment at once without finishing any trial: the
        table leaves each as a crash would (`lifecycle.reset_after_crash`),
        so a resume runs them on. The policies are not told: for them the
        experiment merely paused."""
        self.books.stopping = event.reason
        if error is not None and self.books.error is None:
            self.books.error = error
        self.changed = True
        for trial_id in ids_in_order(self.config, self.books.created):
            self._transition(self.trials[trial_id], event)
        self._end()

    # -- after the event ----------------------------------------------------

    def settle(self) -> None:
        """Enforce the time budget and the stopper's `stop_all`, pull new
        trials, start what fits, and end the experiment when nothing is left."""
        budget = self.config.time_budget_s
        if budget is not None or self.stopper is not None:
            self._enforce_budgets(budget, self._started_at())
        if self.scheduler is not self.state.scheduler:  # only a changed one drops trials
            self._stop_what_the_scheduler_drops()
        self._exploit_waiting_trials()
        if not self.changed:
            return
        self._ask_declined_again()
        self._pull_from_searcher()
        fresh: list[str] = []
        while self._start_what_fits(fresh):
            self._pull_from_searcher()  # refill the waiting queue the starts drained
        self._chain(fresh)
        self._check_end()

    def _enforce_budgets(self, budget: float | None, started: float) -> None:
        """Stop the experiment when its time budget is used up or the
        built-in stopper's `stop_all` says so."""
        if budget is not None and self.at - started >= budget and self.books.stopping is None:
            self._stop_experiment(f"the time budget of {budget:g} s is used up", error=None)
        if self.stopper is not None:
            reason = self.stopper.stop_all(self.at - started)
            if reason is not None and self.books.stopping is None:
                self._stop_experiment(reason, error=None)

    def _stop_what_the_scheduler_drops(self) -> None:
        """Stop the trials the scheduler dropped besides the reporting one
        (see `TrialScheduler.trials_to_stop`), where they stand: a paused
        trial is not resumed for one more result first."""
        for trial_id in self.scheduler.trials_to_stop():
            trial = self.trials[trial_id]
            rejection = self._transition(trial, StopRequested(trial_id=trial_id, at=self.at))
            if rejection is not None:  # finished already: the scheduler forgets it
                self.scheduler = self.scheduler.on_trial_remove(trial)

    def _exploit_waiting_trials(self) -> None:
        """Carry out the exploits of waiting trials the scheduler can make
        now (see `ExploitsWaiting`), before anything starts."""
        for trial_id, taken in waiting_exploits(self.scheduler, self.trials):
            if taken is not None:
                exploit = lifecycle.WaitingExploit(trial_id, taken)
                rejection = self._transition(self.trials[trial_id], exploit)
                assert rejection is None, rejection  # offered only to waiting trials
            scheduler = cast(ExploitsWaiting, self.scheduler)
            self.scheduler = cast(TrialScheduler, scheduler.on_waiting_exploit(trial_id, taken))
            self.changed = True

    def _searcher_exhausted(self) -> bool:
        limit = self.config.max_trials
        return (
            self.books.stopping is not None
            or self.searcher is None
            or self.searcher.is_finished
            or (limit is not None and self.books.created >= limit)
        )

    def _all_settled(self) -> bool:
        """Whether every trial created has finished and nothing is in
        flight: only the searcher can bring more."""
        books = self.books
        return not (books.done or books.running or self.saves) and books.finished == books.created

    def _ask_declined_again(self) -> None:
        """Ask a searcher that declined again once its time has come, when
        nothing else can tell it anything (`core.search.declines`); a Tick
        of the loop brings the time."""
        if self.searcher is None or self._searcher_exhausted() or not self._all_settled():
            return
        declined = declining_by(self.searcher)
        if declined is not None and declined.again_at is not None and self.at >= declined.again_at:
            self.searcher = asked_again(self.searcher)

    def _pull_from_searcher(self) -> None:
        while (
            not self._searcher_exhausted()
            and len(self.books.pending) < self.config.max_pending_trials
        ):
            assert self.searcher is not None  # _searcher_exhausted checked it
            self.searcher, suggestion = self.searcher.suggest(
                trial_id_of(self.config, self.books.created)
            )
            if suggestion is None:
                return
            self._add_trial(
                suggestion.config, suggestion.evaluated_params, suggestion.experiment_tag
            )

    def _start_what_fits(self, started: list[str]) -> bool:
        """Start waiting trials while they fit, adding to `started` those
        started fresh (not chained); whether any started."""
        total = self.books.total
        if total is None or self.books.stopping is not None:
            return False
        any_started = False
        while self.books.pending or self.books.paused:
            fits = _fits_in(resources.subtract(total, self.books.used))
            chosen = self._choose(fits)
            trial = None if chosen is None else self.trials.get(chosen)
            if trial is None:
                break  # nothing to start, or an id the experiment does not know
            start = StartRequested(trial_id=trial.trial_id, at=self.at)
            if self._transition(trial, start) is not None:
                break  # the scheduler chose a trial that cannot start yet
            if trial.chained_behind is None:  # nothing goes behind a chained one
                started.append(trial.trial_id)
            any_started = True
        return any_started

    def _choose(self, fits: Callable[[TrialState], bool]) -> str | None:
        """The trial to start next (see `core.experiment.chains`): a
        chained trial whose trial has ended first; else the scheduler's
        choice among the unchained trials; else among the chained ones,
        taken from their chain (a place is never left empty for a chain)."""
        pending = _TrialsView(self.books.pending, self.trials)
        paused = _TrialsView(self.books.paused, self.trials)
        waiting = (
            chains.sort_waiting(pending, self.trials, fits) if self.config.chain_starts else None
        )
        if waiting is None:
            return self.scheduler.choose_trial_to_run(pending, paused, fits)
        if waiting.released is not None:
            return waiting.released
        chosen = self.scheduler.choose_trial_to_run(waiting.free, paused, fits)
        if chosen is None:
            chosen = self.scheduler.choose_trial_to_run(waiting.reserved, (), fits)
        return chosen

    def _chain(self, started: list[str]) -> None:
        """Chain the trials left waiting (none fits now) behind the trials
        this step started fresh, each `ChainTrials` just before its trial's
        `StartTrial`, when the experiment chains."""
        if not self.config.chain_starts or not started or self.books.stopping is not None:
            return
        waiting = [
            trial
            for trial in _TrialsView(self.books.pending, self.trials)
            if trial.chained_behind is None
        ]
        for trial_id in started:
            head = self.trials[trial_id]
            then = chains.chain_for(
                self.config.chain_starts, self.scheduler, self.stopper, head, waiting
            )
            if not then:
                continue
            for chained_id in then:
                before = self.trials[chained_id]
                self.put(before, msgspec.structs.replace(before, chained_behind=trial_id))
            waiting = [trial for trial in waiting if trial.trial_id not in then]
            at = self.commands.index(StartTrial(trial_id=trial_id))
            self.commands.insert(at, ChainTrials(trial_id=trial_id, then=then))

    def _check_end(self) -> None:
        if self.books.done or self.books.running or self.saves:
            return
        if self.books.finished == self.books.created:
            if self.searcher is None and self.books.created == 0 and self.books.stopping is None:
                return  # trials come only by TrialRequested: wait for the first
            if self._searcher_exhausted():
                self._end()
            elif (
                self.books.total is not None
                and self.books.stopping is None
                and ask_wanted_by(self.searcher) is None
            ):
                declined = declining_by(self.searcher)
                if declined is None or declined.again_at is None:
                    self._dead_end(gave_up_message(declined))
                # else: a Tick asks it again (`_ask_declined_again`)
            return
        if self.books.total is None or self.books.stopping is not None:
            return
        if choice_wanted(self.scheduler, waiting=True):
            return  # the scheduler object is asked next (`ImperativeScheduler`)
        if self.books.paused and not self.books.pending:
            self._dead_end(
                "There are paused trials, but no pending trials and nothing running: "
                f"the scheduler resumed none of {', '.join(self.books.paused.ids())}."
            )
        elif (self.books.pending or self.books.paused) and not self._resolving():
            self._dead_end(
                "Trials are waiting but the scheduler starts none of them while nothing is running."
            )

    def _resolving(self) -> bool:
        """Whether a waiting trial's resources are still being worked out
        by the shell: it may start once they are known."""
        return any(self.trials[t].awaiting_resources for t in self.books.pending.ids())

    def _dead_end(self, message: str) -> None:
        self._stop_experiment(message, error=message)
        if not self.books.running and not self.saves:
            self._end()

    def _end(self) -> None:
        self.books.done = True
        self.commands.append(ExperimentDone(error=self.books.error))

    def finish(self) -> Stepped:
        """The new state. A result that only let its trial continue changes
        the trial and the policies, so only those fields are replaced; the
        books, built when anything else changed, add every field they keep
        (`Books.settled`)."""
        new_state = msgspec.structs.replace(
            self.state,
            trials=self.trials,
            scheduler=self.scheduler,
            searcher=self.searcher,
            stopper=self.stopper,
            saves=self.saves,
            now=self.at,
        )
        if self._books is not None or self.state.started_at is None:
            settled = self.books.settled()
            new_state = msgspec.structs.replace(new_state, **settled, started_at=self._started_at())
        commands = with_horizons(new_state, self.commands)
        requests = after_step(self.state, new_state)
        if not requests:
            return new_state, commands
        if commands and isinstance(commands[-1], ExperimentDone):  # the end stays last
            return new_state, (*commands[:-1], *requests, commands[-1])
        return new_state, (*commands, *requests)

    def _started_at(self) -> float:
        """When the experiment started, for the time budget; a resume moves
        it on by the time the experiment was down."""
        started = self.state.started_at
        if started is None:
            return self.at
        if self.resumed:
            return started + max(0.0, self.at - self.state.now)
        return started


def _fits_in(free: Resources) -> Callable[[TrialState], bool]:
    def fits(trial: TrialState) -> bool:
        return (
            not trial.saving_to
            and not trial.awaiting_resources
            and resources.fits(trial.spec.resources, free)
        )

    return fits


_Handler = Callable[[_Step, ExperimentEvent], Rejection | None]


_HANDLERS: dict[type[ExperimentEvent], _Handler] = {
    ResultReported: handles(ResultReported, _Step._on_result_reported),
    ClusterResourcesChanged: handles(ClusterResourcesChanged, _Step._on_cluster_changed),
    TrialRequested: handles(TrialRequested, _Step._on_trial_requested),
    ValuesDrawn: handles(ValuesDrawn, _Step._take_values),
    Asked: handles(Asked, _Step._take_answer),
    SearcherFailed: handles(SearcherFailed, _Step._on_policy_failed),
    SchedulerAnswered: handles(SchedulerAnswered, _Step._on_scheduler_answered),
    SchedulerFailed: handles(SchedulerFailed, _Step._on_policy_failed),
    Tick: handles(Tick, _Step._on_tick),
    ChainRan: handles(ChainRan, _Step._on_chain_ran),
    ExperimentStopRequested: handles(ExperimentStopRequested, _Step._on_stop_requested),
    ExperimentInterrupted: handles(ExperimentInterrupted, _Step._on_interrupted),
    ExperimentResumed: handles(ExperimentResumed, _Step._on_resumed),
    **{kind: handles(kind, _Step._on_trial_event) for kind in get_args(TrialChangeEvent)},
}
"""Every event type's handler: the experiment's own events, the result path
(the scheduler's verdict joins the trial's own), and a trial's other events,
which its lifecycle table decides."""


_Teller = Callable[[_Step, LifecycleEvent, TrialState, TrialState], None]

_TELLERS: dict[tuple[TrialStatus, type[LifecycleEvent], TrialStatus], _Teller] = {
    (RUNNING, JudgedResult, TERMINATED): handles(JudgedResult, _Step._tell_completed),
    (RUNNING, JudgedResult, ERROR): _Step._tell_errored,
    (RUNNING, JudgedResult, PAUSED): handles(JudgedResult, _Step._tell_paused),
    (RUNNING, ResultReported, TERMINATED): handles(ResultReported, _Step._tell_training_ended),
    (RUNNING, StopRequested, TERMINATED): _Step._tell_stopped_running,
    (PENDING, StopRequested, TERMINATED): _Step._tell_stopped_waiting,
    (PAUSED, StopRequested, TERMINATED): _Step._tell_stopped_waiting,
    (RUNNING, TrialFailed, ERROR): _Step._tell_errored,
    (PAUSED, TrialFailed, ERROR): _Step._tell_errored,
    (PENDING, ClusterResourcesChanged, ERROR): _Step._tell_errored,
    (PENDING, ResourcesUpdateRequested, PENDING): _Step._tell_resized,
    (PAUSED, ResourcesUpdateRequested, PAUSED): _Step._tell_resized,
    (ERROR, ExperimentResumed, PENDING): _Step._tell_retried,
    (PENDING, ExperimentResumed, TERMINATED): _Step._tell_ended_by_resume,
    (RUNNING, ExperimentResumed, TERMINATED): _Step._tell_ended_by_resume,
    (PAUSED, ExperimentResumed, TERMINATED): _Step._tell_ended_by_resume,
}
"""What each transition of a trial means for the scheduler and the
searcher, keyed by (status before, what the table applied, status after);
a transition not listed means nothing to them (a result that lets its trial
go on was heard while it was judged; an interrupt is not told)."""


def _reject(event: ExperimentEvent, reason: str) -> Rejection:
    return Rejection(event=type(event).__name__, reason=reason)
