"""`tunecore.integration.pytorch_lightning`: Ray's Lightning callbacks
inside trials (in-process executor: the behaviour under test is the
callback's; tests/compat runs them on Ray's workers), and the checkpoints
they make, read back with `LightningModule.load_from_checkpoint`.

Runs where Lightning and torch are installed (`./dev frameworks`);
skipped elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tests.storage_fixtures import StorageTarget
from tunecore.model import InvalidFieldError

pytest.importorskip("torch")
pytest.importorskip("lightning")
import lightning.pytorch as pl
import torch

from tunecore.integration.pytorch_lightning import (
    TuneCallback,
    TuneReportCallback,
    TuneReportCheckpointCallback,
)

EPOCHS = 3
SAMPLES = 64
BATCH = 16


def loader(seed: int) -> Any:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(SAMPLES, 4, generator=generator)
    y = x[:, :1] - 2 * x[:, 1:2]
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=BATCH)


class Regression(pl.LightningModule):  # type: ignore[misc]
    def __init__(self, lr: float = 0.05) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layer = torch.nn.Linear(4, 1)

    def forward(self, x: Any) -> Any:
        return self.layer(x)

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def lightning_trainer(callback: Any, epochs: int = EPOCHS) -> Any:
    return pl.Trainer(
        max_epochs=epochs,
        callbacks=[callback],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        devices=1,
    )


def training(callback: Any) -> Any:
    def train(config: dict[str, Any]) -> None:
        torch.manual_seed(0)
        lightning_trainer(callback).fit(Regression(), loader(0), loader(1))

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


def loaded(checkpoint: tune.Checkpoint | None, filename: str = "checkpoint") -> Any:
    assert checkpoint is not None
    with checkpoint.as_directory() as directory:
        return Regression.load_from_checkpoint(os.path.join(directory, filename))


def val_loss(model: Any) -> float:
    model.eval()
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y, reduction="sum") for x, y in loader(1)]
    return float(sum(losses)) / SAMPLES


def test_each_validation_reports_with_the_trainer_as_checkpoint(tmp_path: Path) -> None:
    callback = TuneReportCheckpointCallback({"loss": "val_loss"}, filename="model.ckpt")
    result = fit(training(callback), tmp_path)[0]
    assert result.error is None
    logged = rows(result)
    # Lightning's sanity check validates too, before training: not reported.
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert checkpoint_iterations(result) == [1, 2, 3]
    assert "val_loss" not in logged[0]
    model = loaded(result.checkpoint, "model.ckpt")
    assert model.hparams.lr == 0.05
    assert val_loss(model) == pytest.approx(logged[-1]["loss"], rel=1e-5)


def test_without_metrics_every_callback_metric_is_reported(tmp_path: Path) -> None:
    callback = TuneReportCheckpointCallback(save_checkpoints=False, on="train_epoch_end")
    result = fit(training(callback), tmp_path, metric="val_loss")[0]
    assert result.error is None
    logged = rows(result)
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert {"train_loss", "val_loss"} <= set(logged[0])
    assert isinstance(logged[0]["val_loss"], float)
    assert result.checkpoint is None


def test_a_missing_metric_is_left_out_and_nothing_is_reported_without_any(tmp_path: Path) -> None:
    """As in Ray: a name the trainer lacks is skipped (with a warning), and
    a hook with none of the names reports nothing; here "train_start"
    fires before any metric exists."""
    callback = TuneReportCheckpointCallback(
        {"loss": "val_loss", "auc": "val_auc"}, on=["train_start", "validation_end"]
    )
    result = fit(training(callback), tmp_path)[0]
    logged = rows(result)
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]
    assert "auc" not in logged[0]


class EpochReporter(TuneCallback):
    """A callback of a user's own, as users write them on Ray: `_handle`
    reports what it likes at the hooks `on` names."""

    def _handle(self, trainer: Any, pl_module: Any) -> None:
        assert isinstance(pl_module, Regression)
        tune.report({"epoch": trainer.current_epoch, "lr": pl_module.hparams.lr})


def test_a_subclass_of_tune_callback_handles_the_hooks_on_names(tmp_path: Path) -> None:
    result = fit(training(EpochReporter(on="train_epoch_end")), tmp_path, metric="epoch")[0]
    assert result.error is None
    assert [(row["epoch"], row["lr"]) for row in rows(result)] == [(0, 0.05), (1, 0.05), (2, 0.05)]


class RenamingReporter(TuneReportCallback):
    """Overrides `_handle` of Ray's callback, reading its `_metrics`, as a
    user's subclass does (it reports every validation, the sanity check's
    too, each name with a prefix)."""

    def _handle(self, trainer: Any, pl_module: Any) -> None:
        assert self._metrics == ["val_loss"]
        value = trainer.callback_metrics["val_loss"].item()
        tune.report({"mine_val_loss": value, "sanity": trainer.sanity_checking})


def test_an_override_of_handle_replaces_the_callbacks_reporting(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="TuneReportCheckpointCallback"):
        callback = RenamingReporter("val_loss")
    result = fit(training(callback), tmp_path, metric="mine_val_loss")[0]
    assert result.error is None
    logged = rows(result)
    assert [row["sanity"] for row in logged] == [True, False, False, False]
    assert "val_loss" not in logged[-1]
    assert result.checkpoint is None


def test_an_override_of_get_report_dict_changes_what_is_reported(tmp_path: Path) -> None:
    class Doubled(TuneReportCheckpointCallback):
        def _get_report_dict(self, trainer: Any, pl_module: Any) -> dict[str, Any] | None:
            reported = super()._get_report_dict(trainer, pl_module)
            return None if reported is None else {k: 2 * v for k, v in reported.items()}

    result = fit(training(Doubled({"loss": "val_loss"})), tmp_path)[0]
    assert result.error is None
    reported = rows(result)[-1]["loss"]
    assert val_loss(loaded(result.checkpoint)) == pytest.approx(reported / 2, rel=1e-5)


def test_tune_callback_without_handle_fails_the_trial_naming_it(tmp_path: Path) -> None:
    result = fit(training(TuneCallback(on="train_epoch_end")), tmp_path)[0]
    assert isinstance(result.error, Exception)
    assert "TuneCallback must define _handle(trainer, pl_module)" in str(result.error)


def test_the_checkpoints_are_the_trials_own(tmp_path: Path) -> None:
    """Retention and the best checkpoints apply to them as to any."""
    result = fit(
        training(TuneReportCheckpointCallback({"loss": "val_loss"})),
        tmp_path,
        checkpoint_config=tune.CheckpointConfig(
            num_to_keep=1, checkpoint_score_attribute="loss", checkpoint_score_order="min"
        ),
    )[0]
    assert len(list(Path(result.path or "").glob("checkpoint_*"))) == 1
    ((best, metrics),) = result.best_checkpoints
    assert metrics["loss"] == min(row["loss"] for row in rows(result))
    assert val_loss(loaded(best)) == pytest.approx(metrics["loss"], rel=1e-5)


def test_checkpoints_in_storage_at_a_uri_load_after_restore(s3_store: StorageTarget) -> None:
    """The experiment stored in S3: the checkpoint `Tuner.restore` finds
    there downloads and loads with `load_from_checkpoint`."""
    callback = TuneReportCheckpointCallback({"loss": "val_loss"})
    tune.Tuner(
        training(callback),
        tune_config=tune.TuneConfig(metric="loss", mode="min"),
        run_config=tune.RunConfig(
            storage_path=s3_store.uri, name="exp", executor="in_process", verbose=0
        ),
    ).fit()
    uri = s3_store.experiment_uri("exp")
    result = tune.Tuner.restore(uri, training(callback)).get_results()[0]
    assert result.error is None
    assert result.checkpoint is not None
    assert result.checkpoint.local_dir() is None  # in the bucket, not on this disk
    assert val_loss(loaded(result.checkpoint)) == pytest.approx(result.metrics["loss"], rel=1e-5)


def test_a_trial_restored_after_an_error_resumes_the_fit(tmp_path: Path) -> None:
    """`Tuner.restore(resume_errored=True)`: the trial starts again from its
    last checkpoint, which Lightning resumes from (`trainer.fit(...,
    ckpt_path=...)`, as Ray's docs resume), training only the epochs it
    lacks; afterwards its checkpoint loads with `load_from_checkpoint`."""
    marker = tmp_path / "failed_once"

    class FailAfterSecondEpoch(pl.Callback):  # type: ignore[misc]
        def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
            if trainer.current_epoch == 1 and not marker.exists():
                marker.touch()
                raise RuntimeError("the node went away")

    epochs_run: list[int] = []

    class EpochsRun(pl.Callback):  # type: ignore[misc]
        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            epochs_run.append(trainer.current_epoch)

    def train(config: dict[str, Any]) -> None:
        torch.manual_seed(0)
        checkpoint = tune.get_checkpoint()
        callbacks = [
            TuneReportCheckpointCallback({"loss": "val_loss"}),
            FailAfterSecondEpoch(),
            EpochsRun(),
        ]
        trainer = pl.Trainer(
            max_epochs=EPOCHS,
            callbacks=callbacks,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        if checkpoint is None:
            trainer.fit(Regression(), loader(0), loader(1))
            return
        with checkpoint.as_directory() as directory:
            path = os.path.join(directory, "checkpoint")
            trainer.fit(Regression(), loader(0), loader(1), ckpt_path=path)

    first = fit(train, tmp_path)[0]
    assert first.error is not None
    assert "the node went away" in str(first.error)
    assert checkpoint_iterations(first) == [1, 2]

    result = tune.Tuner.restore(str(tmp_path / "exp"), train, resume_errored=True).fit()[0]
    assert result.error is None
    assert epochs_run == [0, 1, 2]  # the restored trial ran the third epoch only
    logged = rows(result)
    assert [row["training_iteration"] for row in logged] == [1, 2, 3]

    again = tune.Tuner.restore(str(tmp_path / "exp"), train).get_results()[0]
    assert val_loss(loaded(again.checkpoint)) == pytest.approx(logged[-1]["loss"], rel=1e-5)


def test_the_report_callback_warns_and_never_checkpoints(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="TuneReportCheckpointCallback"):
        callback = TuneReportCallback("val_loss")
    result = fit(training(callback), tmp_path, metric="val_loss")[0]
    assert [row["training_iteration"] for row in rows(result)] == [1, 2, 3]
    assert result.checkpoint is None


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"on": "validation_finish"}, "on='validation_finish'"),
        ({"on": ["validation_end", None]}, "on=None"),
        ({"metrics": 3}, "metrics=3"),
        ({"filename": ""}, "filename=''"),
        ({"filename": "a/b"}, "filename='a/b'"),
        ({"save_checkpoints": "yes"}, "save_checkpoints='yes'"),
    ],
)
def test_bad_arguments_name_the_field(arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^TuneReportCheckpointCallback.{field}"):
        TuneReportCheckpointCallback(**arguments)
