"""`RunConfig` fields a script leaves unset by passing None or False, as
Ray 2.60's RunConfig takes them: `checkpoint_config`, `failure_config` and
`sync_config` are then the defaults, `callbacks` none, `verbose` the default level (what
`get_air_verbosity` returns with Ray's older output on is None, which
scripts pass straight in)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import tunecore as tune
from tunecore import CheckpointConfig, FailureConfig, RunConfig, SyncConfig


@pytest.mark.parametrize("unset", [None, False])
def test_unset_configs_are_the_defaults(unset: object) -> None:
    config = RunConfig(
        checkpoint_config=unset,  # type: ignore[arg-type]
        failure_config=unset,  # type: ignore[arg-type]
        sync_config=unset,  # type: ignore[arg-type]
        verbose=None,  # type: ignore[arg-type]
    )
    assert config.checkpoint_config == CheckpointConfig()
    assert config.failure_config == FailureConfig()
    assert config.sync_config == SyncConfig()
    assert config.verbose == RunConfig().verbose


def test_callbacks_none_is_no_callbacks() -> None:
    """Ray's `RunConfig(callbacks=None)` default, as a library built on Ray
    Tune passes its optional list on (siatune's `Tuner`)."""
    assert RunConfig(callbacks=None).callbacks == []  # type: ignore[arg-type]


def test_a_config_given_is_kept_and_a_bad_one_still_named() -> None:
    kept = RunConfig(checkpoint_config=CheckpointConfig(num_to_keep=2), verbose=0)
    assert kept.checkpoint_config.num_to_keep == 2
    assert kept.verbose == 0
    with pytest.raises(ValueError, match="checkpoint_config"):
        RunConfig(checkpoint_config="keep all")  # type: ignore[arg-type]


def two_steps(config: dict[str, object]) -> None:
    for step in range(2):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tune.report({"step": step}, checkpoint=tune.Checkpoint.from_directory(directory))


def test_a_run_with_checkpoint_config_none_keeps_every_checkpoint(tmp_path: Path) -> None:
    results = tune.Tuner(
        two_steps,
        run_config=RunConfig(
            storage_path=str(tmp_path),
            checkpoint_config=None,  # type: ignore[arg-type]
            verbose=None,  # type: ignore[arg-type]
            executor="in_process",
        ),
    ).fit()
    (result,) = results
    assert result.error is None
    assert len(result.best_checkpoints) == 2
