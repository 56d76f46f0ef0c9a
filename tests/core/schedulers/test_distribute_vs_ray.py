"""`DistributeResources` and `DistributeResourcesToTopJob` decide as Ray
Tune 2.60's own classes do: the same trials, result and cluster are handed
to Ray's implementation (the reference; skipped where `ray.tune` cannot be
imported) and to the pure one, for many generated cases, and the requests
must be equal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("ray.tune", reason="needs ray[tune] (pyarrow, fsspec)", exc_type=ImportError)

from ray.tune.execution.placement_groups import (
    PlacementGroupFactory as RayPGF,
)
from ray.tune.schedulers.resource_changing_scheduler import (
    DistributeResources as RayDistribute,
)
from ray.tune.schedulers.resource_changing_scheduler import (
    DistributeResourcesToTopJob as RayTopJob,
)

from tests.core.schedulers.test_distribute import trial_state
from tunecore.core.schedulers.distribute import (
    DistributeResources,
    DistributeResourcesToTopJob,
    Pool,
    as_resources,
    bundles_of,
    head_is_empty,
)
from tunecore.model import Mode, Resources

# -- Ray's side: what its allocation reads of the controller, trials and scheduler ------


@dataclass
class RayTrial:
    trial_id: str
    placement_group_factory: RayPGF
    last_result: dict[str, Any] = field(default_factory=dict)


@dataclass
class RayUpdater:
    cpus: float
    gpus: float

    def get_num_cpus(self) -> float:
        return self.cpus

    def get_num_gpus(self) -> float:
        return self.gpus


@dataclass
class RayController:
    _resource_updater: RayUpdater
    live: list[RayTrial]

    def get_live_trials(self) -> list[RayTrial]:
        return self.live


@dataclass
class RayScheduler:
    base_trial_resources: RayPGF


def ray_pgf(resources: Resources) -> RayPGF:
    head: list[dict[str, float]] = [{}] if head_is_empty(resources) else []
    return RayPGF(head + bundles_of(resources), strategy=resources.strategy)


def from_ray(pgf: RayPGF | None) -> Resources | None:
    if pgf is None:
        return None
    head: list[dict[str, float]] = [{}] if pgf.head_bundle_is_empty else []
    return as_resources(head + pgf.bundles, pgf.strategy)


# -- the cases ----------------------------------------------------------------------


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    add_bundles = draw(st.booleans())
    gpu_base = draw(st.sampled_from([0.0, 0.0, 1.0]))
    base_bundle = {"CPU": float(draw(st.integers(1, 2)))}
    if gpu_base:
        base_bundle["GPU"] = gpu_base
    base_bundles = [base_bundle] * (draw(st.integers(1, 2)) if add_bundles else 1)
    base = as_resources(base_bundles, "PACK")
    increase_by = draw(
        st.sampled_from([None, {"CPU": 1.0}, {"CPU": 2.0}, {"GPU": 1.0}, {"CPU": 1.0, "GPU": 1.0}])
    )
    times = draw(st.sampled_from([-1, 0, 1, 2, 3]))
    reserve = draw(st.sampled_from([None, {"CPU": 1.0}, {"GPU": 1.0}]))
    count = draw(st.integers(1, 5))
    trials = []
    for index in range(count):
        extra = draw(st.integers(0, 3))
        if add_bundles:
            bundles = base_bundles + [base_bundle] * extra
        else:
            grown = {
                name: amount + (extra if name == "CPU" else 0)
                for name, amount in base_bundle.items()
            }
            bundles = [grown]
        loss = draw(st.one_of(st.none(), st.floats(0, 10, allow_nan=False)))
        trials.append((f"t_{index:05d}", as_resources(bundles, "PACK"), loss))
    return {
        "add_bundles": add_bundles,
        "increase_by": increase_by,
        "times": times,
        "reserve": reserve,
        "base": base,
        "trials": trials,
        "reporting": draw(st.integers(0, count - 1)),
        "iteration": draw(st.integers(0, 3)),
        "cpus": float(draw(st.integers(1, 16))),
        "gpus": float(draw(st.integers(0, 4))),
        "mode": draw(st.sampled_from(["min", "max"])),
    }


def both(case: dict[str, Any], top_job: bool) -> tuple[Resources | None, Resources | None]:
    """The request Ray's class and tunecore's give for the case."""
    settings_ = {
        "add_bundles": case["add_bundles"],
        "increase_by": case["increase_by"],
        "increase_by_times": case["times"],
        "reserve_resources": case["reserve"],
    }
    if top_job:
        ray_allocation: RayDistribute = RayTopJob(**settings_, metric="loss", mode=case["mode"])
        ours: DistributeResources = DistributeResourcesToTopJob(
            **settings_, metric="loss", mode=Mode(case["mode"])
        )
    else:
        ray_allocation = RayDistribute(**settings_)
        ours = DistributeResources(**settings_)
    states = [trial_state(*trial) for trial in case["trials"]]
    ray_trials = [
        RayTrial(s.trial_id, ray_pgf(s.spec.resources), dict(s.last_result)) for s in states
    ]
    result = {"training_iteration": case["iteration"]}
    reporting = case["reporting"]
    controller = RayController(RayUpdater(case["cpus"], case["gpus"]), ray_trials)
    theirs = ray_allocation(
        controller,  # type: ignore[arg-type]
        ray_trials[reporting],
        result,
        RayScheduler(ray_pgf(case["base"])),  # type: ignore[arg-type]
    )
    pool = Pool(
        live=tuple(states),
        base=case["base"],
        total=Resources(cpu=case["cpus"], gpu=case["gpus"]),
    )
    return from_ray(theirs), ours.allocate(states[reporting], result, pool)


@settings(max_examples=400, deadline=None)
@given(case=cases())
def test_distribute_resources_decides_as_ray_does(case: dict[str, Any]) -> None:
    theirs, ours = both(case, top_job=False)
    assert ours == theirs


@settings(max_examples=400, deadline=None)
@given(case=cases())
def test_distribute_resources_to_top_job_decides_as_ray_does(case: dict[str, Any]) -> None:
    theirs, ours = both(case, top_job=True)
    assert ours == theirs
