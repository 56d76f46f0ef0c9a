"""`tunecore.run` takes Ray Tune's `tune.run` arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunecore
from tunecore import CheckpointConfig, TuneError

pytestmark = pytest.mark.usefixtures("ray_cluster")  # tune.run runs on Ray


def fails_for_odd_x(config: dict[str, object]) -> None:
    tunecore.report({"score": 1.0})
    if int(str(config["x"])) % 2:
        raise ValueError("odd")


def test_a_failed_trial_raises_unless_told_not_to(tmp_path: Path) -> None:
    space = {"x": tunecore.grid_search([1, 2])}
    with pytest.raises(TuneError, match="Trials did not complete: fails_for_odd_x_"):
        tunecore.run(fails_for_odd_x, config=space, storage_path=str(tmp_path), name="a", verbose=0)
    analysis = tunecore.run(
        fails_for_odd_x,
        config=space,
        local_dir=str(tmp_path),  # Ray's old name of storage_path
        name="b",
        verbose=0,
        raise_on_failed_trial=False,
    )
    assert sorted(str(t.status) for t in analysis.trials) == ["ERROR", "TERMINATED"]
    assert (tmp_path / "b").is_dir()


def test_checkpoint_settings_are_given_once(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="checkpoint_config and checkpoint_frequency"):
        tunecore.run(
            fails_for_odd_x,
            checkpoint_config=CheckpointConfig(),
            checkpoint_freq=2,
            storage_path=str(tmp_path),
        )
