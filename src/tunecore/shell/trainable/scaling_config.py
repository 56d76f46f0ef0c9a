"""Ray Train's `ScalingConfig`: a scaling request, as Ray Tune reads it
for a trial's resources and as Ray Train's trainers take it.

Its properties and methods are Ray's, with Ray's values
(tests/api/test_scaling_config_vs_ray_train.py compares them over a grid of
configs): those of `ray.air.config.ScalingConfig` (`total_resources`,
`num_cpus_per_worker`, `as_placement_group_factory`,
`from_placement_group_factory`, ...), which count a coordinator's CPU as
tunecore does, and those Ray Train V2's `ray.train.ScalingConfig` adds
(`min_workers`, `max_workers`, `elasticity_enabled`,
`num_tpus_per_worker`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tunecore.model.errors import InvalidFieldError, TrainOnlyFieldError
from tunecore.model.numbers import is_int
from tunecore.shell.trainable.placement_group import PlacementGroupFactory
from tunecore.shell.trainable.tpu_slice import TpuSlice

ACCELERATOR_PREFIX = "accelerator_type:"
"""Ray's resource a worker asks 0.001 of for `accelerator_type=X`
(`ray._private.ray_constants.RESOURCE_CONSTRAINT_PREFIX`)."""


@dataclass(frozen=True)
class ScalingConfig:
    """Ray Train's scaling request, as Ray Tune reads it in `with_resources`:
    a coordinator (`trainer_resources`, 1 CPU unless given) colocated with
    the first of `num_workers` workers (`resources_per_worker`, 1 CPU, or 1
    GPU with `use_gpu`, 1 TPU with `use_tpu`), reserved as one placement
    group whose first bundle is empty: the trial itself runs in it and
    takes nothing (`as_placement_group_factory`). tunecore starts no
    workers for it; the trial's own code may use the reserved bundles.

    It is also what a script's rewritten `ray.train.ScalingConfig(...)`
    makes for Ray Train's trainers (converted, tunecore.api.ray_train_configs),
    so it takes Ray Train V2's fields too: elastic `num_workers=(min, max)`,
    `label_selector`, `use_tpu`, `topology`,
    `elastic_resize_monitor_interval_s`, and `accelerator_type`. Those only
    Ray Train reads; reserving a trial's resources with one set is a
    `TrainOnlyFieldError`. The properties read them all, as Ray's do:
    `total_resources` counts `max_workers` workers, as V2's does.

    With `use_tpu`, `topology` and `accelerator_type` name a TPU slice, and
    the config is fitted to it as V2's is when made (`TpuSlice`): unless
    given, `resources_per_worker` becomes one CPU and one host's TPUs, and
    `num_workers` (each of an elastic pair) must be a multiple of the
    workers one slice holds. How many slices to reserve and their labels
    Ray Train works out when it starts the workers."""

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
        if self.elastic_resize_monitor_interval_s < 0:
            raise InvalidFieldError(
                "ScalingConfig.elastic_resize_monitor_interval_s",
                self.elastic_resize_monitor_interval_s,
                "seconds >= 0",
            )
        if isinstance(self.label_selector, list) and len(self.label_selector) != self.max_workers:
            raise InvalidFieldError(
                "ScalingConfig.label_selector",
                self.label_selector,
                f"one selector for all workers, or a list of max_workers={self.max_workers}",
            )
        self._check_accelerators()
        if self.use_tpu and self.topology and self.accelerator_type:
            self._fit_tpu_slice(TpuSlice.of(self.topology, self.accelerator_type))

    def _check_accelerators(self) -> None:
        """Ray's checks of `use_gpu` and `use_tpu` against what each worker
        asks for, each a `ValueError` saying what to change."""
        if self.use_gpu and self.use_tpu:
            raise ValueError("ScalingConfig: use_gpu=True and use_tpu=True cannot both be set")
        for flag, name, on in (("use_gpu", "GPU", self.use_gpu), ("use_tpu", "TPU", self.use_tpu)):
            if not on and self._worker_bundle.get(name, 0.0) > 0:
                raise ValueError(
                    f"ScalingConfig: {flag} is False but resources_per_worker asks for {name} "
                    f"({self._worker_bundle[name]}); set {flag}=True or remove {name} from "
                    "resources_per_worker"
                )
        if not self.use_tpu:
            return
        if self.num_tpus_per_worker == 0:
            raise ValueError(
                f"ScalingConfig: use_tpu is True but resources_per_worker="
                f"{self.resources_per_worker!r} asks for no TPU; ask for a positive number "
                "of TPU or set use_tpu=False"
            )
        if self.max_workers > 1:
            for field in ("topology", "accelerator_type"):
                if not getattr(self, field):
                    raise ValueError(
                        f"ScalingConfig: use_tpu=True with num_workers={self.num_workers} "
                        f"needs {field}"
                    )
            if self.label_selector:
                raise ValueError(
                    "ScalingConfig: label_selector cannot be set with use_tpu=True and more "
                    "than one worker: Ray Train reserves a TPU slice by its own label"
                )

    def _fit_tpu_slice(self, tpu_slice: TpuSlice) -> None:
        """Ray Train V2's fitting of the workers to `tpu_slice` (class doc):
        the default `resources_per_worker` set, worker counts checked."""
        if self.resources_per_worker is None:
            object.__setattr__(self, "resources_per_worker", tpu_slice.default_worker)
        per_slice = tpu_slice.workers(self.num_tpus_per_worker)
        if per_slice > 0 and (self.min_workers % per_slice or self.max_workers % per_slice):
            raise ValueError(
                f"ScalingConfig: num_workers={self.num_workers!r} must be a multiple of "
                f"{per_slice} (both bounds, if elastic): a slice of topology={self.topology!r} "
                f"holds {per_slice} workers of {self.num_tpus_per_worker} TPU"
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

    # -- Ray Train V2's ---------------------------------------------------------------

    @property
    def elasticity_enabled(self) -> bool:
        """Whether `num_workers` is an elastic `(min, max)`."""
        return isinstance(self.num_workers, tuple)

    @property
    def min_workers(self) -> int:
        return self.num_workers[0] if isinstance(self.num_workers, tuple) else self.num_workers

    @property
    def max_workers(self) -> int:
        return self.num_workers[1] if isinstance(self.num_workers, tuple) else self.num_workers

    @property
    def num_tpus_per_worker(self) -> float:
        return self._worker_bundle.get("TPU", 0.0)

    def _label_selector_per_worker(self, num_workers: int) -> list[dict[str, str]] | None:
        """`label_selector` for each of `num_workers` workers (Ray's): a
        list's first ones, a single selector repeated, or None."""
        if isinstance(self.label_selector, list):
            return [dict(selector) for selector in self.label_selector[:num_workers]]
        if isinstance(self.label_selector, dict):
            return [dict(self.label_selector) for _ in range(num_workers)]
        return None

    # -- ray.air.config.ScalingConfig's --------------------------------------------------

    @property
    def _resources_per_worker_not_none(self) -> dict[str, float]:
        """What each worker asks for (Ray's name, which user code reads)."""
        return dict(self._worker_bundle)

    @property
    def _trainer_resources_not_none(self) -> dict[str, float]:
        """What the coordinator asks for beside the first worker."""
        return dict(self._trainer_bundle)

    @property
    def total_resources(self) -> dict[str, float]:
        """Everything the request reserves, by resource name (with
        `max_workers` workers, an upper bound when elastic)."""
        return _added(self._trainer_bundle, self._worker_bundle, self.max_workers)

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
        worker together, then one bundle per further worker (Ray's
        layout). A field only Ray Train reads is a `TrainOnlyFieldError`:
        this is what reserves a trial's resources."""
        train_only = self.train_only_fields()
        if train_only:
            raise TrainOnlyFieldError("ScalingConfig", train_only)
        worker = self._worker_bundle
        bundles = [{}, _added(self._trainer_bundle, worker, 1)]
        bundles += [worker] * max(self.max_workers - 1, 0)
        return PlacementGroupFactory(bundles, strategy=self.placement_strategy)

    @classmethod
    def from_placement_group_factory(cls, pgf: PlacementGroupFactory) -> ScalingConfig:
        """The config `as_placement_group_factory` made `pgf` from, as Ray
        rebuilds it (for a trial whose `ResourceChangingScheduler` changed
        its bundles): one worker per bundle after the empty head, each
        asking what the last asks, the coordinator what the first asks
        beyond it (nothing with one worker)."""
        bundles = pgf.bundles[1:] if pgf.head_bundle_is_empty else pgf.bundles
        worker = bundles[-1]
        trainer = {
            name: amount - worker.get(name, 0.0)
            for name, amount in bundles[0].items()
            if amount - worker.get(name, 0.0) > 0
        }
        return cls(
            trainer_resources=trainer,
            num_workers=len(bundles),
            use_gpu=bool(worker.get("GPU", False)),
            resources_per_worker=worker,
            placement_strategy=pgf.strategy,
        )

    @property
    def _worker_bundle(self) -> dict[str, float]:
        if self.resources_per_worker is not None:
            bundle = _asked(self.resources_per_worker)
        elif self.use_tpu:
            return {"TPU": 1.0}  # as Ray Train V2, whatever else is set
        else:
            bundle = {"GPU": 1.0} if self.use_gpu else {"CPU": 1.0}
        if self.use_gpu:
            bundle.setdefault("GPU", 1.0)
        if self.accelerator_type:
            bundle.setdefault(ACCELERATOR_PREFIX + self.accelerator_type, 0.001)
        return bundle

    @property
    def _trainer_bundle(self) -> dict[str, float]:
        if self.trainer_resources is None:
            return {"CPU": 1.0}
        return _asked(self.trainer_resources)


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
