"""On Ray, values a trainable reports that JSON cannot hold come back to
user code as the objects reported while the driver lives, as in Ray Tune
(`shell.reported_objects`); everything recorded holds their JSON form, so
an experiment read from its directory shows that."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cloudpickle
import pytest

import tunecore
from tunecore import Callback, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.api.results import Result
from tunecore.stopper import Stopper

numpy = pytest.importorskip("numpy")

pytestmark = pytest.mark.usefixtures("ray_cluster")


@dataclass
class Settings:
    depth: int


def reports_objects(config: dict[str, object]) -> None:
    if config["kind"] == "plain":
        tunecore.report({"score": 1.0})
        return
    tunecore.report(
        {
            "score": numpy.float64(2.5),
            "best_opts": argparse.Namespace(lr=0.1),
            "weights": numpy.arange(3),
            "pair": (1, 2),
            "settings": Settings(4),
        }
    )


class SeesResults(Callback):
    def __init__(self) -> None:
        self.results: dict[str, object] = {}
        self.completed: dict[str, object] = {}

    def on_trial_result(self, iteration, trials, trial, result, **info):  # type: ignore[no-untyped-def]
        self.results[trial.config["kind"]] = result.get("best_opts")

    def on_trial_complete(self, iteration, trials, trial, **info):  # type: ignore[no-untyped-def]
        self.completed[trial.config["kind"]] = trial.last_result.get("best_opts")


class SeesObjects(Stopper):
    def __init__(self) -> None:
        self.seen: list[object] = []

    def __call__(self, trial_id: str, result: dict[str, object]) -> bool:
        self.seen.append(result.get("best_opts"))
        return False

    def stop_all(self) -> bool:
        return False


def test_on_ray_reported_objects_come_back_as_objects_and_are_recorded_as_json(
    tmp_path: Path,
) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers lack tests/
    callback, stopper = SeesResults(), SeesObjects()
    grid = Tuner(
        reports_objects,
        param_space={"kind": tunecore.grid_search(["objects", "plain"])},
        tune_config=TuneConfig(metric="score", mode="max"),
        run_config=RunConfig(
            name="objects",
            storage_path=str(tmp_path),
            callbacks=[callback],
            stop=stopper,
            verbose=0,
        ),
    ).fit()
    best = grid.get_best_result()
    assert best.config["kind"] == "objects"
    metrics: dict[str, Any] = best.metrics  # the objects reported, beside JSON values
    assert metrics["best_opts"].__dict__ == {"lr": 0.1}
    assert isinstance(metrics["weights"], numpy.ndarray)
    assert metrics["weights"].tolist() == [0, 1, 2]
    assert metrics["pair"] == (1, 2)
    assert type(metrics["score"]) is numpy.float64
    assert isinstance(metrics["settings"], Settings)
    assert metrics["training_iteration"] == 1
    trial = next(t for t in grid.trials if t.config["kind"] == "objects")
    assert trial.last_result["best_opts"] == argparse.Namespace(lr=0.1)
    assert callback.results["objects"] == argparse.Namespace(lr=0.1)
    assert callback.completed["objects"] == argparse.Namespace(lr=0.1)
    # The stopper hears the result, then, as the function returns, that
    # result again (Ray 2.60's `trial.last_result`, objects and all).
    assert stopper.seen.count(argparse.Namespace(lr=0.1)) == 2
    # A trial whose results are all JSON carries nothing more.
    plain = next(r for r in grid if r.config["kind"] == "plain")
    assert type(plain) is Result
    # The frame holds the JSON form, as Ray's, read from the result files.
    frame = grid.get_dataframe()
    assert sorted(frame["best_opts"].dropna()) == ["Namespace(lr=0.1)"]
    # What is recorded is the JSON form: the result files and the log.
    trial_dir = Path(best.path)
    recorded = json.loads((trial_dir / "result.json").read_text().splitlines()[0])
    assert recorded["best_opts"] == "Namespace(lr=0.1)"
    assert recorded["weights"] == [0, 1, 2]
    assert recorded["pair"] == [1, 2]
    assert recorded["score"] == 2.5
    assert recorded["settings"] == "Settings(depth=4)"  # msgspec would write {"depth": 4}
    progress = (trial_dir / "progress.csv").read_text()
    assert "Namespace(lr=0.1)" in progress
    assert "[0, 1, 2]" in progress
    read = ResultGrid.from_path(tmp_path / "objects").get_best_result()
    assert read.metrics["best_opts"] == "Namespace(lr=0.1)"
    assert read.metrics["weights"] == [0, 1, 2]
    assert read.metrics["settings"] == "Settings(depth=4)"
