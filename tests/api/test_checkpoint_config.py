"""CheckpointConfig as Ray Tune users spell it."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunecore
from tunecore import CheckpointConfig, RunConfig, Tuner
from tunecore.model import JsonDict

LOSSES = [4.0, 1.0, 3.0, 2.0, 5.0, 6.0]


class Losses(tunecore.Trainable):
    """Reports LOSSES in turn and checkpoints after each one."""

    def step(self) -> JsonDict:
        return {"loss": LOSSES[self.iteration], "done": self.iteration + 1 == len(LOSSES)}

    def save_checkpoint(self, checkpoint_dir: str) -> JsonDict:
        return {"loss": LOSSES[self.iteration - 1]}

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        pass


def kept_iterations(trial_dir: str | Path) -> list[int]:
    return sorted(int(p.name.split("_")[1]) for p in Path(trial_dir).glob("checkpoint_*"))


def test_the_min_order_keeps_the_checkpoint_with_the_lowest_score(tmp_path: Path) -> None:
    config = CheckpointConfig(
        checkpoint_frequency=1,
        num_to_keep=1,
        checkpoint_score_attribute="loss",
        checkpoint_score_order="min",
    )
    run = RunConfig(
        storage_path=str(tmp_path), verbose=0, executor="in_process", checkpoint_config=config
    )
    (result,) = Tuner(Losses, run_config=run).fit()
    # The best by loss (iteration 2, loss 1.0) and the newest (iteration 6).
    assert kept_iterations(Path(result.path)) == [2, 6]


class Auc(tunecore.Trainable):
    """Reports LOSSES as a metric named "max-auc", as Ray's storage guide
    (tune-storage.md) names the metric it ranks checkpoints by."""

    def step(self) -> JsonDict:
        return {"max-auc": LOSSES[self.iteration], "done": self.iteration + 1 == len(LOSSES)}

    def save_checkpoint(self, checkpoint_dir: str) -> JsonDict:
        return {}


def test_the_score_attribute_is_the_metric_as_written_prefix_and_all(tmp_path: Path) -> None:
    """Ray 2.60's CheckpointConfig reads no "max-" or "min-" prefix: with
    `checkpoint_score_attribute="max-auc"` the best are by "max-auc"."""
    config = CheckpointConfig(
        checkpoint_frequency=1, num_to_keep=3, checkpoint_score_attribute="max-auc"
    )
    assert (config.checkpoint_score_attribute, config.checkpoint_score_order) == ("max-auc", "max")
    run = RunConfig(
        storage_path=str(tmp_path), verbose=0, executor="in_process", checkpoint_config=config
    )
    (result,) = Tuner(Auc, run_config=run).fit()
    # The three best by "max-auc" (iterations 1, 5 and 6), not the three newest.
    assert sorted(float(metrics["max-auc"]) for _, metrics in result.best_checkpoints) == [4, 5, 6]  # type: ignore[arg-type]
    assert kept_iterations(Path(result.path)) == [1, 5, 6]


def test_a_class_trainable_checkpoints_at_its_end_by_default_as_in_ray(tmp_path: Path) -> None:
    run = RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process")
    (result,) = Tuner(Losses, run_config=run).fit()
    assert kept_iterations(result.path) == [len(LOSSES)]
    assert result.checkpoint is not None


def reports_without_checkpoints(config: dict[str, object]) -> None:
    for loss in LOSSES:
        tunecore.report({"loss": loss})


def test_a_function_trainable_does_not_by_default(tmp_path: Path) -> None:
    run = RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process")
    (result,) = Tuner(reports_without_checkpoints, run_config=run).fit()
    assert kept_iterations(result.path) == []


def test_the_log_on_disk_holds_the_newer_checkpoint_before_an_older_one_is_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop writes a round's records at its end, but never later than a
    delete: a driver killed right after one must find, on resume, the
    checkpoint that replaced it."""
    from tunecore.model import CheckpointSaved  # noqa: PLC0415
    from tunecore.shell.eventlog import read_log  # noqa: PLC0415
    from tunecore.shell.storage.layout import ExperimentStorage  # noqa: PLC0415

    real_delete = ExperimentStorage.delete_checkpoint
    seen: list[tuple[str, list[str]]] = []

    def delete_checkpoint(self: ExperimentStorage, path: str | Path) -> bool:
        logged = read_log(self.experiment_dir).events
        saved = [e.checkpoint.path for e in logged if isinstance(e, CheckpointSaved)]
        seen.append((Path(path).name, [Path(p).name for p in saved]))
        return real_delete(self, path)

    monkeypatch.setattr(ExperimentStorage, "delete_checkpoint", delete_checkpoint)
    config = CheckpointConfig(checkpoint_frequency=1, num_to_keep=1)
    run = RunConfig(
        storage_path=str(tmp_path), verbose=0, executor="in_process", checkpoint_config=config
    )
    Tuner(Losses, run_config=run).fit()
    assert [deleted for deleted, _ in seen] == [f"checkpoint_00000{i}" for i in range(1, 6)]
    for deleted, saved in seen:
        newer = f"checkpoint_00000{int(deleted[-1]) + 1}"
        assert newer in saved
