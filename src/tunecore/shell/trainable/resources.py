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
from tunecore.model.errors import InvalidFieldError, TrainOnlyFieldError
from tunecore.model.numbers import is_int
from tunecore.shell.trainable.classapi import Trainable
from tunecore.shell.trainable.placement_group import PlacementGroupFactory, parse_bundle


@dataclass(frozen=True)
class ScalingConfig:
    """Ray Train's scaling request, as Ray Tune reads it in `with_resources`:
    a coordinator (`trainer_resources`, 1 CPU unless given) colocated with
    the first of `num_workers` workers (`resources_per_worker`, 1 CPU, or 1
    GPU with `use_gpu`), reserved as one placement group whose first bundle
    is empty: the trial itself runs in it and takes nothing
    (`as_placement_group_factory`). tunecore starts no workers for it; the
    trial's own code may use the reserved bundles.

    It is also what a script's rewritten `ray.train.ScalingConfig(...)`
    makes for Ray Train's trainers (converted, tunecore.api.ray_train_configs),
    so it takes Ray Train V2's fields too: elastic `num_workers=(min, max)`,
    `label_selector`, `use_tpu`, `topology`,
    `elastic_resize_monitor_interval_s`, and `accelerator_type`. Those only
    Ray Train reads; reserving a trial's resources with one set is a
    `TrainOnlyFieldError`."""

    trainer_resources: dict[str, float] | None = None
    num_workers: int | tuple[int, int] = 1
    use_gpu: bool = False
    resources_per_worker: dict[str, float] | None = None
    placement_strategy: str = "PACK"
    accelerator_type: str | None = None
    label_selector: dict[str, str] | list[dict[str, str]] | None = None
    use_tpu: bool = False
    topology: str | None = None
    elastic_resize_monitor_interval_s: float = 60.0

    def __post_init__(self) -> None:
        workers: object = self.num_workers  # the caller may be untyped
        counts = list(workers) if isinstance(workers, tuple) and len(workers) == 2 else [workers]
        valid = [n for n in counts if is_int(n) and n >= 0]
        if len(valid) != len(counts) or valid != sorted(valid):
            raise InvalidFieldError(
                "ScalingConfig.num_workers",
                self.num_workers,
                "an int >= 0, or Ray Train's elastic (min_workers, max_workers), 0 <= min <= max",
            )
        gpus = self.num_gpus_per_worker  # with use_gpu, at least 1 unless given
        if not self.use_gpu and gpus > 0:
            raise ValueError(
                "ScalingConfig: use_gpu is False but resources_per_worker asks for GPU "
                f"({gpus}); set use_gpu=True or remove GPU from resources_per_worker"
            )

    def train_only_fields(self) -> dict[str, object]:
        """The fields set here that only Ray Train reads (class doc)."""
        fields: dict[str, object] = {}
        if isinstance(self.num_workers, tuple):
            fields["num_workers"] = self.num_workers
        for name, default in _TRAIN_ONLY_DEFAULTS.items():
            if getattr(self, name) != default:
                fields[name] = getattr(self, name)
        return fields

    @property
    def _workers(self) -> int:
        """The number of workers to reserve for, for a trial: refused when
        a field only Ray Train reads is set."""
        train_only = self.train_only_fields()
        if train_only:
            raise TrainOnlyFieldError("ScalingConfig", train_only)
        assert isinstance(self.num_workers, int)  # a tuple is Train-only
        return self.num_workers

    @property
    def _worker_bundle(self) -> dict[str, float]:
        if self.resources_per_worker is None:
            bundle = {"GPU": 1.0} if self.use_gpu else {"CPU": 1.0}
        else:
            bundle = _asked(self.resources_per_worker)
        if self.use_gpu:
            bundle.setdefault("GPU", 1.0)
        return bundle

    @property
    def _trainer_bundle(self) -> dict[str, float]:
        if self.trainer_resources is None:
            return {"CPU": 1.0}
        return _asked(self.trainer_resources)

    @property
    def total_resources(self) -> dict[str, float]:
        """Everything the request reserves, by resource name."""
        return _added(self._trainer_bundle, self._worker_bundle, self._workers)

    @property
    def num_cpus_per_worker(self) -> float:
        return self._worker_bundle.get("CPU", 0.0)

    @property
    def num_gpus_per_worker(self) -> float:
        return self._worker_bundle.get("GPU", 0.0)

    @property
    def additional_resources_per_worker(self) -> dict[str, float]:
        """Per worker, the resources other than CPU and GPU."""
        return {k: v for k, v in self._worker_bundle.items() if k not in ("CPU", "GPU")}

    def as_placement_group_factory(self) -> PlacementGroupFactory:
        """An empty bundle for the trial, the coordinator and the first
        worker together, then one bundle per further worker (Ray's layout)."""
        workers = self._workers
        worker = self._worker_bundle
        bundles = [{}, _added(self._trainer_bundle, worker, 1)]
        bundles += [worker] * max(workers - 1, 0)
        return PlacementGroupFactory(bundles, strategy=self.placement_strategy)


_TRAIN_ONLY_DEFAULTS: dict[str, object] = {
    "accelerator_type": None,
    "label_selector": None,
    "use_tpu": False,
    "topology": None,
    "elastic_resize_monitor_interval_s": 60.0,
}
"""ScalingConfig's fields only Ray Train reads (besides an elastic
`num_workers`), with the default that leaves each unset."""


def _asked(bundle: Mapping[str, float]) -> dict[str, float]:
    """A user's bundle as floats, without the resources asked at 0."""
    return {name: float(amount) for name, amount in bundle.items() if amount != 0}


def _added(base: Mapping[str, float], extra: Mapping[str, float], times: int) -> dict[str, float]:
    """`base` with `times` copies of `extra` added, resource by resource."""
    total = dict(base)
    for name, amount in extra.items():
        total[name] = total.get(name, 0.0) + amount * times
    return total


FixedRequest: TypeAlias = "Mapping[str, object] | PlacementGroupFactory | ScalingConfig"


def is_fixed_request(request: object) -> TypeGuard[FixedRequest]:
    """Whether `request` is a request itself (a dict, a
    `PlacementGroupFactory` or a `ScalingConfig`) rather than a function of
    the config returning one."""
    return isinstance(request, Mapping | PlacementGroupFactory | ScalingConfig)


ResourcesOf: TypeAlias = Callable[[JsonDict], Resources]


def as_resources(request: object, field: str) -> Resources:
    """The core's `Resources` for a dict, a `PlacementGroupFactory` or a
    `ScalingConfig`; a clear error naming `field` for anything else."""
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
        own = request.__func__  # type: ignore[attr-defined]
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
