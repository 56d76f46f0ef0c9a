"""Resources and attached objects on a real Ray: memory as Ray's actor
options, placement groups, and `with_parameters` through the object store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from ray.util.placement_group import placement_group, remove_placement_group

import tunecore as tune
from tests.integration import resource_trainables as rt
from tests.integration.shipping import shipped_by_value
from tunecore import ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.model import TrialStatus

pytestmark = pytest.mark.usefixtures("ray_cluster", "shipped")

MIB = 2**20


@pytest.fixture(scope="module")
def shipped() -> Iterator[None]:
    with shipped_by_value(rt):
        yield


def fit(
    trainable: Any, tmp_path: Path, space: dict[str, Any] | None = None, **tune_config: Any
) -> ResultGrid:
    run = RunConfig(name="exp", storage_path=str(tmp_path), verbose=0)
    return Tuner(
        trainable, param_space=space, tune_config=TuneConfig(**tune_config), run_config=run
    ).fit()


def test_memory_is_given_to_the_actor_and_object_store_memory_is_counted(
    tmp_path: Path,
) -> None:
    asks = {"cpu": 1, "memory": 100 * MIB, "object_store_memory": 50 * MIB}
    results = fit(rt.report_assigned, tmp_path, resources_per_trial=asks)
    assert results[0].status is TrialStatus.TERMINATED, results[0].error
    metrics = results[0].metrics
    assert (metrics["CPU"], metrics["memory"]) == (1.0, 100 * MIB)
    too_much = {"cpu": 1, "object_store_memory": 2**60}
    results = fit(rt.report_assigned, tmp_path / "more", resources_per_trial=too_much)
    assert "Insufficient cluster resources" in str(results[0].error or "")


def test_a_memory_request_larger_than_the_cluster_never_fits(tmp_path: Path) -> None:
    results = fit(rt.report_assigned, tmp_path, resources_per_trial={"cpu": 1, "memory": 2**60})
    assert results[0].status is TrialStatus.ERROR
    assert "Insufficient cluster resources" in str(results[0].error or "")


def test_a_trial_runs_in_its_placement_group_and_reserves_the_other_bundles(
    tmp_path: Path,
) -> None:
    group = tune.PlacementGroupFactory([{"CPU": 1}, {"CPU": 1}])
    results = fit(tune.with_resources(rt.use_the_group, group), tmp_path)
    assert results[0].status is TrialStatus.TERMINATED, results[0].error
    metrics = results[0].metrics
    assert metrics["in_group"] is True
    assert (metrics["bundles"], metrics["actor_cpus"], metrics["task_cpus"]) == (2, 1.0, 1.0)
    left = [g for g in ray.util.placement_group_table().values() if g["state"] != "REMOVED"]
    assert left == []  # each group is removed with its actor


def test_a_trial_with_an_empty_head_bundle_runs_in_its_group_with_no_cpu(
    tmp_path: Path,
) -> None:
    group = tune.PlacementGroupFactory([{}, {"CPU": 1}])
    results = fit(tune.with_resources(rt.use_the_group, group), tmp_path)
    assert results[0].status is TrialStatus.TERMINATED, results[0].error
    metrics = results[0].metrics
    assert (metrics["in_group"], metrics["actor_cpus"], metrics["task_cpus"]) == (True, 0.0, 1.0)


def test_a_placement_group_larger_than_the_node_never_fits(tmp_path: Path) -> None:
    group = tune.PlacementGroupFactory([{"CPU": 1}, {"CPU": 2}])
    results = fit(tune.with_resources(rt.use_the_group, group), tmp_path)
    assert results[0].status is TrialStatus.ERROR
    assert "requested 3 CPUs" in str(results[0].error or "")


def test_with_parameters_puts_the_object_in_the_store_once(tmp_path: Path) -> None:
    rt.PICKLED[0] = 0
    trainable = tune.with_parameters(rt.measure, payload=rt.Payload(10_000))
    results = fit(trainable, tmp_path, {"x": tune.grid_search([1, 2, 3])}, reuse_actors=False)
    assert [r.metrics["size"] for r in results] == [10_000] * 3
    assert rt.PICKLED[0] == 1  # three workers, one copy into the object store


def test_with_parameters_reaches_a_class_s_setup_on_ray(tmp_path: Path) -> None:
    results = fit(tune.with_parameters(rt.Measure, payload=rt.Payload(123)), tmp_path)
    assert results[0].metrics["size"] == 123


def test_a_trial_waiting_for_a_cpu_held_outside_the_experiment_still_runs(
    tmp_path: Path,
) -> None:
    """By the cluster's total both trials fit, so both start; the second
    actor waits for a CPU the user's own Ray work holds. The first trial's
    actor, once it ended, must not be kept idle on the last free CPU
    forever (issue 11): an actor left unplaced this long ends the idle ones."""
    held = placement_group([{"CPU": 1}])
    ray.get(held.ready(), timeout=30)
    try:
        results = fit(
            rt.report_assigned,
            tmp_path,
            space={"x": tune.grid_search([0, 1])},
            resources_per_trial={"cpu": 1},
            max_concurrent_trials=2,
            time_budget_s=30,
        )
    finally:
        remove_placement_group(held)
    assert [r.metrics.get("CPU") for r in results] == [1.0, 1.0], [r.error for r in results]
