"""`tunecore.integration.xgboost`: Ray Tune's XGBoost callbacks inside
trials (in-process executor: the behaviour under test is the callback's),
and the trial's checkpoints they make."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tunecore as tune
from tunecore.model import InvalidFieldError

xgb = pytest.importorskip("xgboost")
from xgboost.callback import TrainingCallback  # noqa: E402 - only with xgboost installed

from tunecore.integration.xgboost import (  # noqa: E402
    TuneReportCallback,
    TuneReportCheckpointCallback,
)

pytestmark = pytest.mark.slow

ROUNDS = 5
PARAMS = {"objective": "binary:logistic", "eval_metric": ["logloss", "error"], "seed": 3}


def data() -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = (x[:, 0] + x[:, 1] > 0).astype(int)
    return x, y


def booster_alone(rounds: int) -> Any:
    """The booster the trials below train, trained without tunecore."""
    x, y = data()
    return xgb.train(PARAMS, xgb.DMatrix(x, label=y), num_boost_round=rounds)


def fit(train: Any, tmp_path: Path, metric: str = "test-logloss", **run: Any) -> tune.ResultGrid:
    tuner = tune.Tuner(
        train,
        tune_config=tune.TuneConfig(metric=metric, mode="min"),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="exp", executor="in_process", verbose=0, **run
        ),
    )
    return tuner.fit()


def trainer(**callback: Any) -> Any:
    def train(config: dict[str, Any]) -> None:
        x, y = data()
        dtrain = xgb.DMatrix(x, label=y)
        xgb.train(
            PARAMS,
            dtrain,
            num_boost_round=ROUNDS,
            evals=[(dtrain, "test")],
            verbose_eval=False,
            callbacks=[TuneReportCheckpointCallback(**callback)],
        )

    return train


def rows(result: tune.Result) -> list[dict[str, Any]]:
    assert result.path is not None
    lines = Path(result.path, "result.json").read_text().splitlines()
    return [json.loads(line) for line in lines]


def checkpoint_iterations(result: tune.Result) -> list[int]:
    return [row["training_iteration"] for row in rows(result) if row.get("should_checkpoint")]


def test_each_round_is_reported_and_the_end_adds_the_final_booster(tmp_path: Path) -> None:
    result = fit(trainer(frequency=2), tmp_path)[0]
    assert result.error is None
    logged = rows(result)
    # Five rounds and, as Ray's `after_training`, the last round's metrics
    # once more with the final booster.
    assert [row["training_iteration"] for row in logged] == [1, 2, 3, 4, 5, 6]
    assert checkpoint_iterations(result) == [2, 4, 6]
    assert logged[-1]["test-logloss"] == logged[-2]["test-logloss"]
    assert {"test-logloss", "test-error"} <= set(logged[0])
    assert result.checkpoint is not None
    booster = TuneReportCheckpointCallback.get_model(result.checkpoint)
    alone = booster_alone(ROUNDS)
    x, _ = data()
    assert booster.num_boosted_rounds() == ROUNDS
    assert np.array_equal(booster.predict(xgb.DMatrix(x)), alone.predict(xgb.DMatrix(x)))


def test_a_checkpoint_on_the_last_round_is_not_taken_twice(tmp_path: Path) -> None:
    result = fit(trainer(frequency=ROUNDS), tmp_path)[0]
    assert [row["training_iteration"] for row in rows(result)] == [1, 2, 3, 4, 5]
    assert checkpoint_iterations(result) == [5]


def test_metrics_rename_and_filename_and_postprocessing(tmp_path: Path) -> None:
    def doubled(metrics: dict[str, float]) -> dict[str, float]:
        return {**metrics, "double": 2 * metrics["loss"]}

    result = fit(
        trainer(
            metrics={"loss": "test-logloss"},
            filename="model.json",
            checkpoint_at_end=True,
            results_postprocessing_fn=doubled,
        ),
        tmp_path,
        metric="loss",
    )[0]
    logged = rows(result)
    assert {"loss", "double"} <= set(logged[0])
    assert "test-error" not in logged[0]
    assert "test-logloss" not in logged[0]
    assert logged[0]["double"] == 2 * logged[0]["loss"]
    assert checkpoint_iterations(result) == [6]
    assert result.checkpoint is not None
    with result.checkpoint.as_directory() as directory:
        assert Path(directory, "model.json").is_file()
        assert not Path(directory, "model.ubj").exists()
    booster = TuneReportCheckpointCallback.get_model(result.checkpoint, filename="model.json")
    assert booster.num_boosted_rounds() == ROUNDS
    with pytest.raises(FileNotFoundError, match=r"filename='model.ubj'.*model\.json"):
        TuneReportCheckpointCallback.get_model(result.checkpoint)


def test_a_metric_xgboost_does_not_compute_fails_the_trial_naming_it(tmp_path: Path) -> None:
    result = fit(trainer(metrics=["test-auc"]), tmp_path)[0]
    assert result.error is not None
    assert "TuneReportCheckpointCallback.metrics='test-auc'" in str(result.error)
    assert "test-logloss" in str(result.error)


def test_the_checkpoints_are_the_trials_own(tmp_path: Path) -> None:
    """Retention and the best checkpoints apply to them as to any."""
    grid = fit(
        trainer(frequency=1),
        tmp_path,
        checkpoint_config=tune.CheckpointConfig(
            num_to_keep=2,
            checkpoint_score_attribute="test-logloss",
            checkpoint_score_order="min",
        ),
    )
    result = grid[0]
    kept = sorted(p.name for p in Path(result.path or "").glob("checkpoint_*"))
    assert len(kept) == 2
    assert len(result.best_checkpoints) == 2
    losses = [metrics["test-logloss"] for _, metrics in result.best_checkpoints]
    all_losses = sorted(float(row["test-logloss"]) for row in rows(result))
    assert sorted(losses, key=float) == all_losses[:2]  # type: ignore[arg-type]


def test_resumed_from_its_checkpoint_training_goes_on_from_the_booster(tmp_path: Path) -> None:
    """`get_model(tune.get_checkpoint())` as Ray's dynamic-resources
    example resumes: a trial restarted after a failure trains only the
    rounds it lacks and ends with the booster an unbroken run makes."""
    marker = tmp_path / "failed_once"

    def train(config: dict[str, Any]) -> None:
        x, y = data()
        dtrain = xgb.DMatrix(x, label=y)
        checkpoint = tune.get_checkpoint()
        model = None if checkpoint is None else TuneReportCheckpointCallback.get_model(checkpoint)
        done = 0 if model is None else model.num_boosted_rounds()

        class FailOnce(TrainingCallback):
            def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
                if epoch == 2 and not marker.exists():
                    marker.touch()
                    raise RuntimeError("the node went away")
                return False

        xgb.train(
            PARAMS,
            dtrain,
            num_boost_round=ROUNDS - done,
            xgb_model=model,
            evals=[(dtrain, "test")],
            verbose_eval=False,
            callbacks=[TuneReportCheckpointCallback(frequency=1), FailOnce()],
        )

    result = fit(train, tmp_path, failure_config=tune.FailureConfig(max_failures=1))[0]
    assert result.error is None
    assert result.checkpoint is not None
    booster = TuneReportCheckpointCallback.get_model(result.checkpoint)
    x, _ = data()
    alone = booster_alone(ROUNDS)
    assert booster.num_boosted_rounds() == ROUNDS
    assert np.allclose(booster.predict(xgb.DMatrix(x)), alone.predict(xgb.DMatrix(x)))


def test_report_callback_under_cv_reports_postprocessed_fold_results(tmp_path: Path) -> None:
    def train(config: dict[str, Any]) -> None:
        x, y = data()

        def average_cv_folds(results: dict[str, Any]) -> dict[str, float]:
            return {key: float(np.mean(value)) for key, value in results.items()}

        xgb.cv(
            PARAMS,
            xgb.DMatrix(x, label=y),
            num_boost_round=3,
            nfold=3,
            verbose_eval=False,
            callbacks=[TuneReportCallback(results_postprocessing_fn=average_cv_folds)],
        )

    result = fit(train, tmp_path)[0]
    assert result.error is None
    logged = rows(result)
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert isinstance(logged[0]["test-logloss"], float)
    assert {"train-logloss", "train-error", "test-error"} <= set(logged[0])
    assert result.checkpoint is None


def test_checkpointing_cv_folds_is_refused_with_what_to_do(tmp_path: Path) -> None:
    def train(config: dict[str, Any]) -> None:
        x, y = data()
        xgb.cv(
            PARAMS,
            xgb.DMatrix(x, label=y),
            num_boost_round=2,
            nfold=2,
            callbacks=[TuneReportCheckpointCallback()],
        )

    result = fit(train, tmp_path, metric="training_iteration")[0]
    assert "cannot checkpoint xgb.cv's folds" in str(result.error)
    assert "checkpoint_at_end=False" in str(result.error)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"frequency": -1}, "TuneReportCheckpointCallback.frequency=-1"),
        ({"frequency": 1.5}, "TuneReportCheckpointCallback.frequency=1.5"),
        ({"metrics": 3}, "TuneReportCheckpointCallback.metrics=3"),
        ({"metrics": {"loss": 1}}, "TuneReportCheckpointCallback.metrics={'loss': 1}"),
        ({"filename": ""}, "TuneReportCheckpointCallback.filename=''"),
        ({"checkpoint_at_end": "yes"}, "TuneReportCheckpointCallback.checkpoint_at_end='yes'"),
        ({"results_postprocessing_fn": 1}, "TuneReportCheckpointCallback.results_postprocess"),
    ],
)
def test_bad_arguments_name_the_field(arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^{field}".replace("[", r"\[")):
        TuneReportCheckpointCallback(**arguments)


def test_without_xgboost_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xgboost", None)
    monkeypatch.delitem(sys.modules, "tunecore.integration.xgboost")
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[xgboost\]'"):
        import tunecore.integration.xgboost  # noqa: F401, PLC0415
