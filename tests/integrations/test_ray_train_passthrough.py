"""Ray Train's trainers under a script's rewritten imports: `tunecore.torch`
is Ray Train's `ray.train.torch` passed through, its `TorchTrainer` takes
tunecore's `ScalingConfig`/`RunConfig` (converted to Ray Train's with every
field the user set), and in the Train workers `tunecore.report`,
`get_context` and `get_checkpoint` are Ray Train's, with tunecore's
`Checkpoint` converted both ways.

Runs where torch is installed (`./dev nox -s frameworks`); skipped
elsewhere. tests/api/test_ray_train_configs.py tests the conversion
without Ray Train."""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import cloudpickle
import pytest

import tunecore
from tunecore.api.ray_train_configs import NotConvertibleError

pytest.importorskip("torch", reason="Ray Train's TorchTrainer needs torch (./dev frameworks)")
import ray.train
import ray.train.torch

# Ray Train's ray.train.torch, as a script's `import tunecore.torch` gets it.
passed_torch: Any = importlib.import_module("tunecore.torch")
# tunecore, whose Ray Train names (`rewritten.DataConfig`) type checkers do not see.
rewritten: Any = tunecore


class Recorder(ray.train.UserCallback):
    """A Ray Train callback, to see it reach the trainer's RunConfig."""


def no_training(config: dict[str, Any]) -> None:
    """A train function the tests that do not fit never run."""


def test_the_trainer_takes_tunecores_configs_as_ray_trains(tmp_path: Path) -> None:
    callback = Recorder()
    trainer = passed_torch.TorchTrainer(
        no_training,
        train_loop_config={"lr": 0.1},
        scaling_config=tunecore.ScalingConfig(num_workers=2, resources_per_worker={"CPU": 0.5}),
        run_config=tunecore.RunConfig(
            name="train-run",
            storage_path=str(tmp_path),
            callbacks=[callback],
            failure_config=tunecore.FailureConfig(max_failures=2),
            checkpoint_config=tunecore.CheckpointConfig(
                num_to_keep=1, checkpoint_score_attribute="loss", checkpoint_score_order="min"
            ),
        ),
    )
    assert isinstance(trainer, ray.train.torch.TorchTrainer)
    assert trainer.scaling_config == ray.train.ScalingConfig(
        num_workers=2, resources_per_worker={"CPU": 0.5}
    )
    run_config = trainer.run_config
    assert isinstance(run_config, ray.train.RunConfig)
    assert (run_config.name, run_config.storage_path) == ("train-run", str(tmp_path))
    callbacks: list[object] = list(run_config.callbacks or [])  # typed as Train V1's
    assert callbacks == [callback]
    assert run_config.failure_config == ray.train.FailureConfig(max_failures=2)
    assert run_config.checkpoint_config == ray.train.CheckpointConfig(
        num_to_keep=1, checkpoint_score_attribute="loss", checkpoint_score_order="min"
    )


def test_a_field_ray_train_does_not_have_is_refused_naming_it() -> None:
    with pytest.raises(NotConvertibleError, match=r"RunConfig\(executor='in_process'\)"):
        passed_torch.TorchTrainer(no_training, run_config=tunecore.RunConfig(executor="in_process"))


def test_ray_trains_own_refusals_stay_its_own() -> None:
    # Ray Train V2 refuses Tune's RunConfig fields, as it does on Ray.
    with pytest.raises(DeprecationWarning, match="verbose"):
        passed_torch.TorchTrainer(no_training, run_config=tunecore.RunConfig(verbose=0))


def test_the_passed_through_module_is_ray_trains() -> None:
    assert passed_torch.prepare_model is ray.train.torch.prepare_model
    assert passed_torch.get_device is ray.train.torch.get_device
    assert set(passed_torch.__all__) == set(ray.train.torch.__all__)
    # Pickled by reference, as Ray ships a class: the same class comes back.
    assert cloudpickle.loads(cloudpickle.dumps(passed_torch.TorchTrainer)) is (
        passed_torch.TorchTrainer
    )
    callback_module = importlib.import_module("tunecore.v2.api.callback")
    assert callback_module.UserCallback is ray.train.UserCallback
    # A submodule reached as an attribute is the passed-through one too.
    assert passed_torch.torch_trainer is sys.modules["tunecore.torch.torch_trainer"]
    with pytest.raises(AttributeError, match=r"tunecore\.torch"):
        _ = passed_torch.NoSuchTrainer


def test_xgboost_is_ray_trains_and_tunes_callbacks_stay_apart() -> None:
    pytest.importorskip("xgboost")
    import ray.train.xgboost  # noqa: PLC0415 - needs xgboost

    import tunecore.integration.xgboost  # noqa: PLC0415

    passed_xgboost: Any = importlib.import_module("tunecore.xgboost")
    assert passed_xgboost.RayTrainReportCallback is ray.train.xgboost.RayTrainReportCallback
    assert issubclass(passed_xgboost.XGBoostTrainer, ray.train.xgboost.XGBoostTrainer)
    assert tunecore.integration.xgboost.TuneReportCheckpointCallback.__module__.startswith(
        "tunecore.integration"
    )


def reporting_worker(config: dict[str, Any]) -> None:
    """Ray Train worker code written with rewritten imports: Ray Train's
    context and checkpoint through tunecore's calls."""
    context = tunecore.get_context()
    restored = tunecore.get_checkpoint()
    seen = None
    if restored is not None:
        assert isinstance(restored, tunecore.Checkpoint), restored
        with restored.as_directory() as directory:
            seen = Path(directory, "step.txt").read_text()
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "step.txt").write_text(config["step"])
        tunecore.report(
            {"world": context.get_world_size(), "rank": context.get_world_rank(), "seen": seen},
            checkpoint=tunecore.Checkpoint.from_directory(directory),
        )


