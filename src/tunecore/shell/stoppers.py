"""`RunConfig(stop=...)` taken apart: what the core runs, and what the shell
runs because it is the user's code.

Ray Tune's `stop` is a dict of thresholds, a `Stopper`, a function
`(trial_id, result) -> bool`, or a list of stoppers. The built-in stoppers
are pure policies (`tunecore.core.stoppers`) that live in the experiment
state. A function, or a `Stopper` subclass of the user's own, is code: the
loop asks it about each result of a running trial before the result is
logged, and a "stop" is recorded in the event (`ResultReported.stopped_by`);
its `stop_all` is asked after every round of events, and a True is logged
as an `ExperimentStopRequested`. So replay and resume never run user code,
and the built-in parts of a `CombinedStopper` still go to the core.
"""

from __future__ import annotations

import abc
import copy
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from tunecore.core.stoppers import BuiltinStopper, combine
from tunecore.core.stoppers.registry import COMBINED, STOPPERS
from tunecore.model import JsonDict
from tunecore.model.foreign_class import foreign_base
from tunecore.shell.reported_objects import ReportedObjects

BUILTIN_TYPES = (*(entry.resolve() for entry in STOPPERS.entries), COMBINED)
"""The built-in stoppers' types (the registry's)."""


class Stopper(abc.ABC):  # noqa: B024 - Ray's base class: override what you need
    """Ray Tune's base class for a stopper of your own.

    `__call__(trial_id, result)` says whether the trial that reported
    `result` stops; `stop_all()` whether the whole experiment does (it is
    asked after every round of events, results or not). Both run in the
    driver, and their verdicts are logged, so replay does not need them;
    pass the stopper again to `Tuner.restore(..., stop=...)` to keep using
    it after a resume. The built-in stoppers count as `Stopper`s too.
    """

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        """Whether the trial stops on this result."""
        raise NotImplementedError

    def stop_all(self) -> bool:
        """Whether the whole experiment stops now."""
        raise NotImplementedError


for _builtin in BUILTIN_TYPES:
    Stopper.register(_builtin)


class CombinedStopper(Stopper):
    """Stops a trial, or the experiment, when any of `stoppers` does (Ray's
    'OR'). Built-in stoppers in it run in the core, yours in the driver."""

    def __init__(self, *stoppers: Stopper | BuiltinStopper) -> None:
        self.stoppers = stoppers

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        return any(_as_code(s)(trial_id, result) for s in self.stoppers)

    def stop_all(self) -> bool:
        return any(_as_code(s).stop_all() for s in self.stoppers)


class FunctionStopper(Stopper):
    """A function `(trial_id, result) -> bool` as a stopper; it never stops
    the whole experiment."""

    def __init__(self, function: Callable[[str, dict[str, Any]], bool]) -> None:
        self._function = function

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        return bool(self._function(trial_id, result))

    def stop_all(self) -> bool:
        return False

    @classmethod
    def is_valid_function(cls, function: object) -> bool:
        """Whether `function` is a plain callable rather than a stopper; one
        with a `stop_all` that does not subclass `Stopper` is an error, as
        in Ray (it would silently lose its `stop_all`)."""
        plain = callable(function) and not isinstance(function, Stopper)
        if plain and hasattr(function, "stop_all"):
            raise ValueError(
                f"stop={function!r} has a stop_all method but is no tunecore.stopper.Stopper: "
                "subclass Stopper so that stop_all is called"
            )
        return plain


def _as_code(stopper: Stopper | BuiltinStopper) -> Stopper:
    if isinstance(stopper, BUILTIN_TYPES):
        raise TypeError(
            f"{type(stopper).__name__} is a pure policy run by the experiment "
            "(tunecore.core.stoppers); it is not called directly"
        )
    return typing.cast(Stopper, stopper)  # every built-in type was refused above


StopSetting: TypeAlias = (
    Mapping[str, float | bool]
    | Stopper
    | BuiltinStopper
    | Callable[[str, dict[str, Any]], bool]
    | Sequence[Stopper | BuiltinStopper]
    | None
)
"""What `RunConfig(stop=...)` and `tunecore.run(stop=...)` take."""


