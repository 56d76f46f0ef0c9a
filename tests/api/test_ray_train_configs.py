"""tunecore's config objects converted for Ray Train's trainers
(tunecore.api.ray_train_configs), the passed-through trainer modules'
names (tunecore._ray_train_modules) and the worker-side test of
tunecore.shell.trainable.train_worker, without Ray Train: Ray Train's
classes are stood in for by `dict`, which records the keywords a
conversion gives them. tests/integrations/test_ray_train_passthrough.py
hands the converted configs to Ray Train's real trainers."""

from __future__ import annotations

import dataclasses
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
from tunecore._ray_train_names import PASSED_THROUGH as PASSED_THROUGH_NAMES
from tunecore.api.ray_train_configs import NotConvertibleError, set_fields, to_ray_train
from tunecore.model.errors import TrainOnlyFieldError
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


def test_ray_train_v2s_own_fields_reach_ray_trains_configs() -> None:
    runtime_env = {"env_vars": {"STEP": "1"}}
    logging_config = object()  # Ray Train's LoggingConfig, passed as it is
    config = tunecore.RunConfig(
        worker_runtime_env=runtime_env,
        logging_config=logging_config,
        failure_config=tunecore.FailureConfig(
            max_failures=1,
            controller_failure_limit=0,
            max_preemption_failures=2,
            relax_collectives_on_preemption=True,
            preemption_grace_s=30.0,
        ),
    )
    assert to_ray_train(config, RAY_TRAIN) == (
        "RunConfig",
        {
            "worker_runtime_env": runtime_env,
            "logging_config": logging_config,
            "failure_config": (
                "FailureConfig",
                {
                    "max_failures": 1,
                    "controller_failure_limit": 0,
                    "max_preemption_failures": 2,
                    "relax_collectives_on_preemption": True,
                    "preemption_grace_s": 30.0,
                },
            ),
        },
    )
    scaling = tunecore.ScalingConfig(
        num_workers=(2, 4),
        use_tpu=True,
        topology="2x2",
        accelerator_type="TPU-V6E",
        elastic_resize_monitor_interval_s=5.0,
    )
    assert to_ray_train(scaling, RAY_TRAIN) == (
        "ScalingConfig",
        {
            "num_workers": (2, 4),
            "use_tpu": True,
            "topology": "2x2",
            "accelerator_type": "TPU-V6E",
            "elastic_resize_monitor_interval_s": 5.0,
            # What Ray Train V2 fills in for a v6e 2x2 slice: its one host.
            "resources_per_worker": {"CPU": 1, "TPU": 4},
        },
    )
    # A label selector Ray Train takes only without TPUs (they have their own label).
    placed = tunecore.ScalingConfig(num_workers=(2, 4), label_selector=[{"zone": "a"}] * 4)
    assert to_ray_train(placed, RAY_TRAIN) == (
        "ScalingConfig",
        {"num_workers": (2, 4), "label_selector": [{"zone": "a"}] * 4},
    )


@dataclasses.dataclass
class V1FailureConfig:
    """Ray Train V1's FailureConfig (`RAY_TRAIN_V2_ENABLED=0`): no preemption fields."""

    max_failures: int = 0
    fail_fast: bool | str = False


def test_a_v2_field_under_ray_train_v1_is_refused_by_name() -> None:
    v1: Any = SimpleNamespace(FailureConfig=V1FailureConfig)
    config = tunecore.FailureConfig(max_failures=2, max_preemption_failures=1)
    with pytest.raises(NotConvertibleError, match=r"FailureConfig\(max_preemption_failures=1\)"):
        to_ray_train(config, v1)
    assert to_ray_train(tunecore.FailureConfig(max_failures=2), v1) == V1FailureConfig(2)


