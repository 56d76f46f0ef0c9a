"""tunecore's `ScalingConfig` against Ray's, over a grid of configs: every
property and method a user can call on Ray's has Ray's value on
tunecore's, and a config Ray refuses tunecore refuses.

Two Ray classes: `ray.air.config.ScalingConfig` (V1), whose counting of a
coordinator's CPU tunecore keeps, and Ray Train V2's
`ray.train.v2.api.config.ScalingConfig` (what `ray.train.ScalingConfig`
is in Ray 2.60), whose own fields and properties tunecore has too. V2 has
no coordinator (`trainer_resources` refused, nothing counted for it): its
totals are tunecore's less the coordinator's CPU (docs/differences.md).
Both need Ray's own dependencies (fsspec: V1's placement group factory
imports `ray.tune`, V2 `ray.train`): the tests run in the frameworks
session (noxfile) and are skipped without them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from ray.air.config import ScalingConfig as RayV1

from tunecore.shell.trainable.scaling_config import ScalingConfig

WORKERS: list[Any] = [0, 1, 3, (1, 4), (2, 2)]
PER_WORKER: list[Any] = [
    None,
    {"CPU": 2},
    {"CPU": 0.5, "GPU": 1, "memory": 1e9},
    {"GPU": 0, "CPU": 1},
    {"custom": 2, "CPU": 0},
    {"TPU": 4},
]
TRAINER: list[Any] = [None, {"CPU": 2, "hdd": 80}, {"CPU": 0}]
SELECTORS: list[Any] = [None, {"zone": "a"}, [{"zone": "a"}, {"zone": "b"}, {"zone": "c"}]]
V1_ONLY_FIELDS = ("trainer_resources",)
V2_FIELDS = ("label_selector", "use_tpu")


def grid() -> Iterator[dict[str, Any]]:
    for workers, gpu, per_worker, trainer, accelerator, tpu, selector, strategy in (
        itertools.product(
            WORKERS, (False, True), PER_WORKER, TRAINER, (None, "A100"), (False, True),
            SELECTORS, ("PACK", "SPREAD"),
        )
    ):  # fmt: skip
        yield {
            "num_workers": workers,
            "use_gpu": gpu,
            "resources_per_worker": per_worker,
            "trainer_resources": trainer,
            "accelerator_type": accelerator,
            "use_tpu": tpu,
            "label_selector": selector,
            "placement_strategy": strategy,
        }


def made(cls: type, arguments: Mapping[str, Any]) -> Any:
    """`cls(**arguments)`, or the exception it raised."""
    try:
        return cls(**arguments)
    except (ValueError, DeprecationWarning) as error:
        return error


def without(arguments: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in arguments.items() if k not in names}


def sets_any(arguments: Mapping[str, Any], names: tuple[str, ...]) -> bool:
    defaults = {"trainer_resources": None, "label_selector": None, "use_tpu": False}
    return any(arguments[name] != defaults[name] for name in names)


def bundles_of(pgf: Any) -> tuple[bool, list[dict[str, float]], str]:
    """A placement group factory as both libraries' agree on it: whether
    its head is empty, the bundles after an empty head, the strategy."""
    bundles = pgf.bundles
    if pgf.head_bundle_is_empty and not bundles[0]:  # tunecore's keeps the empty head
        bundles = bundles[1:]
    return pgf.head_bundle_is_empty, bundles, pgf.strategy


def plus(base: Mapping[str, float], extra: Mapping[str, float]) -> dict[str, float]:
    total = dict(base)
    for name, amount in extra.items():
        total[name] = total.get(name, 0.0) + amount
    return total


PER_WORKER_VALUES = (
    "num_cpus_per_worker",
    "num_gpus_per_worker",
    "additional_resources_per_worker",
    "_resources_per_worker_not_none",
)


def test_every_property_has_ray_v1s_value() -> None:
    needs_rays_dependencies()
    compared = 0
    for arguments in grid():
        if sets_any(arguments, V2_FIELDS) or isinstance(arguments["num_workers"], tuple):
            continue
        if "TPU" in (arguments["resources_per_worker"] or {}):
            continue  # V2's rule holds: TPU only with use_tpu (the V2 test)
        ray = made(RayV1, without(arguments, V2_FIELDS))
        ours = made(ScalingConfig, arguments)
        assert isinstance(ray, Exception) == isinstance(ours, Exception), (arguments, ray, ours)
        if isinstance(ray, Exception):
            continue
        for name in (*PER_WORKER_VALUES, "_trainer_resources_not_none", "total_resources"):
            assert getattr(ours, name) == getattr(ray, name), (name, arguments)
        if arguments["accelerator_type"] is None:  # reservable: see the next test
            pgf = ours.as_placement_group_factory()
            assert bundles_of(pgf) == bundles_of(ray.as_placement_group_factory()), arguments
            back = ScalingConfig.from_placement_group_factory(pgf)
            ray_back = RayV1.from_placement_group_factory(ray.as_placement_group_factory())
            for field in ("trainer_resources", "num_workers", "use_gpu", "placement_strategy"):
                assert getattr(back, field) == getattr(ray_back, field), (field, arguments)
            assert back.resources_per_worker == ray_back.resources_per_worker
        compared += 1
    assert compared > 100


def needs_rays_dependencies() -> None:
    """A skip where Ray's `ray.tune` and `ray.train` cannot be imported."""
    pytest.importorskip("fsspec", reason="ray.tune and ray.train import fsspec (frameworks)")


