"""Ray Tune's scripts import schedulers from their modules too
(`from ray.tune.schedulers.hb_bohb import HyperBandForBOHB` in Ray's
bohb_example.py): with the imports rewritten, the same names are there."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

import tunecore as tune
import tunecore.schedulers
from tunecore import schedulers

RAY_PATHS = [
    ("async_hyperband", "ASHAScheduler"),
    ("async_hyperband", "AsyncHyperBandScheduler"),
    ("hb_bohb", "HyperBandForBOHB"),
    ("hyperband", "HyperBandScheduler"),
    ("median_stopping_rule", "MedianStoppingRule"),
    ("pbt", "PopulationBasedTraining"),
    ("pbt", "PopulationBasedTrainingReplay"),
    ("pb2", "PB2"),
    ("trial_scheduler", "TrialScheduler"),
    ("trial_scheduler", "FIFOScheduler"),
]


@pytest.mark.parametrize(("module", "name"), RAY_PATHS)
def test_a_scheduler_imported_from_its_ray_module_is_the_packages(module: str, name: str) -> None:
    found = getattr(importlib.import_module(f"tunecore.schedulers.{module}"), name)
    assert found is getattr(tunecore.schedulers, name)


def test_create_scheduler_builds_pb2_by_rays_name_with_its_own_arguments() -> None:
    scheduler = tunecore.schedulers.create_scheduler(
        "PB2",
        metric="loss",
        mode="min",
        max_t=8,  # ASHA's: dropped, as Ray's create_scheduler drops it
        perturbation_interval=4,
        hyperparam_bounds={"lr": [1e-4, 1e-2]},
    )
    assert isinstance(scheduler, tunecore.schedulers.PB2)
    assert scheduler.hyperparam_bounds == {"lr": (1e-4, 1e-2)}
    assert scheduler.perturbation_interval == 4


def test_create_scheduler_builds_a_pbt_replay_from_a_policy_file(tmp_path: Path) -> None:
    line = ["1", "0", 3, 4, {"lr": 0.1}, {"lr": 0.2}]
    policy = tmp_path / "pbt_policy_x_00001.txt"
    policy.write_text(json.dumps(line) + "\n")
    scheduler = tunecore.schedulers.create_scheduler("pbt_replay", policy_file=str(policy))
    assert type(scheduler).__name__ == "PopulationBasedTrainingReplay"
    assert scheduler.config == {"lr": 0.1}
    assert [(change.step, change.config) for change in scheduler.changes] == [(4, {"lr": 0.2})]


def test_a_pbt_replay_of_a_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"nowhere\.txt"):
        tunecore.schedulers.PopulationBasedTrainingReplay(str(tmp_path / "nowhere.txt"))


def test_scheduler_import_is_rays_table() -> None:
    """Ray Tune 2.60's `SCHEDULER_IMPORT` (ray/tune/schedulers/__init__.py):
    its names, each to the class `tunecore.schedulers` exports under that
    name, PB2 through a function, as libraries built on Ray Tune read it
    (siatune's `build_scheduler` registers the values that are classes)."""
    table = tune.schedulers.SCHEDULER_IMPORT
    assert table is schedulers.SCHEDULER_IMPORT
    assert table == {
        "fifo": schedulers.FIFOScheduler,
        "async_hyperband": schedulers.AsyncHyperBandScheduler,
        "asynchyperband": schedulers.AsyncHyperBandScheduler,
        "median_stopping_rule": schedulers.MedianStoppingRule,
        "medianstopping": schedulers.MedianStoppingRule,
        "hyperband": schedulers.HyperBandScheduler,
        "hb_bohb": schedulers.HyperBandForBOHB,
        "pbt": schedulers.PopulationBasedTraining,
        "pbt_replay": schedulers.PopulationBasedTrainingReplay,
        "pb2": table["pb2"],
        "resource_changing": schedulers.ResourceChangingScheduler,
    }
    pb2_importer = table["pb2"]
    assert not inspect.isclass(pb2_importer)
    assert callable(pb2_importer)
    assert pb2_importer() is schedulers.PB2