@pytest.mark.parametrize(
    ("run_config", "refused"),
    [
        (tunecore.RunConfig(worker_runtime_env={"pip": ["x"]}), "RunConfig(worker_runtime_env="),
        (tunecore.RunConfig(logging_config="DEBUG"), "RunConfig(logging_config='DEBUG')"),
        (
            tunecore.RunConfig(failure_config=tunecore.FailureConfig(preemption_grace_s=1.0)),
            "FailureConfig(preemption_grace_s=1.0)",
        ),
        (
            # Given, even at Ray Train's default: the script meant it for a trainer.
            tunecore.RunConfig(
                failure_config=tunecore.FailureConfig(max_failures=1, max_preemption_failures=-1)
            ),
            "FailureConfig(max_preemption_failures=-1)",
        ),
    ],
)
def test_a_tuner_refuses_the_fields_only_ray_train_reads(
    run_config: tunecore.RunConfig, refused: str
) -> None:
    with pytest.raises(TrainOnlyFieldError) as raised:
        tunecore.Tuner(_no_training, run_config=run_config)
    assert refused in str(raised.value)
    assert "only a Ray Train trainer uses" in str(raised.value)


def _no_training(config: dict[str, Any]) -> None:
    """A trainable no test runs."""


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


def test_ray_trains_examples_pass_through_beside_tunes() -> None:
    assert ray_name("tunecore.examples.pytorch.torch_linear_example") == (
        "ray.train.examples.pytorch.torch_linear_example"
    )
    # Ray Tune's example modules under tunecore.examples are tunecore's own (or refused).
    assert ray_name("tunecore.examples") is None
    assert ray_name("tunecore.examples.mnist_pytorch") is None
    assert ray_name("tunecore.examples.pytorch_lightning") is None  # not Ray Train's package
    with pytest.raises(ImportError, match=r"tunecore\.examples\.pytorch & co"):
        importlib.import_module("tunecore.examples.mnist_ptl_mini")


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


# -- Ray Train's top-level names ---------------------------------------------------------------

RAY_TRAIN_MODULE: Any = SimpleNamespace(
    DataConfig=type("DataConfig", (), {}), get_dataset_shard=lambda name=None: name
)


def test_ray_trains_names_are_ray_trains_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray.train", RAY_TRAIN_MODULE)
    imported: dict[str, Any] = {}
    exec("from tunecore import DataConfig, get_dataset_shard", imported)
    assert imported["DataConfig"] is RAY_TRAIN_MODULE.DataConfig
    assert imported["get_dataset_shard"] is RAY_TRAIN_MODULE.get_dataset_shard
    # tunecore's own names stay tunecore's.
    assert tunecore.Checkpoint.__module__.startswith("tunecore.")
    assert tunecore.report.__module__.startswith("tunecore.")


def test_ray_train_v2s_names_under_v1_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray.train", RAY_TRAIN_MODULE)  # no UserCallback
    with pytest.raises(ImportError, match=r"Ray Train V2's ray\.train\.UserCallback.*V1"):
        exec("from tunecore import UserCallback", {})


def test_ray_trains_names_without_ray_train_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray.train", None)  # an import of it fails
    with pytest.raises(
        ImportError, match=r"tunecore\.TrainingFailedError is Ray Train's.*ray\[train\]"
    ):
        exec("from tunecore import TrainingFailedError", {})


def test_no_passed_through_name_is_one_of_tunecores() -> None:
    assert not set(PASSED_THROUGH_NAMES) & set(tunecore.__all__)


# -- report's Ray Train arguments --------------------------------------------------------------


def test_report_passes_ray_trains_arguments_on_in_a_train_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[object, dict[str, object]]] = []
    worker: Any = SimpleNamespace(
        get_context=lambda: SimpleNamespace(get_world_size=lambda: 1),
        report=lambda metrics, **kwargs: calls.append((metrics, kwargs)),
    )
    monkeypatch.setitem(sys.modules, "ray.train", worker)
    tunecore.report({"loss": 1.0}, checkpoint_upload_mode="ASYNC", validation=False)
    assert calls == [
        (
            {"loss": 1.0},
            {"checkpoint": None, "checkpoint_upload_mode": "ASYNC", "validation": False},
        )
    ]


def _reports_with_an_upload_mode(config: dict[str, Any]) -> None:
    tunecore.report({"loss": 1.0}, checkpoint_upload_mode="ASYNC")


def test_a_trials_report_refuses_ray_trains_arguments(tmp_path: Path) -> None:
    run = tunecore.RunConfig(storage_path=str(tmp_path), executor="in_process", verbose=0)
    [result] = tunecore.Tuner(_reports_with_an_upload_mode, run_config=run).fit()
    assert isinstance(result.error, Exception)
    assert "report() got checkpoint_upload_mode" in str(result.error)
