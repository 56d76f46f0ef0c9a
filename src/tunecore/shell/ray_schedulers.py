"""Ray Tune's `TrialScheduler` and `FIFOScheduler`, for schedulers written
against Ray's imperative API.

Ray's docs write a scheduler of one's own as a subclass of these two, with
an `__init__` that sets attributes and hooks that take the run's controller
first and return a string verdict:

    class StopBelow(FIFOScheduler):
        def __init__(self, threshold):
            super().__init__()
            self.threshold = threshold

        def on_trial_result(self, tune_controller, trial, result):
            if result["acc"] < self.threshold:
                return TrialScheduler.STOP
            return TrialScheduler.CONTINUE

Such a class is an ordinary Python class here, run in the shell by
`tunecore.shell.imperative` (the core holds its place,
`ImperativeScheduler`). The two names stay tunecore's as well:

- `FIFOScheduler()` itself builds the core's pure FIFO policy (every
  script that passes `FIFOScheduler()` runs as fast as before), and
  `isinstance(policy, FIFOScheduler)` holds for it;
- a subclass written in tunecore's style, a frozen msgspec struct
  (`class Mine(FIFOScheduler, frozen=True, tag=True)`, or hooks with the
  core's signatures: `on_trial_result(self, trial, result, trials)`), is
  built on the core's FIFO policy, as it always was
  (`ray_style_namespace` tells the two apart).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import msgspec

from tunecore.core.schedulers.fifo import FIFOScheduler as PureFIFO

RAY_HOOKS = (
    "on_trial_add",
    "on_trial_result",
    "on_trial_complete",
    "on_trial_error",
    "on_trial_remove",
    "choose_trial_to_run",
)
CONTROLLER_NAMES = frozenset({"tune_controller", "trial_runner"})
"""The first parameter of every hook of Ray's scheduler API (2.x, 1.x)."""

_CORE_PARAMETERS = {
    "on_trial_add": ("trial",),
    "on_trial_error": ("trial",),
    "on_trial_remove": ("trial",),
    "on_trial_complete": ("trial", "result"),
    "on_trial_result": ("trial", "result", "trials"),
    "choose_trial_to_run": ("pending", "paused", "fits"),
}
"""The parameters (after `self`) of the core's hooks (`core.schedulers.base`)."""


def hook_style(function: object, hook: str) -> str | None:
    """ "ray" when `function`, a `hook` of a class, takes Ray's controller
    first; "core" when it has the core's parameters; None otherwise."""
    try:
        names = list(inspect.signature(function).parameters)[1:]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if names and names[0] in CONTROLLER_NAMES:
        return "ray"
    if tuple(names) == _CORE_PARAMETERS[hook]:
        return "core"
    return None


def ray_style_namespace(namespace: dict[str, Any]) -> bool:
    """Whether a class body subclassing `FIFOScheduler` or `TrialScheduler`
    is written in Ray's style: no hook of its own with the core's
    signature (an `__init__`, Ray's hooks, or nothing of either)."""
    return not any(
        hook in namespace and hook_style(namespace[hook], hook) == "core" for hook in RAY_HOOKS
    )


class _RayStyle(type):
    """Builds Ray-style subclasses as plain classes, and the rest (see the
    module docstring) on the core's FIFO policy."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **options: Any
    ) -> Any:
        ours = [base for base in bases if isinstance(base, _RayStyle)]
        core_style = options or any(issubclass(base, msgspec.Struct) for base in bases)
        if ours and (core_style or not ray_style_namespace(namespace)):
            replaced = tuple(PureFIFO if base in ours else base for base in bases)
            struct_meta: Any = type(PureFIFO)  # msgspec's StructMeta
            return struct_meta(name, replaced, namespace, **options)
        return super().__new__(mcs, name, bases, namespace, **options)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is FIFOScheduler:
            return PureFIFO(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, instance: object) -> bool:
        if type.__instancecheck__(cls, instance):
            return True
        if cls is FIFOScheduler:
            return isinstance(instance, PureFIFO)
        return cls is TrialScheduler and is_policy(instance)


def is_policy(scheduler: object) -> bool:
    """Whether `scheduler` is one of the core's pure policies (a frozen
    msgspec struct with the core's hooks)."""
    return isinstance(scheduler, msgspec.Struct) and callable(
        getattr(scheduler, "with_objective", None)
    )


class TrialScheduler(metaclass=_RayStyle):
    """Ray Tune's scheduler interface (`ray.tune.schedulers.TrialScheduler`):
    subclass it, or `FIFOScheduler`, to write a scheduler as Ray's docs do.
    Its hooks are called as Ray calls them (`tunecore.shell.imperative`)."""

    CONTINUE: ClassVar[str] = "CONTINUE"
    PAUSE: ClassVar[str] = "PAUSE"
    STOP: ClassVar[str] = "STOP"
    NOOP: ClassVar[str] = "NOOP"
    """The scheduler acted itself (`tune_controller.pause_trial(trial)`);
    otherwise the trial continues."""

    _metric: str | None = None
    _supports_buffered_results = True

    @property
    def metric(self) -> str | None:
        return self._metric

    @property
    def supports_buffered_results(self) -> bool:
        return self._supports_buffered_results

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: Any) -> bool:
        """Take the experiment's metric where this scheduler has none
        (Ray's rule; Ray's anonymous default metric is None here)."""
        if self._metric and metric:
            return False
        if metric:
            self._metric = metric
        return True

    def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
        raise NotImplementedError

    def on_trial_error(self, tune_controller: Any, trial: Any) -> None:
        raise NotImplementedError

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        raise NotImplementedError

    def on_trial_complete(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> None:
        raise NotImplementedError

    def on_trial_remove(self, tune_controller: Any, trial: Any) -> None:
        raise NotImplementedError

    def choose_trial_to_run(self, tune_controller: Any) -> Any:
        raise NotImplementedError

    def debug_string(self) -> str:
        raise NotImplementedError

    def save(self, checkpoint_path: str) -> None:
        raise NotImplementedError

    def restore(self, checkpoint_path: str) -> None:
        raise NotImplementedError


class FIFOScheduler(TrialScheduler):
    """Ray's FIFO scheduler, to subclass (`FIFOScheduler()` itself is the
    core's FIFO policy: module docstring)."""

    def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
        pass

    def on_trial_error(self, tune_controller: Any, trial: Any) -> None:
        pass

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        return TrialScheduler.CONTINUE

    def on_trial_complete(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> None:
        pass

    def on_trial_remove(self, tune_controller: Any, trial: Any) -> None:
        pass

    def choose_trial_to_run(self, tune_controller: Any) -> Any:
        """The first PENDING trial, else the first PAUSED one."""
        for status in ("PENDING", "PAUSED"):
            for trial in tune_controller.get_trials():
                if trial.status == status:
                    return trial
        return None

    def debug_string(self) -> str:
        return "Using FIFO scheduling algorithm."


def is_ray_style(scheduler: object) -> bool:
    """Whether `scheduler` is an object of a Ray-style subclass of
    `TrialScheduler` (the core's policies are not, whatever `isinstance`
    says for Ray's sake)."""
    return type.__instancecheck__(TrialScheduler, scheduler)
