"""On Ray, a function trainable's end reaches the built-in per-trial
stoppers as Ray Tune 2.60's controller passes it: the trial's last result
once more, marked `done`. Their counts are Ray's, read off Ray Tune 2.60's
stoppers after the same runs (`MaximumIterationStopper._iter`: 4 for a
trial of three results; `TrialPlateauStopper._trial_results`: `[3.0, 3.0]`
for losses 1, 2, 3 and `num_results=2`)."""

from __future__ import annotations

import sys
from pathlib import Path

import cloudpickle
import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.stopper import MaximumIterationStopper, TrialPlateauStopper

pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.slow]


def three_results(config: dict[str, object]) -> None:
    for step in range(1, 4):
        tunecore.report({"loss": float(step)})


def _fit(tmp_path: Path, name: str, stop: object) -> tunecore.ResultGrid:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers lack tests/
    return Tuner(
        three_results,
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=TuneConfig(max_concurrent_trials=1),
        run_config=RunConfig(name=name, storage_path=str(tmp_path), stop=stop, verbose=0),
    ).fit()


def test_on_ray_a_maximum_iteration_stopper_counts_a_functions_end(tmp_path: Path) -> None:
    grid = _fit(tmp_path, "iterations", MaximumIterationStopper(max_iter=4))
    assert [(r.metrics["training_iteration"], r.metrics["done"]) for r in grid] == [(3, True)] * 2
    state = tunecore.replay(tmp_path / "iterations").state
    stopper = state.stopper
    assert isinstance(stopper, MaximumIterationStopper)
    assert [stopper.seen.get(trial_id) for trial_id in sorted(state.trials)] == [4, 4]


def test_on_ray_a_trial_plateau_stopper_windows_a_functions_end(tmp_path: Path) -> None:
    stop = TrialPlateauStopper("loss", std=0.01, num_results=2, grace_period=1)
    grid = _fit(tmp_path, "plateau", stop)
    assert [r.metrics["training_iteration"] for r in grid] == [3, 3]
    state = tunecore.replay(tmp_path / "plateau").state
    stopper = state.stopper
    assert isinstance(stopper, TrialPlateauStopper)
    ids = sorted(state.trials)
    assert [stopper.recent.get(trial_id) for trial_id in ids] == [(3.0, 3.0)] * 2
    assert [stopper.seen.get(trial_id) for trial_id in ids] == [4, 4]
