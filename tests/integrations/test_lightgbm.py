"""`tunecore.integration.lightgbm`: Ray Tune's LightGBM callbacks inside
trials (in-process executor: the behaviour under test is the callback's).
The arguments' checks are the XGBoost callback's (`_boosting`), tested in
test_xgboost."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tunecore as tune

lgb = pytest.importorskip("lightgbm")
from tunecore.integration.lightgbm import (  # noqa: E402 - only with lightgbm installed
    TuneReportCallback,
    TuneReportCheckpointCallback,
)

pytestmark = pytest.mark.slow

ROUNDS = 5
PARAMS = {
    "objective": "binary",
    "metric": ["binary_logloss", "binary_error"],
    "verbose": -1,
    "seed": 3,
    "num_threads": 1,
}


def data() -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = (x[:, 0] + x[:, 1] > 0).astype(int)
    return x, y


def fit(train: Any, tmp_path: Path, metric: str) -> tune.Result:
    tuner = tune.Tuner(
        train,
        tune_config=tune.TuneConfig(metric=metric, mode="min"),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="exp", executor="in_process", verbose=0
        ),
    )
    result = tuner.fit()[0]
    assert result.error is None
    return result


def rows(result: tune.Result) -> list[dict[str, Any]]:
    lines = Path(result.path or "", "result.json").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_each_round_is_reported_and_the_last_carries_the_booster(tmp_path: Path) -> None:
    def train(config: dict[str, Any]) -> None:
        x, y = data()
        lgb.train(
            PARAMS,
            lgb.Dataset(x, label=y),
            num_boost_round=ROUNDS,
            valid_sets=[lgb.Dataset(x, label=y)],
            valid_names=["eval"],
            callbacks=[TuneReportCheckpointCallback(frequency=2)],
        )

    result = fit(train, tmp_path, "eval-binary_logloss")
    logged = rows(result)
    # No extra result: the last round itself carries the final booster.
    assert [row["training_iteration"] for row in logged] == [1, 2, 3, 4, 5]
    assert [row["training_iteration"] for row in logged if row.get("should_checkpoint")] == [
        2,
        4,
        5,
    ]
    assert {"eval-binary_logloss", "eval-binary_error"} <= set(logged[0])
    assert not any(key.endswith(("-mean", "-stdv")) for key in logged[0])
    assert result.checkpoint is not None
    booster = TuneReportCheckpointCallback.get_model(result.checkpoint)
    x, y = data()
    alone = lgb.train(PARAMS, lgb.Dataset(x, label=y), num_boost_round=ROUNDS)
    assert booster.current_iteration() == ROUNDS
    assert np.allclose(booster.predict(x), alone.predict(x))


def test_renamed_metrics_and_a_filename(tmp_path: Path) -> None:
    def train(config: dict[str, Any]) -> None:
        x, y = data()
        lgb.train(
            PARAMS,
            lgb.Dataset(x, label=y),
            num_boost_round=3,
            valid_sets=[lgb.Dataset(x, label=y)],
            valid_names=["eval"],
            callbacks=[
                TuneReportCheckpointCallback(
                    metrics={"loss": "eval-binary_logloss"}, filename="booster.txt"
                )
            ],
        )

    result = fit(train, tmp_path, "loss")
    logged = rows(result)
    assert "loss" in logged[0]
    assert "eval-binary_error" not in logged[0]
    assert [row["training_iteration"] for row in logged if row.get("should_checkpoint")] == [3]
    assert result.checkpoint is not None
    booster = TuneReportCheckpointCallback.get_model(result.checkpoint, filename="booster.txt")
    assert booster.current_iteration() == 3


def test_report_callback_under_cv_reports_means_and_deviations(tmp_path: Path) -> None:
    def train(config: dict[str, Any]) -> None:
        x, y = data()
        lgb.cv(
            PARAMS,
            lgb.Dataset(x, label=y),
            num_boost_round=3,
            nfold=3,
            callbacks=[TuneReportCallback()],
        )

    result = fit(train, tmp_path, "valid-binary_logloss-mean")
    logged = rows(result)
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert {"valid-binary_logloss-mean", "valid-binary_logloss-stdv"} <= set(logged[0])
    assert result.checkpoint is None


def test_without_lightgbm_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    monkeypatch.delitem(sys.modules, "tunecore.integration.lightgbm")
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[lightgbm\]'"):
        import tunecore.integration.lightgbm  # noqa: F401, PLC0415
