"""Trainables for the Ray resource tests. Ray workers do not have the tests
on their path, so the tests ship this module by value."""

from __future__ import annotations

from typing import Any

import ray

import tunecore as tune


def _assigned() -> dict[str, float]:
    # Ray leaves this one method unannotated; it returns name -> amount.
    context = ray.get_runtime_context()
    return dict(context.get_assigned_resources())  # type: ignore[no-untyped-call]


PICKLED = [0]
"""How often a `Payload` was pickled in this (the driver's) process."""


class Payload:
    """A large object that counts how often it is pickled."""

    def __init__(self, size: int) -> None:
        self.data = "x" * size

    def __reduce__(self) -> tuple[Any, ...]:
        PICKLED[0] += 1
        return (Payload, (len(self.data),))


def report_assigned(config: dict[str, Any]) -> None:
    """Report what Ray gave this trial's worker."""
    tune.report({name: float(amount) for name, amount in _assigned().items()})


@ray.remote(num_cpus=1)
def _one_cpu_task() -> float:
    return float(_assigned().get("CPU", 0.0))


def use_the_group(config: dict[str, Any]) -> None:
    """Report the placement group the trial runs in, and run a 1-CPU task
    in it: it can only start in the group's second bundle (the cluster
    has no other free CPU)."""
    group = ray.util.get_current_placement_group()
    task_cpus = ray.get(_one_cpu_task.remote(), timeout=60)
    tune.report(
        {
            "in_group": group is not None,
            "bundles": len(group.bundle_specs) if group is not None else 0,
            "actor_cpus": _assigned().get("CPU", 0.0),
            "task_cpus": task_cpus,
        }
    )


def measure(config: dict[str, Any], payload: Payload) -> None:
    tune.report({"size": len(payload.data)})


class Measure(tune.Trainable):
    def setup(self, config: dict[str, Any], payload: Payload | None = None) -> None:
        self.size = len(payload.data) if payload is not None else 0

    def step(self) -> dict[str, Any]:
        return {"size": self.size, "done": True}
