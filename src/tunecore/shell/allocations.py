"""A user's `resources_allocation_function`, called where Ray calls it.

`ResourceChangingScheduler(resources_allocation_function=fn)` holds only the
place of `fn` in the core (`core.schedulers.distribute.AllocationFunction`).
When the base scheduler continues a trial, the core says it wants an answer
(`allocation_wanted`); the loop then calls `ResourceAllocator.allocate`,
puts the answer on the result (`ResultReported.allocation`) and steps the
result again with it, so the log holds the answer and replay and resume
never call `fn`. Going on after a restore needs `fn` again:
`Tuner.restore(path, trainable, resources_allocation_function=fn)`.

`fn` gets Ray's four arguments, as views over the experiment before the
result (so `trial.last_result` is the previous result, as in Ray):
`tune_controller` (`get_live_trials()`, and the `_resource_updater` whose
`get_num_cpus()`/`get_num_gpus()` Ray's example reads), the `Trial`, the
flattened result, and the scheduler (`base_trial_resources`, the first
trial's, which Ray's example reads as `_base_trial_resources`). It returns a
`PlacementGroupFactory`, a resources dict, or None (no change).
"""

from __future__ import annotations

from collections.abc import Callable

from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.state import trials_in_order
from tunecore.core.results import flatten
from tunecore.core.schedulers.distribute import AllocationFunction as AllocationPlace
from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler
from tunecore.model import JsonDict, Mode, Resources, TrialState
from tunecore.shell.trainable.placement_group import PlacementGroupFactory
from tunecore.shell.trainable.resources import as_resources
from tunecore.shell.trial_view import Trial

AllocationFunction = Callable[..., object]

_OWNER = "ResourceChangingScheduler.resources_allocation_function"


class ResourceUpdater:
    """Ray's `tune_controller._resource_updater`: the cluster's totals."""

    def __init__(self, total: Resources | None) -> None:
        self._total = total if total is not None else Resources(cpu=0.0)

    def get_num_cpus(self) -> float:
        return self._total.cpu

    def get_num_gpus(self) -> float:
        return self._total.gpu


class ControllerView:
    """What Ray passes as `tune_controller`: the experiment, read-only."""

    def __init__(self, state: ExperimentState, view: Callable[[TrialState], Trial]) -> None:
        self._state = state
        self._view = view
        self._resource_updater = ResourceUpdater(state.total)

    def get_trials(self) -> list[Trial]:
        """Every trial, in creation order."""
        return [self._view(trial) for trial in trials_in_order(self._state)]

    def get_live_trials(self) -> list[Trial]:
        """The trials not finished (TERMINATED or ERROR), in creation order."""
        return [trial for trial in self.get_trials() if not trial.is_finished()]


class SchedulerView:
    """The `ResourceChangingScheduler` as the function sees it, in Ray's
    attribute names, as it stands when the function is called."""

    def __init__(self, scheduler: ResourceChangingScheduler[object]) -> None:  # type: ignore[type-var]
        self._scheduler = scheduler
        base = scheduler.base_trial_resources
        self.base_trial_resources = None if base is None else PlacementGroupFactory.of(base)
        self._base_trial_resources = self.base_trial_resources
        self._base_scheduler = self.base_scheduler = scheduler.base
        self._metric = self.metric = scheduler.metric
        mode = getattr(scheduler.base, "mode", None)
        self._mode = self.mode = mode.value if isinstance(mode, Mode) else None


class ResourceAllocator:
    """Calls the user's function for a result the core wants it for."""

    def __init__(self, function: AllocationFunction) -> None:
        if not callable(function):
            raise TypeError(
                f"{_OWNER} must be a function (tune_controller, trial, result, scheduler); "
                f"got {type(function).__name__}"
            )
        self._function = function

    def allocate(
        self,
        before: ExperimentState,
        after: ExperimentState,
        trial_id: str,
        view: Callable[[TrialState], Trial],
    ) -> Resources:
        """The trial's resources after its result: what the function
        answered, or what it holds when the function said None. `before`
        is the experiment before the result, `after` after it (for the
        result as the trial recorded it)."""
        scheduler = after.scheduler
        assert isinstance(scheduler, ResourceChangingScheduler)  # it wanted the answer
        trial = before.trials[trial_id]
        result: JsonDict = dict(flatten(after.trials[trial_id].last_result))
        answer = self._function(
            ControllerView(before, view), view(trial), result, SchedulerView(scheduler)
        )
        if answer is None:
            return trial.spec.resources
        return as_resources(answer, f"{_OWNER}(...) (what it returned)")


def allocator_for(
    scheduler: object, again: AllocationFunction | None, built: object = None
) -> ResourceAllocator | None:
    """What calls the user's allocation function for an experiment whose
    `scheduler` (as the log holds it, which keeps only the function's
    name) resizes trials with one: the function given again on a restore
    (`again`), else the one in the scheduler the user `built`. None when no
    function is needed; a clear error when one is needed and not given."""
    place = _place(scheduler)
    if place is None:
        return None
    own = _place(built)
    function = again if again is not None else None if own is None else own.func
    if function is None:
        raise ValueError(
            f"the experiment's ResourceChangingScheduler resizes trials with your function "
            f"{place.name!r}: it is code, which the log does not hold; pass it again as "
            "Tuner.restore(path, trainable, resources_allocation_function=...)"
        )
    return ResourceAllocator(function)


def _place(scheduler: object) -> AllocationPlace | None:
    if not isinstance(scheduler, ResourceChangingScheduler):
        return None
    place: AllocationPlace | None = scheduler.allocation_function
    return place
