"""Schedulers written as Ray's docs write their own, on a real Ray (the
session's, 2 CPUs): one stops the trials below a threshold, one makes
trials take turns by pausing them and picking the least trained. The log
holds their every answer: a replay in a fresh interpreter, without their
code, ends where the run did."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tests.integration import ray_style_schedulers as rs
from tests.integration.shipping import shipped_by_value
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.error import TuneError
from tunecore.model import TrialStatus

pytestmark = pytest.mark.usefixtures("ray_cluster", "shipped")


@pytest.fixture(scope="module")
def shipped() -> Iterator[None]:
    with shipped_by_value(rs):
        yield


def fit(path: Path, scheduler: object, cpus: int) -> dict[Any, tune.Result]:
    results = Tuner(
        tune.with_resources(rs.climb, {"cpu": cpus}),
        param_space={"steps": 4, "x": tune.grid_search([1, 2, 3])},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=scheduler),
        run_config=RunConfig(name="exp", storage_path=str(path), verbose=0),
    ).fit()
    return {result.config["x"]: result for result in results}


def replayed_iterations(path: Path) -> list[int]:
    """Each trial's last iteration, as a fresh interpreter replays the log."""
    code = (
        "import sys, tunecore; "
        f"state = tunecore.replay({str(path)!r}, quiet=True).state; "
        "assert not any('ray_style_schedulers' in m for m in sys.modules); "
        "print(sorted(t.last_result['training_iteration'] for t in state.trials.values()))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return [int(n) for n in done.stdout.strip().strip("[]").split(",")]


def test_a_threshold_scheduler_stops_the_trials_below_it(tmp_path: Path) -> None:
    scheduler = rs.StopBelow(threshold=5)
    results = fit(tmp_path, scheduler, cpus=1)
    iterations = {x: r.metrics["training_iteration"] for x, r in results.items()}
    assert iterations == {1: 2, 2: 2, 3: 4}
    assert all(r.status is TrialStatus.TERMINATED and r.error is None for r in results.values())
    completed = sorted(entry[2] for entry in scheduler.heard if entry[0] == "complete")
    assert completed == [2, 2, 4]
    assert replayed_iterations(tmp_path / "exp") == [2, 2, 4]


def test_trials_take_turns_by_its_pauses_and_picks(tmp_path: Path) -> None:
    scheduler = rs.TakeTurns(every=2)
    results = fit(tmp_path, scheduler, cpus=2)  # one trial at a time
    assert {x: r.metrics["training_iteration"] for x, r in results.items()} == {1: 4, 2: 4, 3: 4}
    frame = results[1].metrics_dataframe
    assert frame is not None
    assert list(frame["training_iteration"]) == [1, 2, 3, 4]
    x_of = {r.metrics["trial_id"]: x for x, r in results.items()}
    assert [(x_of[t], i) for t, i in scheduler.turns] == rs.TURNS_OF_THREE
    assert replayed_iterations(tmp_path / "exp") == [4, 4, 4]


def test_a_scheduler_that_raises_leaves_the_trials_it_cut_short_to_a_restore(
    tmp_path: Path,
) -> None:
    """As on Ray Tune: `fit()` raises its error, and `Tuner.restore` runs
    the trials it interrupted again, the one it cut short from its
    checkpoint, the ones that never ran from the start."""
    with pytest.raises(TuneError, match="broke at iteration 3"):
        fit(tmp_path, rs.BreaksAt(iteration=3), cpus=2)  # one trial at a time
    grid = tune.ResultGrid.from_path(tmp_path / "exp")
    assert {r.config["x"]: r.metrics.get("training_iteration") for r in grid} == {
        1: 3,
        2: None,
        3: None,
    }
    trainable = tune.with_resources(rs.climb, {"cpu": 2})
    fixed = rs.BreaksAt(iteration=None)
    restored = Tuner.restore(str(tmp_path / "exp"), trainable, scheduler=fixed).fit()
    results = {r.config["x"]: r for r in restored}
    assert {x: r.metrics["training_iteration"] for x, r in results.items()} == {1: 4, 2: 4, 3: 4}
    assert all(r.error is None for r in results.values())
    # From the checkpoint of the result before the one it raised on, whose
    # save the failure cut short, as Ray Tune's restore picks it.
    assert results[1].metrics["start"] == 2
    assert (results[2].metrics["start"], results[3].metrics["start"]) == (0, 0)