def ray_v2() -> type:
    """Ray Train V2's class, or a skip where `ray.train` cannot be imported."""
    needs_rays_dependencies()
    from ray.train.v2.api.config import ScalingConfig as RayV2  # noqa: PLC0415

    return RayV2


def test_every_property_has_ray_v2s_value_less_the_coordinator() -> None:
    RayV2 = ray_v2()
    compared = 0
    for arguments in grid():
        if sets_any(arguments, V1_ONLY_FIELDS):
            continue
        ray = made(RayV2, without(arguments, V1_ONLY_FIELDS))
        ours = made(ScalingConfig, arguments)
        assert isinstance(ray, Exception) == isinstance(ours, Exception), (arguments, ray, ours)
        if isinstance(ray, Exception):
            continue
        for name in (
            *PER_WORKER_VALUES,
            "min_workers",
            "max_workers",
            "elasticity_enabled",
            "num_tpus_per_worker",
        ):
            assert getattr(ours, name) == getattr(ray, name), (name, arguments)
        for workers in range(ray.max_workers + 1):
            assert ours._label_selector_per_worker(workers) == ray._label_selector_per_worker(
                workers
            )
        coordinator = ours._trainer_resources_not_none
        assert ours.total_resources == plus(coordinator, ray.total_resources), arguments
        compared += 1
    assert compared > 100


TPU_WORKERS: list[Any] = [0, 1, 2, 4, 6, 16, (1, 4), (4, 8), (0, 16)]
TPU_PER_WORKER: list[Any] = [None, {"TPU": 4}, {"TPU": 8, "CPU": 2}, {"TPU": 1}, {"TPU": 3},
                             {"TPU": 0.5}, {"TPU": -4}, {"CPU": 2}]  # fmt: skip
TOPOLOGIES: list[Any] = [None, "", "2x2", "2X4", "1x1", " 4x4", "8x8", "2x2x2", "4x4x4", "4xfour"]
TPU_TYPES: list[Any] = [None, "TPU-V4", "tpu-v6e", "v5litepod", "TPU-V7X", "TPU-V9", "A100"]


def tpu_grid() -> Iterator[dict[str, Any]]:
    for workers, per_worker, topology, accelerator in itertools.product(
        TPU_WORKERS, TPU_PER_WORKER, TOPOLOGIES, TPU_TYPES
    ):
        yield {
            "num_workers": workers,
            "use_tpu": True,
            "resources_per_worker": per_worker,
            "topology": topology,
            "accelerator_type": accelerator,
        }


