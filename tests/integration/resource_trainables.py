"""Trainables for the Ray resource tests. Ray workers do not have the tests
on their path, so the tests ship this module by value."""

from __future__ import annotations

import os
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


def grow(config: dict[str, Any]) -> None:
    """Checkpoint every step (a resized trial restarts from its checkpoint)
    and report the CPUs `get_trial_resources()` shows and Ray gave."""
    import tempfile  # noqa: PLC0415 - shipped by value: kept with the function
    from pathlib import Path  # noqa: PLC0415

    start = 0
    if (checkpoint := tune.get_checkpoint()) is not None:
        start = int(Path(checkpoint.path, "step").read_text())
    for step in range(start, config["steps"]):
        saved = tempfile.mkdtemp()
        Path(saved, "step").write_text(str(step + 1))
        shown = tune.get_context().get_trial_resources().head_cpus
        metrics = {"shown": shown, "given": _assigned().get("CPU", 0.0), "pid": os.getpid()}
        tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(saved))


def two_cpus(tune_controller: Any, trial: Any, result: dict[str, Any], scheduler: Any) -> Any:
    """A user allocation function: the whole cluster for the trial."""
    total = tune_controller._resource_updater.get_num_cpus()
    return tune.PlacementGroupFactory([{"CPU": total}])
