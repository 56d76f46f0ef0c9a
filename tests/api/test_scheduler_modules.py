"""Ray Tune's scripts import schedulers from their modules too
(`from ray.tune.schedulers.hb_bohb import HyperBandForBOHB` in Ray's
bohb_example.py): with the imports rewritten, the same names are there."""

from __future__ import annotations

import importlib

import pytest

import tunecore.schedulers

RAY_PATHS = [
    ("async_hyperband", "ASHAScheduler"),
    ("async_hyperband", "AsyncHyperBandScheduler"),
    ("hb_bohb", "HyperBandForBOHB"),
    ("hyperband", "HyperBandScheduler"),
    ("median_stopping_rule", "MedianStoppingRule"),
    ("pbt", "PopulationBasedTraining"),
    ("trial_scheduler", "TrialScheduler"),
    ("trial_scheduler", "FIFOScheduler"),
]


@pytest.mark.parametrize(("module", "name"), RAY_PATHS)
def test_a_scheduler_imported_from_its_ray_module_is_the_packages(module: str, name: str) -> None:
    found = getattr(importlib.import_module(f"tunecore.schedulers.{module}"), name)
    assert found is getattr(tunecore.schedulers, name)
