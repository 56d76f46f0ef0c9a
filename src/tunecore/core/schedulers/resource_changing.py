"""Ray Tune's `ResourceChangingScheduler`: another scheduler's decisions,
with live trials resized as they go.

On each result the base scheduler decides first. When it lets the trial
continue, the allocation (`core.schedulers.distribute`) says what the
trial should hold now; if that differs from what it holds, the verdict is
PAUSE with the new resources (`Verdict.resources`): the experiment pauses
the trial, changes its request, and it resumes on a new worker of that
size from the checkpoint taken on pausing, when the base scheduler picks
it and it fits, as in Ray. Everything else is the base scheduler's.

Rules it lives by:

- A built-in allocation is computed here, from the trials and the
  cluster's total, which the experiment hands over as it measures it
  (`sees_cluster`).
- A user's function is code the core cannot call. When the base scheduler
  continues a trial and no answer came with the result, the scheduler
  continues it and says it wants one (`allocation_wanted`); the shell,
  which steps the result before logging it, calls the function and steps
  the result again with the answer on it (`ResultReported.allocation`,
  given to the scheduler by `take_allocation`). Only that event is
  logged, so replay and resume take the same decision without the code.
- Ray's base resources are the first trial's (`base_trial_resources`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Generic, Self, TypeVar

import msgspec

from tunecore.core.policies import result_problem
from tunecore.core.schedulers.base import (
    Fits,
    TrialScheduler,
    Verdict,
    evolve,
    policy_metric,
)
from tunecore.core.schedulers.distribute import (
    Allocation,
    AllocationFunction,
    DistributeResources,
    DistributeResourcesToTopJob,
    Pool,
    function_place,
)
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.model import Decision, InvalidFieldError, JsonDict, Mode, Resources, TrialState

_OWNER = "ResourceChangingScheduler"

if TYPE_CHECKING:
    from typing_extensions import TypeVar as _TypeVarWithDefault

    B = _TypeVarWithDefault("B", bound=TrialScheduler, default=TrialScheduler)
else:
    B = TypeVar("B", bound=TrialScheduler)


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """A user function's answer for the result being handled: the trial's
    resources after it (its current ones when the function said None)."""

    trial_id: str
    resources: Resources


class ResourceChangingScheduler(msgspec.Struct, Generic[B], frozen=True, tag=True):
    """`base_scheduler` (FIFO when None) decides; `resources_allocation_function`
    (Ray's default `DistributeResources()`, a `DistributeResourcesToTopJob`,
    a function `(tune_controller, trial, result, scheduler)` returning a
    `PlacementGroupFactory` or None, or None for no resizing) resizes the
    trials it continues. See the module docstring.

    State: `base_trial_resources` (the first trial's), `cluster` (the
    total last measured), and the user function's pending `answer` or the
    trial whose result `wanted` one."""

    base_scheduler: B | None = None
    if TYPE_CHECKING:  # what a user may pass; a function becomes its place
        resources_allocation_function: Allocation | Callable[..., object] | None = (
            DistributeResources()
        )
    else:
        resources_allocation_function: Allocation | None = DistributeResources()
    base_trial_resources: Resources | None = None
    cluster: Resources | None = None
    answer: Answer | None = None
    wanted: str | None = None

    def __post_init__(self) -> None:
        if self.base_scheduler is None:
            msgspec.structs.force_setattr(self, "base_scheduler", FIFOScheduler())
        if isinstance(self.base_scheduler, ResourceChangingScheduler):
            raise InvalidFieldError(
                f"{_OWNER}.base_scheduler",
                _OWNER,
                "a scheduler that is not itself resource-changing",
            )
        allocation: object = self.resources_allocation_function
        if callable(allocation) and not isinstance(allocation, msgspec.Struct):
            msgspec.structs.force_setattr(
                self, "resources_allocation_function", function_place(allocation)
            )
        elif allocation is not None and not isinstance(
            allocation, DistributeResources | AllocationFunction
        ):
            raise InvalidFieldError(
                f"{_OWNER}.resources_allocation_function",
                allocation,
                "DistributeResources(...), DistributeResourcesToTopJob(...), a function "
                "(tune_controller, trial, result, scheduler) or None",
            )

    @property
    def base(self) -> B:
        """The base scheduler (never None after construction)."""
        base = self.base_scheduler
        assert base is not None
        return base

    @property
    def metric(self) -> str | None:
        """The metric results must carry: the base scheduler's, else the
        top-job allocation's."""
        allocation = self.resources_allocation_function
        own = allocation.metric if isinstance(allocation, DistributeResourcesToTopJob) else None
        return policy_metric(self.base) or own

    @property
    def metric_required(self) -> bool:
        """The base scheduler's (`core.policies.checked_metric`): it sees
        every result."""
        return getattr(self.base, "metric_required", False) is True

    def result_problem(self, result: JsonDict) -> str | None:
        """The base scheduler's (`core.policies.result_problem`): it is
        asked about every result."""
        return result_problem(self.base, result)

    @property
    def allocation_function(self) -> AllocationFunction | None:
        """The place of the user's function, if resizing is the user's."""
        allocation: object = self.resources_allocation_function
        return allocation if isinstance(allocation, AllocationFunction) else None

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """The base scheduler takes the experiment's objective; a top-job
        allocation takes its own, else the base scheduler's, else the
        experiment's (Ray's order)."""
        base = self.base.with_objective(metric, mode)
        allocation = self.resources_allocation_function
        if isinstance(allocation, DistributeResources):
            own_metric = policy_metric(base)
            own_mode = getattr(base, "mode", None)
            allocation = allocation.with_objective(
                own_metric if own_metric is not None else metric,
                own_mode if isinstance(own_mode, Mode) else mode,
            )
        return evolve(self, base_scheduler=base, resources_allocation_function=allocation)

    def on_trial_add(self, trial: TrialState) -> Self:
        """The first trial's resources are the base (a trial whose
        resources the shell still works out counts once they are known)."""
        base = self.base_trial_resources
        if base is None and not trial.awaiting_resources:
            base = trial.spec.resources
            allocation = self.resources_allocation_function
            if isinstance(allocation, DistributeResources):
                allocation.check_base(_OWNER, base)
        return evolve(self, base_scheduler=self.base.on_trial_add(trial), base_trial_resources=base)

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        base, verdict = self.base.on_trial_result(trial, result, trials)
        answer, wanted = self.answer, None
        resized: Resources | None = None
        if verdict.decision is Decision.CONTINUE and verdict.exploit is None:
            allocation = self.resources_allocation_function
            if isinstance(allocation, DistributeResources):
                resized = allocation.allocate(trial, result, self._pool(trial, trials))
            elif isinstance(allocation, AllocationFunction):
                if answer is not None and answer.trial_id == trial.trial_id:
                    resized = answer.resources
                else:
                    wanted = trial.trial_id
        scheduler = evolve(
            self,
            base_scheduler=base,
            base_trial_resources=self._base_or(trial),
            answer=None,
            wanted=wanted,
        )
        if resized is None or resized == trial.spec.resources:
            return scheduler, verdict
        return scheduler, Verdict(
            decision=Decision.PAUSE, checkpoint=verdict.checkpoint, resources=resized
        )

    def _pool(self, trial: TrialState, trials: Mapping[str, TrialState]) -> Pool:
        live = sorted((t for t in trials.values() if not t.is_finished), key=lambda t: t.trial_id)
        total = self.cluster if self.cluster is not None else Resources(cpu=0.0)
        return Pool(live=tuple(live), base=self._base_or(trial), total=total)

    def _base_or(self, trial: TrialState) -> Resources:
        """The base resources, or the reporting trial's when none was
        known when trials were added (their resources were still being
        worked out)."""
        base = self.base_trial_resources
        return trial.spec.resources if base is None else base

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        return evolve(self, base_scheduler=self.base.on_trial_complete(trial, result))

    def on_trial_error(self, trial: TrialState) -> Self:
        return evolve(self, base_scheduler=self.base.on_trial_error(trial))

    def on_trial_remove(self, trial: TrialState) -> Self:
        return evolve(self, base_scheduler=self.base.on_trial_remove(trial))

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """The base scheduler's choice: a resized trial is paused with its
        new request already, so it starts when that fits."""
        return self.base.choose_trial_to_run(pending, paused, fits)

    def trials_to_stop(self) -> tuple[str, ...]:
        return self.base.trials_to_stop()

    def debug_string(self) -> str:
        return f"(ResourceChangingScheduler) {self.base.debug_string()}"

    def sees_cluster(self, total: Resources) -> Self:
        """The cluster's total, as the experiment measured it."""
        return evolve(self, cluster=total)

    def take_allocation(self, trial_id: str, resources: Resources) -> Self:
        """The user function's answer for the result of `trial_id` about
        to be handled (`ResultReported.allocation`)."""
        return evolve(self, answer=Answer(trial_id=trial_id, resources=resources))


def sees_cluster(scheduler: TrialScheduler, total: Resources) -> TrialScheduler:
    """`scheduler` told the cluster's total, if it is one that uses it."""
    if isinstance(scheduler, ResourceChangingScheduler):
        return scheduler.sees_cluster(total)
    return scheduler


def take_allocation(
    scheduler: TrialScheduler, trial_id: str, resources: Resources
) -> TrialScheduler:
    """`scheduler` holding a user function's logged answer for the result
    of `trial_id`; a scheduler that asks for none ignores it."""
    if isinstance(scheduler, ResourceChangingScheduler):
        return scheduler.take_allocation(trial_id, resources)
    return scheduler


def allocation_wanted(scheduler: object) -> str | None:
    """The trial whose result just handled waits for the user function's
    answer (see the module docstring), or None."""
    if isinstance(scheduler, ResourceChangingScheduler):
        wanted: str | None = scheduler.wanted
        return wanted
    return None
