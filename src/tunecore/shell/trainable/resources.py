"""What a trial asks for, in Ray Tune's spellings, as the core's `Resources`.

A request is a dict (`{"cpu": 2, "gpu": 0.5, "memory": 2**30,
"custom_resources": {...}}`, other keys being custom resources, as Ray
reads it), a `PlacementGroupFactory`, a `ScalingConfig` (Ray Train's, which
`with_resources` takes too: the placement group its workers would need), or
a function of the trial's config returning one of those
(`with_resources(train, lambda config: ...)`, a class's
`default_resource_request(config)`). A function is user code, so the core
cannot call it: the experiment is marked `resources_from_config` and the
shell answers each new trial's `ResolveResources` with what the function
says (see `ResourcePlan`); only the answer reaches the log.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias, TypeGuard

from tunecore.model import JsonDict, Resources
from tunecore.model.errors import InvalidFieldError
from tunecore.shell.trainable.classapi import Trainable
from tunecore.shell.trainable.placement_group import (
    PlacementGroupFactory,
    from_ray,
    parse_bundle,
)
from tunecore.shell.trainable.scaling_config import ScalingConfig

FixedRequest: TypeAlias = "Mapping[str, object] | PlacementGroupFactory | ScalingConfig"


def is_fixed_request(request: object) -> TypeGuard[FixedRequest]:
    """Whether `request` is a request itself (a dict, a
    `PlacementGroupFactory` or a `ScalingConfig`) rather than a function of
    the config returning one."""
    return isinstance(request, Mapping | PlacementGroupFactory | ScalingConfig)


ResourcesOf: TypeAlias = Callable[[JsonDict], Resources]


def as_resources(request: object, field: str) -> Resources:
    """The core's `Resources` for a dict, a `PlacementGroupFactory` or a
    `ScalingConfig` (Ray's own `PlacementGroupFactory` too); a clear error
    naming `field` for anything else."""
    request = from_ray(request)
    if isinstance(request, ScalingConfig):
        request = request.as_placement_group_factory()
    if isinstance(request, PlacementGroupFactory):
        return request.as_resources()
    if not isinstance(request, Mapping):
        raise InvalidFieldError(
            field,
            request,
            "a dict such as {'cpu': 2, 'gpu': 0}, a PlacementGroupFactory or a ScalingConfig",
        )
    if not request:
        return Resources()  # Ray's default: one CPU
    spec = dict(request)
    custom = spec.pop("custom_resources", None) or {}
    if not isinstance(custom, Mapping):
        raise InvalidFieldError(f"{field}['custom_resources']", custom, "a dict of name -> amount")
    return parse_bundle({**spec, **custom}, field)


@dataclass(frozen=True)
class ResourcePlan:
    """What an experiment's trials ask for: `fixed` for every trial, or,
    when `of_config` is set, what it returns for each trial's config."""

    fixed: Resources
    of_config: ResourcesOf | None = None


def requested_by(target: object) -> tuple[str, object] | None:
    """What `target` asks for itself, and where it says so: resources given
    to `with_resources`, or a Trainable class's own
    `default_resource_request`."""
    attached = getattr(target, WITH_RESOURCES, None)
    if attached is not None:
        return "with_resources", attached
    if inspect.isclass(target) and issubclass(target, Trainable):
        request = target.default_resource_request
        # A class method (Ray's form) or a static method (users write one:
        # Ray only ever calls it with the config).
        own = getattr(request, "__func__", request)
        if own is not Trainable.default_resource_request.__func__:  # type: ignore[attr-defined]
            return f"{target.__qualname__}.default_resource_request", request
    return None


def plan_resources(target: object, resources_per_trial: object | None) -> ResourcePlan:
    """The plan for an experiment of `target`, given `resources_per_trial`
    (None when the user did not set it). Asking in two places is an error,
    as in Ray: it would be unclear which one holds."""
    own = requested_by(target)
    if own is None:
        if resources_per_trial is None:
            return ResourcePlan(Resources())
        return ResourcePlan(as_resources(resources_per_trial, "resources_per_trial"))
    where, request = own
    if resources_per_trial is not None:
        raise ValueError(
            f"The trial resources are given twice: by {where} and by "
            f"resources_per_trial={resources_per_trial!r}. Keep one of them "
            "(remove resources_per_trial to use the trainable's own request)."
        )
    if is_fixed_request(request):
        return ResourcePlan(as_resources(request, where))
    if not callable(request):
        raise InvalidFieldError(
            where, request, "a dict, a PlacementGroupFactory, a ScalingConfig or a function"
        )

    def of_config(config: JsonDict) -> Resources:
        answer = request(config)
        return Resources() if answer is None else as_resources(answer, f"{where}(config)")

    return ResourcePlan(Resources(), of_config)


WITH_RESOURCES = "_tunecore_resources"
"""The attribute `with_resources` sets on the wrapper it returns."""
