"""`tunecore.integration.ray_train`: Ray Train (V2) runs launched from
trials, as Ray 2.60's docs tune them (a function trainable builds a
`TorchTrainer` with a `TuneReportCallback` and calls `fit()`), on Ray's
executor: each Train report is a result of the trial, with the checkpoint's
path; ASHA's stops abort the Train run (its worker ends, though the
trial's actor lives on); a failed Train run fails its trial, keeping what
it reported.

Runs where torch is installed (`./dev nox -s frameworks`); skipped
elsewhere. Each trial reserves half a CPU for its Train driver and its one
Train worker half a CPU, so trials fit on the session's 2-CPU Ray."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import cloudpickle
import psutil  # type: ignore[import-untyped]
import pytest

import tunecore
from tunecore.model import TrialStatus
from tunecore.schedulers import ASHAScheduler

pytest.importorskip("torch", reason="Ray Train's TorchTrainer needs torch (./dev frameworks)")
import ray.train
import ray.train.torch

from tunecore.integration.ray_train import CHECKPOINT_PATH_KEY, TuneReportCallback

STEPS = 50  # more than any trial here may train: a stopped run that went on shows
CHECKPOINT_STEP = 2


def train_fn_per_worker(config: dict[str, Any]) -> None:
    """Ray Train worker code: a loss falling with `lr`'s offset, a
    checkpoint at `CHECKPOINT_STEP`, a failure at `fail_at`; in `marks` its
    process id, and a mark once all `STEPS` ran."""
    marks = Path(config["marks"])
    (marks / f"worker-pid-{config['lr']}").write_text(str(os.getpid()))
    for step in range(1, STEPS + 1):
        if step == config.get("fail_at"):
            raise ValueError(f"the worker failed at step {step}")
        metrics = {"loss": config["lr"] * 10 + 1 / step, "step": step}
        if step == CHECKPOINT_STEP:
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "step.txt").write_text(str(step))
                checkpoint = ray.train.Checkpoint.from_directory(directory)
                ray.train.report(metrics, checkpoint=checkpoint)
        else:
            ray.train.report(metrics)
    (marks / f"finished-{config['lr']}").touch()


def earlier_workers_ended(marks: Path) -> None:
    """Mark which earlier trials' Train workers had ended (or are still
    alive two minutes on): they ran one at a time in this same process, so
    only their abort can have ended them."""
    for pid_file in marks.glob("worker-pid-*"):
        lr = pid_file.name.removeprefix("worker-pid-")
        try:
            psutil.Process(int(pid_file.read_text())).wait(timeout=120)
        except psutil.NoSuchProcess:
            pass
        except psutil.TimeoutExpired:
            (marks / f"alive-{lr}").touch()
            continue
        (marks / f"ended-{lr}").touch()


def train_driver_fn(config: dict[str, Any]) -> None:
    marks = Path(config["train_loop_config"]["marks"])
    (marks / f"driver-pid-{config['train_loop_config']['lr']}").write_text(str(os.getpid()))
    earlier_workers_ended(marks)
    trainer = ray.train.torch.TorchTrainer(
        train_fn_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=ray.train.ScalingConfig(num_workers=1, resources_per_worker={"CPU": 0.5}),
        run_config=ray.train.RunConfig(
            name=f"train-trial_id={tunecore.get_context().get_trial_id()}",
            storage_path=config["train_storage"],
            # Ray's annotations are Train V1's (ray.train picks V2 at import).
            callbacks=[TuneReportCallback()],  # type: ignore[list-item]
        ),
    )
    trainer.fit()


def worker_config(result: tunecore.Result) -> dict[str, Any]:
    config = result.config["train_loop_config"]
    assert isinstance(config, dict)
    return config


def rows(result: tunecore.Result) -> list[dict[str, Any]]:
    assert result.path is not None
    lines = Path(result.path, "result.json").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # three Train runs one after another, each starting its worker
@pytest.mark.usefixtures("ray_cluster")
def test_train_runs_report_to_their_trials_and_asha_stops_abort_them(tmp_path: Path) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers lack tests/
    marks = tmp_path / "marks"
    marks.mkdir()
    # One trial at a time, so ASHA's decisions are fixed: the first trains
    # to max_t, the second is worse at the first rung, the third (best so
    # far) fails before its second rung.
    configs = [{"lr": 0.01}, {"lr": 0.5}, {"lr": 0.001, "fail_at": 3}]
    grid = tunecore.Tuner(
        tunecore.with_resources(train_driver_fn, {"CPU": 0.5}),
        param_space={
            "train_loop_config": tunecore.grid_search(
                [{**config, "marks": str(marks)} for config in configs]
            ),
            "train_storage": str(tmp_path / "train"),
        },
        tune_config=tunecore.TuneConfig(
            metric="loss",
            mode="min",
            max_concurrent_trials=1,
            reuse_actors=True,
            scheduler=ASHAScheduler(max_t=4, grace_period=2, reduction_factor=2),
        ),
        run_config=tunecore.RunConfig(name="train", storage_path=str(tmp_path / "tune"), verbose=0),
    ).fit()
    by_lr = {worker_config(result)["lr"]: result for result in grid}
    first, second, failed = (by_lr[config["lr"]] for config in configs)

    # ASHA stopped the first at max_t and the second at its first rung.
    assert (first.metrics["training_iteration"], second.metrics["training_iteration"]) == (4, 2)
    for stopped in (first, second):
        assert stopped.status is TrialStatus.TERMINATED
        assert stopped.error is None
        assert [row["step"] for row in rows(stopped)] == list(range(1, len(rows(stopped)) + 1))
    # Each stop aborted its Train run: the worker ended before its last step,
    # while the trials' one actor lived on (one process ran every driver).
    assert len({(marks / f"driver-pid-{c['lr']}").read_text() for c in configs}) == 1
    assert {m.name for m in marks.glob("ended-*")} == {"ended-0.01", "ended-0.5"}
    assert not [*marks.glob("alive-*"), *marks.glob("finished-*")]

    # Rank 0's metrics; the result with the Train checkpoint has its path.
    logged = rows(first)
    assert [CHECKPOINT_PATH_KEY in row for row in logged] == [False, True, False, False]
    checkpoint_path = logged[CHECKPOINT_STEP - 1][CHECKPOINT_PATH_KEY]
    assert Path(checkpoint_path, "step.txt").read_text() == str(CHECKPOINT_STEP)
    assert Path(checkpoint_path).is_relative_to(tmp_path / "train")
    assert first.checkpoint is None  # Ray Train keeps the checkpoint, as in Ray Tune
    assert first.metrics["loss"] == pytest.approx(0.01 * 10 + 1 / 4)

    # The failed run fails its trial, with Ray Train's error and its results kept.
    assert failed.status is TrialStatus.ERROR
    assert "the worker failed at step 3" in str(failed.error)
    assert [row["step"] for row in rows(failed)] == [1, 2]


def test_outside_a_trial_the_callback_raises_rays_error() -> None:
    with pytest.raises(RuntimeError, match="TuneReportCallback must be used in a Tune session"):
        TuneReportCallback()


def test_a_tuner_refuses_a_trainer_naming_the_documented_pattern() -> None:
    trainer = ray.train.torch.TorchTrainer(
        train_fn_per_worker, scaling_config=ray.train.ScalingConfig(num_workers=1)
    )
    with pytest.raises(TypeError, match="is a Ray Train trainer") as refused:
        tunecore.Tuner(trainer, param_space={"train_loop_config": {"lr": 0.1}})  # type: ignore[arg-type]
    assert "run_config=ray.train.RunConfig(callbacks=[TuneReportCallback()])" in str(refused.value)


def test_a_tunecore_config_given_to_a_trainer_is_rays_error_naming_it() -> None:
    # A script whose `from ray.train import RunConfig, ScalingConfig` was
    # rewritten to tunecore's: Ray's trainer names the class and what to use.
    with pytest.raises(ValueError, match=r"tunecore\..*Use `ray.train.ScalingConfig` instead"):
        ray.train.torch.TorchTrainer(
            train_fn_per_worker,
            scaling_config=tunecore.ScalingConfig(num_workers=1),  # type: ignore[arg-type]
        )
    with pytest.raises(ValueError, match=r"tunecore\..*Use `ray.train.RunConfig` instead"):
        ray.train.torch.TorchTrainer(
            train_fn_per_worker,
            run_config=tunecore.RunConfig(),  # type: ignore[arg-type]
        )
