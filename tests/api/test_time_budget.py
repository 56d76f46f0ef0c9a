"""`time_budget_s` as Ray takes it: seconds, or a `datetime.timedelta`
(TuneConfig, tune.run, Experiment)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

import tunecore as tune


def test_tune_config_takes_a_timedelta_as_seconds() -> None:
    config = tune.TuneConfig(time_budget_s=datetime.timedelta(minutes=2, seconds=3))  # type: ignore[arg-type]
    assert config.time_budget_s == 123.0
    assert tune.TuneConfig(time_budget_s=5).time_budget_s == 5.0


def test_a_timedelta_budget_that_is_not_positive_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="time_budget_s"):
        tune.TuneConfig(time_budget_s=datetime.timedelta(seconds=-1))  # type: ignore[arg-type]


def test_an_experiment_keeps_a_timedelta_budget_in_seconds() -> None:
    hour = datetime.timedelta(hours=1)
    experiment = tune.Experiment("e", lambda config: None, time_budget_s=hour)
    assert experiment.public_spec["time_budget_s"] == 3600.0


def trainable(config: dict[str, object]) -> None:
    tune.report({"score": 1})


def test_tune_run_takes_a_timedelta_budget(tmp_path: Path) -> None:
    analysis = tune.run(
        trainable,
        time_budget_s=datetime.timedelta(minutes=10),
        storage_path=str(tmp_path),
        verbose=0,
    )
    assert [trial.status for trial in analysis.trials] == ["TERMINATED"]