@pytest.mark.parametrize("resource_per_chip", [None, "2", "two"])
def test_a_tpu_slice_sizes_the_workers_as_ray_train_v2s_does(
    resource_per_chip: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`topology` with `accelerator_type` name a TPU slice: Ray Train V2
    accepts the same worker counts and sizes on it, and fills in the same
    `resources_per_worker` (read by every property), under each
    `RAY_TPU_RESOURCE_PER_CHIP`."""
    RayV2 = ray_v2()
    if resource_per_chip is not None:
        monkeypatch.setenv("RAY_TPU_RESOURCE_PER_CHIP", resource_per_chip)
    compared = fitted = 0
    for arguments in tpu_grid():
        ray = made(RayV2, arguments)
        ours = made(ScalingConfig, arguments)
        assert isinstance(ray, Exception) == isinstance(ours, Exception), (arguments, ray, ours)
        if isinstance(ray, Exception):
            continue
        assert ours.resources_per_worker == ray.resources_per_worker, arguments
        for name in (*PER_WORKER_VALUES, "num_tpus_per_worker"):
            assert getattr(ours, name) == getattr(ray, name), (name, arguments)
        assert ours.total_resources == plus(ours._trainer_resources_not_none, ray.total_resources)
        compared += 1
        fitted += arguments["resources_per_worker"] is None and ray.max_workers > 1
    assert compared > 100
    assert fitted > 10 if resource_per_chip != "two" else fitted == 0


def test_a_tpu_slices_default_worker_is_one_host() -> None:
    """The values Ray Train V2 documents: a v6e 4x4 slice is four hosts of
    four chips (one CPU each unless given), a v6e 2x4 one host of eight."""
    multi_host = ScalingConfig(num_workers=4, use_tpu=True, topology="4x4", accelerator_type="v6e")
    assert multi_host.resources_per_worker == {"CPU": 1, "TPU": 4}
    assert multi_host.num_tpus_per_worker == 4
    one_host = ScalingConfig(use_tpu=True, topology="2x4", accelerator_type="TPU-V6E")
    assert one_host.resources_per_worker == {"CPU": 1, "TPU": 8}
    given = ScalingConfig(
        num_workers=8, use_tpu=True, topology="4x4", accelerator_type="v6e",
        resources_per_worker={"TPU": 2},
    )  # fmt: skip
    assert given.resources_per_worker == {"TPU": 2}


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"num_workers": 3, "topology": "4x4", "accelerator_type": "v6e"}, "num_workers=3"),
        ({"num_workers": (2, 4), "topology": "4x4", "accelerator_type": "v6e"}, r"\(2, 4\)"),
        ({"num_workers": 4, "topology": "4x4", "accelerator_type": "A100"}, "'A100'"),
        ({"num_workers": 4, "topology": "4xfour", "accelerator_type": "v4"}, "'4xfour'"),
        (
            {"num_workers": 4, "topology": "4x4", "accelerator_type": "v4",
             "resources_per_worker": {"TPU": 3}},
            "TPU=3",
        ),
    ],
)  # fmt: skip
def test_a_tpu_config_that_fits_no_slice_is_refused_by_both_naming_the_value(
    arguments: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValueError, match=r"must be a multiple|Could not parse TPU topology"):
        ray_v2()(use_tpu=True, **arguments)
    with pytest.raises(ValueError, match=named):
        ScalingConfig(use_tpu=True, **arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        {"use_tpu": True, "num_workers": 2},  # no topology, no accelerator_type
        {"use_tpu": True, "use_gpu": True},
        {"use_tpu": True, "resources_per_worker": {"CPU": 2}},  # asks no TPU
        {"resources_per_worker": {"TPU": 1}},  # without use_tpu
        {"num_workers": 3, "label_selector": [{"zone": "a"}]},  # not one per worker
        {"elastic_resize_monitor_interval_s": -1.0},
    ],
)
def test_a_config_ray_train_refuses_is_refused_naming_what_to_change(
    arguments: dict[str, Any],
) -> None:
    with pytest.raises(ValueError, match=r"TPU|tpu|label_selector|elastic_resize"):
        ray_v2()(**arguments)
    with pytest.raises(ValueError, match=r"TPU|tpu|label_selector|elastic_resize"):
        ScalingConfig(**arguments)
