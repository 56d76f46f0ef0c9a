"""Ray's own config objects (built in a module that still imports `from ray
import tune` or `ray.train`) handed to tunecore's `RunConfig(...)` and
`Tuner(...)`: read as tunecore's, with exactly the fields set on them
(tunecore.api.ray_dataclass_configs). tests/compat/scripts/
library_ray_spaces_and_configs.py runs an experiment with them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tunecore

ray_train: Any = pytest.importorskip("ray.train")
ray_tune: Any = pytest.importorskip("ray.tune")

_RANKING = {
    "num_to_keep": st.none() | st.integers(1, 5),
    "checkpoint_score_attribute": st.sampled_from(["loss", "accuracy"]),
    "checkpoint_score_order": st.sampled_from(["min", "max"]),
}
_WHEN = {"checkpoint_frequency": st.integers(0, 4), "checkpoint_at_end": st.none() | st.booleans()}


@settings(max_examples=40, deadline=None)
@given(
    train_fields=st.fixed_dictionaries({}, optional=_RANKING),
    tune_fields=st.fixed_dictionaries({}, optional={**_RANKING, **_WHEN}),
)
def test_ray_s_checkpoint_config_keeps_the_fields_set_and_tunecore_s_defaults(
    train_fields: dict[str, Any], tune_fields: dict[str, Any]
) -> None:
    """Before, pydantic refused it ("Input should be a valid dictionary or
    instance of CheckpointConfig"). Ray's `checkpoint_score_attribute`
    default (None) never replaces tunecore's. Ray Train's has no
    `checkpoint_frequency` or `checkpoint_at_end` (it raises on them)."""
    for module, fields in ((ray_train, train_fields), (ray_tune, tune_fields)):
        run = tunecore.RunConfig(checkpoint_config=module.CheckpointConfig(**fields))
        assert run.checkpoint_config == tunecore.CheckpointConfig(**fields)


@settings(max_examples=30, deadline=None)
@given(max_failures=st.integers(-1, 5), preemptions=st.none() | st.integers(-1, 3))
def test_ray_train_s_failure_config_keeps_the_fields_set(
    max_failures: int, preemptions: int | None
) -> None:
    fields: dict[str, Any] = {"max_failures": max_failures}
    if preemptions is not None:
        fields["max_preemption_failures"] = preemptions
    run = tunecore.RunConfig(failure_config=ray_train.FailureConfig(**fields))
    assert run.failure_config == tunecore.FailureConfig(**fields)


def test_ray_tune_s_failure_and_sync_configs_are_tunecore_s() -> None:
    run = tunecore.RunConfig(
        failure_config=ray_tune.FailureConfig(fail_fast=True),
        sync_config=ray_tune.SyncConfig(sync_period=30, sync_artifacts=True),
    )
    assert run.failure_config == tunecore.FailureConfig(fail_fast=True)
    assert run.sync_config == tunecore.SyncConfig(sync_period=30, sync_artifacts=True)


def test_a_value_tunecore_refuses_names_the_field_and_the_value() -> None:
    with pytest.raises(ValueError, match=r"failure_config\.max_failures[\s\S]*input_value=-2"):
        tunecore.RunConfig(failure_config=ray_tune.FailureConfig(max_failures=-2))


def test_a_field_tunecore_has_not_is_named_with_its_value() -> None:
    @dataclasses.dataclass
    class TeamCheckpointConfig(ray_train.CheckpointConfig):  # type: ignore[misc]
        upload_to_team_bucket: bool = False

    with pytest.raises(ValueError, match=r"TeamCheckpointConfig\.upload_to_team_bucket=True"):
        tunecore.RunConfig(checkpoint_config=TeamCheckpointConfig(upload_to_team_bucket=True))


def test_the_tuner_takes_ray_s_run_and_tune_configs() -> None:
    """Before: "Tuner(run_config=RunConfig(...)) is invalid: expected a
    tunecore.RunConfig, not a RunConfig". The compat script
    library_ray_spaces_and_configs.py runs such a Tuner."""
    tunecore.Tuner(
        lambda config: None,
        run_config=ray_tune.RunConfig(
            name="preset",
            stop={"training_iteration": 3},
            checkpoint_config=ray_tune.CheckpointConfig(num_to_keep=1),
            failure_config=ray_train.FailureConfig(max_failures=2),
        ),
        tune_config=ray_tune.TuneConfig(metric="score", mode="min", num_samples=4),
    )
    with pytest.raises(ValueError, match=r"num_samples[\s\S]*input_value=-3"):
        tunecore.Tuner(lambda config: None, tune_config=ray_tune.TuneConfig(num_samples=-3))
