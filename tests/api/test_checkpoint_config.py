"""CheckpointConfig as Ray Tune users spell it."""

from __future__ import annotations

from pathlib import Path

import pydantic
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


@pytest.mark.parametrize(
    "config",
    [
        CheckpointConfig(
            checkpoint_frequency=1, num_to_keep=1, checkpoint_score_attribute="min-loss"
        ),
        CheckpointConfig(
            checkpoint_frequency=1,
            num_to_keep=1,
            checkpoint_score_attribute="loss",
            checkpoint_score_order="min",
        ),
    ],
)
def test_the_min_prefix_keeps_the_checkpoint_with_the_lowest_score(
    tmp_path: Path, config: CheckpointConfig
) -> None:
    run = RunConfig(
        storage_path=str(tmp_path), verbose=0, executor="in_process", checkpoint_config=config
    )
    (result,) = Tuner(Losses, run_config=run).fit()
    # The best by loss (iteration 2, loss 1.0) and the newest (iteration 6).
    assert kept_iterations(Path(result.path)) == [2, 6]


def test_a_prefix_that_contradicts_the_order_is_an_error() -> None:
    with pytest.raises(pydantic.ValidationError, match="'min-loss' says 'min'"):
        CheckpointConfig(checkpoint_score_attribute="min-loss", checkpoint_score_order="max")


def test_the_max_prefix_is_the_max_order() -> None:
    config = CheckpointConfig(checkpoint_score_attribute="max-acc")
    assert (config.checkpoint_score_attribute, config.checkpoint_score_order) == ("acc", "max")


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
