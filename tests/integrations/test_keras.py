"""`tunecore.integration.keras` and `tunecore.integrations.keras`: Ray's
Keras callbacks inside trials (in-process executor: the behaviour under
test is the callback's; tests/compat runs them on Ray's workers), and the
checkpoints they make, read back with `keras.models.load_model`.

Runs where Keras 3 and a backend are installed (`./dev frameworks`:
torch's CPU build, `KERAS_BACKEND=torch`); skipped elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tunecore as tune
from tunecore.model import InvalidFieldError

pytest.importorskip("keras")
import keras

from tunecore.integration.keras import (
    TuneReportCallback,
    TuneReportCheckpointCallback,
)
from tunecore.integrations.keras import ReportCheckpointCallback

EPOCHS = 3
BATCH = 16
SAMPLES = 64


def data(seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(SAMPLES, 4)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("float32")
    return x, y


def model() -> Any:
    keras.utils.set_random_seed(1)
    built = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)]
    )
    built.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return built


def trainer(callback: Any, epochs: int = EPOCHS) -> Any:
    def train(config: dict[str, Any]) -> None:
        model().fit(
            *data(0),
            batch_size=BATCH,
            epochs=epochs,
            verbose=0,
            validation_data=data(1),
            callbacks=[callback],
        )

    return train


def fit(train: Any, tmp_path: Path, metric: str = "loss", **run: Any) -> tune.ResultGrid:
    return tune.Tuner(
        train,
        tune_config=tune.TuneConfig(metric=metric, mode="min"),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="exp", executor="in_process", verbose=0, **run
        ),
    ).fit()


def rows(result: tune.Result) -> list[dict[str, Any]]:
    assert result.path is not None
    lines = Path(result.path, "result.json").read_text().splitlines()
    return [json.loads(line) for line in lines]


def checkpoint_iterations(result: tune.Result) -> list[int]:
    return [row["training_iteration"] for row in rows(result) if row.get("should_checkpoint")]


def loaded(checkpoint: tune.Checkpoint | None) -> Any:
    assert checkpoint is not None
    with checkpoint.as_directory() as directory:
        return keras.models.load_model(os.path.join(directory, "model.keras"))


def val_loss(restored: Any) -> float:
    x, y = data(1)
    return float(restored.evaluate(x, y, batch_size=BATCH, verbose=0)[0])


def test_each_epoch_reports_its_logs_with_the_model_as_checkpoint(tmp_path: Path) -> None:
    callback = TuneReportCheckpointCallback(metrics={"loss": "val_loss", "acc": "accuracy"})
    result = fit(trainer(callback), tmp_path)[0]
    assert result.error is None
    logged = rows(result)
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert checkpoint_iterations(result) == [1, 2, 3]
    assert {"loss", "acc"} <= set(logged[0])
    assert "val_loss" not in logged[0]
    assert "val_accuracy" not in logged[0]
    assert result.checkpoint is not None
    # Ray's TensorflowCheckpoint metadata, and the model as it was when the
    # last epoch's validation loss was measured.
    assert result.checkpoint.get_metadata() == {"_model_filename": "model.keras"}
    assert val_loss(loaded(result.checkpoint)) == pytest.approx(logged[-1]["loss"], rel=1e-4)


def test_without_metrics_every_log_is_reported(tmp_path: Path) -> None:
    result = fit(trainer(TuneReportCheckpointCallback(checkpoint_on=[])), tmp_path)[0]
    assert {"loss", "accuracy", "val_loss", "val_accuracy"} <= set(rows(result)[0])
    assert result.checkpoint is None


def test_the_hooks_named_choose_when_to_report_and_when_to_checkpoint(tmp_path: Path) -> None:
    callback = TuneReportCheckpointCallback(
        checkpoint_on="train_end",
        report_metrics_on=["epoch_end", "train_batch_end"],
        metrics="loss",
    )
    result = fit(trainer(callback, epochs=2), tmp_path)[0]
    batches = SAMPLES // BATCH
    # Every batch and every epoch of two epochs, then the end with the model.
    assert len(rows(result)) == 2 * (batches + 1) + 1
    assert checkpoint_iterations(result) == [2 * (batches + 1) + 1]
    assert loaded(result.checkpoint) is not None


def test_the_checkpoints_are_the_trials_own(tmp_path: Path) -> None:
    """Retention and the best checkpoints apply to them as to any."""
    callback = TuneReportCheckpointCallback(metrics={"loss": "val_loss"})
    result = fit(
        trainer(callback),
        tmp_path,
        checkpoint_config=tune.CheckpointConfig(
            num_to_keep=1, checkpoint_score_attribute="loss", checkpoint_score_order="min"
        ),
    )[0]
    kept = list(Path(result.path or "").glob("checkpoint_*"))
    assert len(kept) == 1
    ((best, metrics),) = result.best_checkpoints
    assert metrics["loss"] == min(row["loss"] for row in rows(result))
    assert val_loss(loaded(best)) == pytest.approx(metrics["loss"], rel=1e-4)


def test_a_trial_restored_after_an_error_goes_on_from_its_model(tmp_path: Path) -> None:
    """`Tuner.restore(resume_errored=True)`: the trial starts again from its
    last checkpoint, read with `keras.models.load_model` as a Ray user
    resumes, training only the epochs it lacks; afterwards its checkpoint
    is read the same way."""
    marker = tmp_path / "failed_once"

    class FailAfterSecondEpoch(keras.callbacks.Callback):  # type: ignore[misc]
        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            if epoch == 1 and not marker.exists():
                marker.touch()
                raise RuntimeError("the node went away")

    def train(config: dict[str, Any]) -> None:
        checkpoint = tune.get_checkpoint()
        net = model() if checkpoint is None else loaded(checkpoint)
        done = int(net.optimizer.iterations) // (SAMPLES // BATCH)
        net.fit(
            *data(0),
            batch_size=BATCH,
            initial_epoch=done,
            epochs=EPOCHS,
            verbose=0,
            validation_data=data(1),
            callbacks=[
                TuneReportCheckpointCallback(metrics={"loss": "val_loss"}),
                FailAfterSecondEpoch(),
            ],
        )

    first = fit(train, tmp_path)[0]
    assert first.error is not None
    assert "the node went away" in str(first.error)
    assert checkpoint_iterations(first) == [1, 2]

    restored = tune.Tuner.restore(str(tmp_path / "exp"), train, resume_errored=True)
    result = restored.fit()[0]
    assert result.error is None
    logged = rows(result)
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert val_loss(loaded(result.checkpoint)) == pytest.approx(logged[-1]["loss"], rel=1e-4)

    after_restore = tune.Tuner.restore(str(tmp_path / "exp"), train).get_results()[0]
    assert val_loss(loaded(after_restore.checkpoint)) == pytest.approx(logged[-1]["loss"], rel=1e-4)


def test_a_metric_keras_did_not_log_fails_the_trial_naming_it(tmp_path: Path) -> None:
    result = fit(trainer(TuneReportCheckpointCallback(metrics=["val_auc"])), tmp_path)[0]
    assert result.error is not None
    assert "TuneReportCheckpointCallback.metrics='val_auc'" in str(result.error)
    assert "val_loss" in str(result.error)


def test_the_report_callback_reports_without_checkpoints(tmp_path: Path) -> None:
    result = fit(trainer(TuneReportCallback({"loss": "val_loss"})), tmp_path)[0]
    assert [row["training_iteration"] for row in rows(result)] == [1, 2, 3]
    assert checkpoint_iterations(result) == []
    assert result.checkpoint is None


def test_ray_trains_report_checkpoint_callback(tmp_path: Path) -> None:
    callback = ReportCheckpointCallback(metrics={"loss": "val_loss"})
    result = fit(trainer(callback), tmp_path)[0]
    assert checkpoint_iterations(result) == [1, 2, 3]
    assert val_loss(loaded(result.checkpoint)) == pytest.approx(rows(result)[-1]["loss"], rel=1e-4)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: TuneReportCheckpointCallback(checkpoint_on="validation_end"), "checkpoint_on"),
        (lambda: TuneReportCheckpointCallback(report_metrics_on=["epoch_end", 3]), "report_met"),  # type: ignore[list-item]
        (lambda: TuneReportCheckpointCallback(metrics=3), "metrics=3"),  # type: ignore[arg-type]
        (lambda: TuneReportCheckpointCallback(metrics={"loss": 1}), "metrics={'loss': 1}"),  # type: ignore[dict-item]
        (lambda: TuneReportCallback(on="batch_end"), "on='batch_end'"),
        (lambda: ReportCheckpointCallback(checkpoint_on="fit_end"), "checkpoint_on='fit_end'"),
    ],
)
def test_bad_arguments_name_the_field(make: Any, field: str) -> None:
    with pytest.raises(InvalidFieldError, match=r"^\w+\." + field.replace("[", r"\[")) as error:
        make()
    assert "epoch_end" in str(error.value) or "dict" in str(error.value)