@pytest.mark.slow
@pytest.mark.timeout(900)  # two Train runs, each starting its worker
@pytest.mark.usefixtures("ray_cluster")
def test_worker_calls_are_ray_trains_with_checkpoints_converted(tmp_path: Path) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers lack tests/

    def fit(step: str) -> Any:  # Train V2's Result
        # The same (storage_path, name): Ray Train resumes from the run's latest checkpoint.
        return passed_torch.TorchTrainer(
            reporting_worker,
            train_loop_config={"step": step},
            scaling_config=tunecore.ScalingConfig(num_workers=1, resources_per_worker={"CPU": 1}),
            run_config=tunecore.RunConfig(name="run", storage_path=str(tmp_path)),
        ).fit()

    first = fit("1")
    assert first.metrics == {"world": 1, "rank": 0, "seen": None}
    assert first.checkpoint is not None
    assert first.checkpoint.path.startswith(str(tmp_path / "run"))
    assert Path(first.checkpoint.path, "step.txt").read_text() == "1"

    # The worker's tunecore.get_checkpoint() is that checkpoint, as tunecore's.
    second = fit("2")
    assert second.metrics == {"world": 1, "rank": 0, "seen": "1"}
    assert Path(second.checkpoint.path, "step.txt").read_text() == "2"


# -- Ray Train's top-level names and V2's config fields ----------------------------------------


def test_every_name_of_ray_train_is_tunecores_or_ray_trains() -> None:
    """Each of Ray 2.60's `ray.train.__all__` (and `ray.air.__all__`), as a
    rewritten `from ray.train import X` gets it: tunecore's own where
    tunecore has the name, else Ray's object itself; only `ray.air`'s
    resource-layer classes are refused."""
    import ray.air  # noqa: PLC0415 - loaded with ray.train

    own = set(tunecore.__all__)
    for module in (ray.train, ray.air):
        for name in module.__all__:
            if name in {"AcquiredResources", "ResourceRequest"}:
                with pytest.raises(ImportError, match=r"tunecore\.with_resources"):
                    exec(f"from tunecore import {name}", {})
                continue
            imported: dict[str, Any] = {}
            exec(f"from tunecore import {name}", imported)
            if name in own:
                assert imported[name] is not getattr(module, name), name
            else:
                assert imported[name] is getattr(module, name), name


def test_ray_trains_example_is_ray_trains_module() -> None:
    import ray.train.examples.pytorch.torch_linear_example as ray_example  # noqa: PLC0415

    example: Any = importlib.import_module("tunecore.examples.pytorch.torch_linear_example")
    assert example.train_func is ray_example.train_func
    assert example.LinearDataset is ray_example.LinearDataset


class ReportsToAFile(ray.train.UserCallback):
    """Writes each report's rank-0 metrics where the test reads them (the
    callback runs in Ray Train's controller, another process)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def after_report(self, run_context: Any, metrics: Any, checkpoint: Any) -> None:
        with self.path.open("a") as out:
            out.write(f"{metrics[0]['rows']} {metrics[0]['step']}\n")


def reading_its_shard(config: dict[str, Any]) -> None:
    """A Ray Train worker reading its dataset shard through the rewritten
    names, in a worker whose environment Ray Train V2's
    `worker_runtime_env` set."""
    shard = rewritten.get_dataset_shard("train")
    rows = sum(len(batch["x"]) for batch in shard.iter_batches(batch_size=4))
    tunecore.report(
        {"rows": rows, "step": os.environ["STEP"]},
        checkpoint_upload_mode=rewritten.CheckpointUploadMode.SYNC,
    )


@pytest.mark.slow
@pytest.mark.timeout(900)  # a Train run with Ray Data
@pytest.mark.usefixtures("ray_cluster")
def test_ray_trains_names_and_v2_fields_reach_a_train_run(tmp_path: Path) -> None:
    import ray.data  # noqa: PLC0415 - Ray Data, with Ray Train

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers lack tests/
    reports = tmp_path / "reports.txt"
    trainer = passed_torch.TorchTrainer(
        reading_its_shard,
        datasets={"train": ray.data.from_items([{"x": x} for x in range(10)])},
        dataset_config=rewritten.DataConfig(datasets_to_split=["train"]),
        scaling_config=tunecore.ScalingConfig(num_workers=1, resources_per_worker={"CPU": 1}),
        run_config=tunecore.RunConfig(
            name="data-run",
            storage_path=str(tmp_path),
            callbacks=[ReportsToAFile(reports)],
            worker_runtime_env={"env_vars": {"STEP": "7"}},
            logging_config=rewritten.LoggingConfig(log_level="WARNING"),
            failure_config=tunecore.FailureConfig(max_failures=1, max_preemption_failures=2),
        ),
    )
    assert trainer.run_config.failure_config.max_preemption_failures == 2
    result = trainer.fit()
    assert result.error is None
    # Ray Train V2's Result holds the metrics of a checkpoint; the callback saw the report.
    assert reports.read_text() == "10 7\n"


def failing_worker(config: dict[str, Any]) -> None:
    raise ValueError("the worker fails")


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.usefixtures("ray_cluster")
def test_a_failed_train_run_raises_ray_trains_error_under_its_rewritten_name(
    tmp_path: Path,
) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    trainer = passed_torch.TorchTrainer(
        failing_worker,
        scaling_config=tunecore.ScalingConfig(num_workers=1, resources_per_worker={"CPU": 1}),
        run_config=tunecore.RunConfig(name="failing", storage_path=str(tmp_path)),
    )
    with pytest.raises(rewritten.TrainingFailedError, match="the worker fails"):
        trainer.fit()
