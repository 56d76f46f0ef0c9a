"""The Ray executor's placement patience on a real Ray: an actor slow to
start (a loaded machine, here a `setup` held at a gate) does not cost the
idle actors their reuse, and an actor that idle actors keep from being
placed is still rescued (`shell.executors.patience`). The floor is made
0.5 s so the starts the tests hold stay short."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from ray.util.placement_group import placement_group, remove_placement_group

from tests.integration import trainables
from tunecore.model import ExperimentEvent, JsonDict, Resources, ResultReported, TrialFailed
from tunecore.shell.executors import patience
from tunecore.shell.executors.ray import RayExecutor
from tunecore.shell.trainable import make_worker_trainable
from tunecore.shell.trainable.worker import TrialContext, WorkerTrainable

pytestmark = pytest.mark.usefixtures("ray_cluster")

ONE_CPU = Resources(cpu=1)
FLOOR_S = 0.5


def gated(config: JsonDict, context: TrialContext) -> WorkerTrainable:
    return make_worker_trainable(trainables.GatedStart, config, context)


@pytest.fixture
def executor(monkeypatch: pytest.MonkeyPatch) -> Iterator[RayExecutor]:
    monkeypatch.setattr(patience, "PLACEMENT_PATIENCE_S", FLOOR_S)
    executor = RayExecutor(gated)
    yield executor
    executor.shutdown()


def start(executor: RayExecutor, tmp_path: Path, trial_id: str, gate: Path) -> None:
    context = TrialContext(
        trial_id=trial_id,
        trial_name=trial_id,
        trial_dir=str(tmp_path / trial_id),
        experiment_dir=str(tmp_path),
    )
    executor.start(trial_id, ONE_CPU, {"gate": str(gate)}, context, None)


def run_for(executor: RayExecutor, seconds: float) -> list[ExperimentEvent]:
    """Turn the executor's loop (its placement patience included) this long."""
    events: list[ExperimentEvent] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        events.extend(executor.next_events(min(left, 0.1)))
    return events


def result_of(executor: RayExecutor, trial_id: str) -> JsonDict:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for event in executor.next_events(1.0):
            assert not isinstance(event, TrialFailed), event
            if isinstance(event, ResultReported) and event.trial_id == trial_id:
                return event.result
    raise AssertionError(f"no result from {trial_id}")


def test_an_idle_actor_is_reused_after_a_start_slower_than_the_floor(
    executor: RayExecutor, tmp_path: Path
) -> None:
    """The run's first start takes 2 s; the next new actor, 1 s, outlasts
    the floor while the first trial's actor waits idle. That idle actor
    must take the third trial: before, the slow start counted as starved
    and the idle actor was ended, so every trial got a new process."""
    open_gate = tmp_path / "open"
    start(executor, tmp_path, "t0", open_gate)
    run_for(executor, 2.0)  # the first start is slow: the run has seen one
    open_gate.touch()
    first = result_of(executor, "t0")

    held = tmp_path / "held"
    start(executor, tmp_path, "t1", held)  # a new actor: t0 holds the other CPU
    executor.release("t0")  # its actor waits idle
    run_for(executor, 2 * FLOOR_S)  # t1's actor is not up yet
    held.touch()
    result_of(executor, "t1")

    start(executor, tmp_path, "t2", open_gate)
    assert result_of(executor, "t2")["pid"] == first["pid"]


@pytest.mark.slow  # about 40 s on a loaded 2-core machine: the rescue waits for a new worker
def test_an_actor_an_idle_one_keeps_from_its_cpu_is_placed_after_slow_starts(
    executor: RayExecutor, tmp_path: Path
) -> None:
    """The user's own Ray work holds one CPU, the first trial's actor the
    other; the second trial's actor waits for that one, idle once its trial
    is released. The run's first start took 2 s, which lengthened the
    patience, but the idle actor is still ended and the second trial runs."""
    outside = placement_group([{"CPU": 1}])
    ray.get(outside.ready(), timeout=60)
    try:
        open_gate = tmp_path / "open"
        start(executor, tmp_path, "t0", open_gate)
        run_for(executor, 2.0)
        open_gate.touch()
        first = result_of(executor, "t0")
        start(executor, tmp_path, "t1", open_gate)
        executor.release("t0")
        assert result_of(executor, "t1")["pid"] != first["pid"]
    finally:
        remove_placement_group(outside)
