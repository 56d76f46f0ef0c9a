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


def reports_without(config: dict[str, object]) -> None:
    """Reports `loss` and `epoch`, less the key `config["drop"]` names."""
    for step in range(1, 4):
        result: dict[str, object] = {"loss": 1.0 / step, "epoch": step}
        result.pop(str(config["drop"]), None)
        tunecore.report(result)


def pbt_fit(tmp_path: Path, drop: str, require_attrs: bool = True) -> tunecore.ResultGrid:
    scheduler = PopulationBasedTraining(
        time_attr="epoch",
        perturbation_interval=100,
        hyperparam_mutations={"lr": [0.1, 0.2]},
        require_attrs=require_attrs,
    )
    tuner = Tuner(
        reports_without,
        param_space={"lr": 0.1, "drop": tunecore.grid_search(["", drop])},
        tune_config=TuneConfig(metric="loss", mode="min", scheduler=scheduler),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    )
    return tuner.fit()


def test_pbt_fails_a_trial_whose_result_lacks_its_time_attr(tmp_path: Path) -> None:
    """Ray's PBT raises `RuntimeError` (and Ray's run fails) on it: the
    trial fails with that message, the other runs on."""
    full, dropped = pbt_fit(tmp_path, "epoch")
    assert full.status is TrialStatus.TERMINATED
    assert full.metrics["training_iteration"] == 3
    assert dropped.status is TrialStatus.ERROR
    message = str(dropped.error)
    assert "Cannot find time_attr epoch in trial result {'loss': 1.0, " in message
    assert message.endswith(
        "Make sure that this attribute is returned in the results of your Trainable.If this "
        "error is expected, you can change this to a warning message by setting "
        "PBT(require_attrs=False)"
    )


def test_pbt_fails_a_result_without_its_metric_with_strict_checking_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    _, dropped = pbt_fit(tmp_path, "loss")
    assert "Cannot find metric loss in trial result {'epoch': 1, " in str(dropped.error)


def test_pbt_without_require_attrs_lets_such_results_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    for drop in ("epoch", "loss"):
        results = pbt_fit(tmp_path / drop, drop, require_attrs=False)
        assert not results.errors
        assert [r.metrics["training_iteration"] for r in results] == [3, 3]
