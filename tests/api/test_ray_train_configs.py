"""tunecore's config objects converted for Ray Train's trainers
(tunecore.api.ray_train_configs), the passed-through trainer modules'
names (tunecore._ray_train_modules) and the worker-side test of
tunecore.shell.trainable.train_worker, without Ray Train: Ray Train's
classes are stood in for by `dict`, which records the keywords a
conversion gives them. tests/integrations/test_ray_train_passthrough.py
hands the converted configs to Ray Train's real trainers."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tunecore
from tunecore._ray_train_modules import PASSED_THROUGH, ray_name, tunecore_name
from tunecore.api.ray_train_configs import NotConvertibleError, set_fields, to_ray_train
from tunecore.shell.trainable.train_worker import ray_train_worker

# Ray Train's classes, each recording the keywords it was made with.
RAY_TRAIN: Any = SimpleNamespace(
    ScalingConfig=lambda **kw: ("ScalingConfig", kw),
    RunConfig=lambda **kw: ("RunConfig", kw),
    FailureConfig=lambda **kw: ("FailureConfig", kw),
    CheckpointConfig=lambda **kw: ("CheckpointConfig", kw),
    SyncConfig=lambda **kw: ("SyncConfig", kw),
    Checkpoint=lambda path, filesystem: ("Checkpoint", path, filesystem),
)


def test_a_run_config_keeps_every_field_set_and_converts_the_nested_ones(tmp_path: Path) -> None:
    callback = tunecore.Callback()
    config = tunecore.RunConfig(
        name="train-trial_id=1",
        storage_path=str(tmp_path),
        callbacks=[callback],
        failure_config=tunecore.FailureConfig(max_failures=3),
        checkpoint_config=tunecore.CheckpointConfig(num_to_keep=2),
    )
    assert to_ray_train(config, RAY_TRAIN) == (
        "RunConfig",
        {
            "name": "train-trial_id=1",
            "storage_path": str(tmp_path),
            "callbacks": [callback],
            "failure_config": ("FailureConfig", {"max_failures": 3}),
            "checkpoint_config": ("CheckpointConfig", {"num_to_keep": 2}),
        },
    )


def test_tunecores_defaults_stay_out_of_ray_trains_configs() -> None:
    # tunecore's CheckpointConfig scores by training_iteration unless told; Ray Train's by nothing.
    assert to_ray_train(tunecore.RunConfig(), RAY_TRAIN) == ("RunConfig", {})
    assert to_ray_train(tunecore.CheckpointConfig(), RAY_TRAIN) == ("CheckpointConfig", {})
    assert to_ray_train(tunecore.ScalingConfig(), RAY_TRAIN) == ("ScalingConfig", {})


def test_a_scaling_config_keeps_the_fields_that_differ_from_rays_defaults() -> None:
    config = tunecore.ScalingConfig(
        num_workers=4, use_gpu=True, resources_per_worker={"CPU": 2, "GPU": 1}
    )
    assert to_ray_train(config, RAY_TRAIN) == (
        "ScalingConfig",
        {"num_workers": 4, "use_gpu": True, "resources_per_worker": {"CPU": 2, "GPU": 1}},
    )


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "num_to_keep": st.integers(1, 5),
            "checkpoint_score_attribute": st.sampled_from(["loss", "training_iteration"]),
            "checkpoint_score_order": st.sampled_from(["min", "max"]),
            "checkpoint_frequency": st.integers(0, 3),
            "checkpoint_at_end": st.booleans(),
        },
    )
)
def test_a_checkpoint_config_converts_with_exactly_the_fields_given(fields: dict[str, Any]) -> None:
    # Given fields pass even when they equal tunecore's default: Ray Train's may differ.
    assert to_ray_train(tunecore.CheckpointConfig(**fields), RAY_TRAIN) == (
        "CheckpointConfig",
        fields,
    )


def test_a_field_only_tunecore_has_is_refused_by_name() -> None:
    config = tunecore.RunConfig(name="run", executor="in_process", fsync_interval_ms=0)
    with pytest.raises(NotConvertibleError) as raised:
        to_ray_train(config, RAY_TRAIN)
    message = str(raised.value)
    assert "RunConfig(executor='in_process', fsync_interval_ms=0)" in message
    assert "ray.train.RunConfig has no such field" in message


def test_a_checkpoint_becomes_ray_trains_of_the_same_directory(tmp_path: Path) -> None:
    checkpoint = tunecore.Checkpoint.from_directory(tmp_path)
    assert to_ray_train(checkpoint, RAY_TRAIN) == ("Checkpoint", str(tmp_path), None)


def test_other_arguments_pass_as_they_are() -> None:
    loop_config = {"lr": 0.1}
    assert to_ray_train(loop_config, RAY_TRAIN) is loop_config
    assert to_ray_train(None, RAY_TRAIN) is None


def test_set_fields_of_a_pydantic_config_are_the_given_ones() -> None:
    assert set_fields(tunecore.FailureConfig(max_failures=0)) == {"max_failures": 0}


# -- the passed-through modules' names ---------------------------------------------------------


@pytest.mark.parametrize("module", sorted(PASSED_THROUGH))
def test_each_passed_through_module_is_ray_trains_of_the_same_name(module: str) -> None:
    assert ray_name(f"tunecore.{module}") == f"ray.train.{module}"
    assert ray_name(f"tunecore.{module}.sub.deeper") == f"ray.train.{module}.sub.deeper"
    assert tunecore_name(f"ray.train.{module}.sub") == f"tunecore.{module}.sub"


def test_tunecores_own_modules_are_not_passed_through() -> None:
    # Ray Tune's callbacks for the boosting libraries are not Ray Train's modules of that name.
    assert ray_name("tunecore.integration.xgboost") is None
    assert ray_name("tunecore.trainable") is None
    assert ray_name("tunecore") is None
    for module in PASSED_THROUGH:
        assert importlib.util.find_spec(f"tunecore.{module}").loader.__class__.__name__ == (  # type: ignore[union-attr]
            "_PassThroughLoader"
        ), f"tunecore.{module} is a module of tunecore's own"


def test_a_framework_that_cannot_be_imported_is_named_with_what_to_install() -> None:
    # Horovod is installed nowhere tunecore's tests run (Ray Train may not be either).
    with pytest.raises(ImportError, match=r"pip install 'ray\[train\]' horovod") as raised:
        importlib.import_module("tunecore.horovod")
    assert "tunecore.horovod is Ray Train's ray.train.horovod" in str(raised.value)
    assert "tunecore.horovod" not in sys.modules


# -- a Ray Train worker told apart -------------------------------------------------------------


def _refuse_outside_a_worker() -> None:
    raise RuntimeError("`get_context` cannot be used outside of a Ray Train training function")


def test_only_a_process_where_ray_train_has_a_context_is_a_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "ray.train", raising=False)
    assert ray_train_worker() is None  # Ray Train not even loaded
    outside = SimpleNamespace(get_context=_refuse_outside_a_worker)
    monkeypatch.setitem(sys.modules, "ray.train", outside)
    assert ray_train_worker() is None
    inside: Any = SimpleNamespace(get_context=lambda: SimpleNamespace(get_world_size=lambda: 2))
    monkeypatch.setitem(sys.modules, "ray.train", inside)
    assert ray_train_worker() is inside


def _v1_world_size_outside_a_worker() -> None:
    warnings.warn("`get_world_size` is meant to only be called inside a Trainer", stacklevel=1)


def test_ray_train_v1_outside_a_worker_is_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # V1's get_context() answers everywhere; its world size is None (warned) outside a worker.
    context = SimpleNamespace(get_world_size=_v1_world_size_outside_a_worker)
    v1 = SimpleNamespace(get_context=lambda: context)
    monkeypatch.setitem(sys.modules, "ray.train", v1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the check keeps V1's warning to itself
        assert ray_train_worker() is None
