"""The config classes take their leading fields positionally, in the order
of Ray's dataclasses, as users' Ray Tune scripts pass them
(`air.CheckpointConfig(1, "Loss/Val", "min")`,
`air.CheckpointConfig(1, checkpoint_at_end=True)`, found in public
repositories); keywords still work, and a wrong call says what is taken."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import tunecore as tune


def positional(cls: type[Any], *args: object, **kwargs: object) -> Any:
    return cls(*args, **kwargs)


def test_checkpoint_config_in_rays_order() -> None:
    config = positional(tune.CheckpointConfig, 1, "Loss/Val", "min", 2, True)
    assert config == tune.CheckpointConfig(
        num_to_keep=1,
        checkpoint_score_attribute="Loss/Val",
        checkpoint_score_order="min",
        checkpoint_frequency=2,
        checkpoint_at_end=True,
    )
    mixed = positional(tune.CheckpointConfig, 1, checkpoint_at_end=True)
    assert (mixed.num_to_keep, mixed.checkpoint_at_end) == (1, True)


def test_the_other_configs_in_rays_order() -> None:
    assert positional(tune.FailureConfig, 3, True) == tune.FailureConfig(
        max_failures=3, fail_fast=True
    )
    assert positional(tune.SyncConfig, 10).sync_period == 10
    assert positional(tune.TuneConfig, "min", "loss").metric == "loss"
    assert positional(tune.TuneConfig, "min", "loss").mode == "min"
    run = positional(tune.RunConfig, "my_run", "/tmp/results")
    assert (run.name, run.storage_path) == ("my_run", "/tmp/results")
    skip = tune.ResumeConfig.ResumeType.SKIP
    resume = positional(tune.ResumeConfig, skip, skip, tune.ResumeConfig.ResumeType.RESTART)
    assert (resume.unfinished, resume.errored) == (skip, tune.ResumeConfig.ResumeType.RESTART)


def test_a_wrong_positional_call_says_what_is_taken() -> None:
    with pytest.raises(
        TypeError, match=r"at most 2 positional arguments \(max_failures, fail_fast\)"
    ):
        positional(tune.FailureConfig, 1, False, 3)
    with pytest.raises(TypeError, match="multiple values for argument 'num_to_keep'"):
        positional(tune.CheckpointConfig, 1, num_to_keep=2)
    with pytest.raises(ValidationError, match="num_to_keep"):
        positional(tune.CheckpointConfig, 0)