@dataclass(frozen=True)
class UserStoppers:
    """The user's own stoppers, asked in order (the first that stops a
    trial ends the round, as Ray's `CombinedStopper` does)."""

    stoppers: tuple[Stopper, ...]

    def judge(
        self, trial_id: str, result: JsonDict, objects: ReportedObjects | None = None
    ) -> str | None:
        """The name of the stopper that stops the trial on `result`, or None.
        The stopper gets its own copy of the result, with `trial_id`, and
        the `objects` it carried in place of their JSON form (not copied:
        not every object can be)."""
        shown = copy.deepcopy(dict(result))
        if objects is not None:
            shown = objects.merged(shown)
        shown.setdefault("trial_id", trial_id)
        for stopper in self.stoppers:
            if stopper(trial_id, shown):
                return _name(stopper)
        return None

    def describe(self) -> str:
        return " | ".join(_name(s) for s in self.stoppers)

    def stop_all(self) -> str | None:
        """Why the whole experiment stops now, or None."""
        for stopper in self.stoppers:
            if stopper.stop_all():
                return f"{_name(stopper)}.stop_all() returned True"
        return None


@dataclass(frozen=True)
class StopPlan:
    """`stop` split by who runs it: thresholds and built-in stoppers in the
    core, the user's stoppers in the shell."""

    criteria: dict[str, float | bool]
    builtin: BuiltinStopper | None
    user: UserStoppers | None


def adopt_ray_stopper(stop: object) -> None:
    """Take `stop` as a `Stopper` when it is an instance of Ray Tune's own
    `ray.tune.Stopper` class. A package built on Ray Tune (rt-stoppers-
    contrib's `NoImprovementTrialStopper`, ...) subclasses Ray's class, and
    its imports are not the user's to rewrite; Ray's stopper protocol is
    this one (`__call__(trial_id, result)`, `stop_all()`, both asked in the
    driver), so its instances run as the user's own stoppers. Ray's class is
    found by name in the instance's MRO: tunecore never imports `ray.tune`."""
    base = foreign_base(type(stop), "ray.tune.stopper", ("Stopper",))
    if base is not None:
        Stopper.register(base)


def plan_stop(stop: object) -> StopPlan:
    """Split `stop` (see `StopSetting`); anything else is an error naming it."""
    adopt_ray_stopper(stop)
    if stop is None:
        return StopPlan({}, None, None)
    if isinstance(stop, Mapping):
        return StopPlan(dict(stop), None, None)
    if isinstance(stop, list | tuple):
        stop = CombinedStopper(*stop)
    if FunctionStopper.is_valid_function(stop):
        stop = FunctionStopper(stop)  # type: ignore[arg-type]
    if not isinstance(stop, Stopper):
        raise ValueError(
            f"stop={stop!r} is invalid: expected a dict of thresholds, a "
            "tunecore.stopper.Stopper, a function (trial_id, result) -> bool, or a list of stoppers"
        )
    builtin: list[BuiltinStopper] = []
    user: list[Stopper] = []
    _split(stop, builtin, user)
    return StopPlan({}, combine(tuple(builtin)), UserStoppers(tuple(user)) if user else None)


def _split(stop: object, builtin: list[BuiltinStopper], user: list[Stopper]) -> None:
    adopt_ray_stopper(stop)
    if type(stop) in BUILTIN_TYPES:
        builtin.append(stop)  # type: ignore[arg-type]
    elif isinstance(stop, BUILTIN_TYPES):
        raise ValueError(
            f"{type(stop).__name__} subclasses the built-in {type(stop).__mro__[1].__name__}, "
            "a pure policy the experiment logs by its type; for a stopper of your own, "
            "subclass tunecore.stopper.Stopper"
        )
    elif isinstance(stop, CombinedStopper):
        for part in stop.stoppers:
            _split(part, builtin, user)
    elif isinstance(stop, Stopper):
        user.append(stop)
    else:
        raise ValueError(f"{stop!r} in a CombinedStopper is no tunecore.stopper.Stopper")


def _name(stopper: Stopper) -> str:
    if isinstance(stopper, FunctionStopper):
        function = stopper._function
        return f"FunctionStopper({getattr(function, '__qualname__', repr(function))})"
    return type(stopper).__name__
