"""Strict metric checking, seen from `Tuner.fit()` as a Ray Tune user meets it."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import Mode, TrialStatus
from tunecore.schedulers import ASHAScheduler, HyperBandScheduler, PopulationBasedTraining


def reports_loss(config: dict[str, object]) -> None:
    for step in range(4):
        tunecore.report({"loss": 1.0 / (step + 1)})


def fit(tmp_path: Path) -> tunecore.ResultGrid:
    tuner = Tuner(
        reports_loss,
        tune_config=TuneConfig(scheduler=ASHAScheduler(metric="acc", mode=Mode.MAX, max_t=4)),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    )
    return tuner.fit()


def test_a_metric_given_only_to_the_scheduler_is_checked(tmp_path: Path) -> None:
    (result,) = fit(tmp_path)
    assert result.status is TrialStatus.ERROR
    assert result.error is not None
    assert "without the metric 'acc' that ASHAScheduler expects" in str(result.error)
    # The result it failed on was not taken: no row of it anywhere, as in Ray.
    assert result.metrics == {}
    assert not (Path(result.path) / "result.json").exists()
    frame = result.metrics_dataframe
    assert frame is not None
    assert frame.empty


def test_the_ray_switch_turns_the_check_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    (result,) = fit(tmp_path)
    assert result.status is TrialStatus.TERMINATED
    assert result.metrics["training_iteration"] == 4


@pytest.mark.parametrize(
    ("scheduler", "owner"),
    [
        (HyperBandScheduler(mode="max", max_t=4), "HyperBandScheduler"),
        (
            PopulationBasedTraining(mode="max", hyperparam_mutations={"lr": [0.1, 0.2]}),
            "PopulationBasedTraining",
        ),
    ],
)
def test_a_scheduler_needing_the_anonymous_metric_fails_trials_without_it(
    tmp_path: Path, scheduler: object, owner: str
) -> None:
    """A mode and no metric: Ray's anonymous `_metric`, which Ray's HyperBand
    and PBT fail the run without; here each trial fails, naming it."""
    tuner = Tuner(
        reports_loss,
        param_space={"lr": tunecore.grid_search([0.1, 0.2])},
        tune_config=TuneConfig(scheduler=scheduler),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    )
    results = tuner.fit()
    assert len(results.errors) == 2
    for result in results:
        assert f"without the metric '_metric' that {owner} expects" in str(result.error)
