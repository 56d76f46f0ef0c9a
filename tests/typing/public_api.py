"""The public API's types as a type checker sees them, msgspec's way
(`tests/typing/`): every line is an `assert_type` that fails the type
check (mypy --strict over the tests, and pyright where it is installed)
when a public name's type drifts. Nothing here runs: the functions are
type-checked only; `tests/test_public_types.py` runs a few of the same
calls for real."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, assert_type

import pandas

import tunecore
from tunecore import (
    Checkpoint,
    CheckpointConfig,
    FailureConfig,
    Result,
    ResultGrid,
    RunConfig,
    TuneConfig,
    TuneError,
    Tuner,
)
from tunecore.core.experiment import ExperimentState
from tunecore.core.search.domains import (
    Choice,
    GridSearch,
    LogRandInt,
    LogUniform,
    QLogRandInt,
    QLogUniform,
    QRandInt,
    QRandN,
    QUniform,
    RandInt,
    RandN,
    SampleFrom,
    Uniform,
)
from tunecore.model import Decision, JsonDict, JsonValue, TrialStatus
from tunecore.schedulers import ASHAScheduler
from tunecore.testing import PolicyDriver


def domains() -> None:
    assert_type(tunecore.uniform(0.0, 1.0), Uniform)
    assert_type(tunecore.quniform(0.0, 1.0, 0.1), QUniform)
    assert_type(tunecore.loguniform(1e-4, 1e-1), LogUniform)
    assert_type(tunecore.qloguniform(1e-4, 1e-1, 1e-4), QLogUniform)
    assert_type(tunecore.randn(), RandN)
    assert_type(tunecore.qrandn(0.0, 1.0, 0.5), QRandN)
    assert_type(tunecore.randint(0, 10), RandInt)
    assert_type(tunecore.qrandint(0, 10, 2), QRandInt)
    assert_type(tunecore.lograndint(1, 100), LogRandInt)
    assert_type(tunecore.qlograndint(1, 100, 2), QLogRandInt)
    assert_type(tunecore.choice([1, 2, 3]), Choice)
    assert_type(tunecore.grid_search(["a", "b"]), GridSearch)
    assert_type(tunecore.sample_from(lambda spec: 1), SampleFrom)
    assert_type(tunecore.sample_from(lambda: 1), SampleFrom)


def configs() -> None:
    tune_config = TuneConfig(metric="loss", mode="min", num_samples=4)
    assert_type(tune_config, TuneConfig)
    assert_type(tune_config.metric, str | None)
    assert_type(tune_config.num_samples, int)
    run_config = RunConfig(
        name="typed",
        checkpoint_config=CheckpointConfig(num_to_keep=2),
        failure_config=FailureConfig(max_failures=1),
    )
    assert_type(run_config, RunConfig)
    assert_type(run_config.name, str | None)
    assert_type(run_config.checkpoint_config, CheckpointConfig)
    assert_type(run_config.failure_config, FailureConfig)
    assert_type(FailureConfig().max_failures, int)
    assert_type(CheckpointConfig().num_to_keep, int | None)


def tuner(path: Path) -> None:
    def trainable(config: dict[str, object]) -> None:
        assert_type(tunecore.report({"loss": 1.0}), None)
        assert_type(tunecore.get_checkpoint(), Checkpoint | None)

    made = Tuner(trainable, param_space={"x": tunecore.uniform(0.0, 1.0)})
    assert_type(made, Tuner)
    assert_type(made.fit(), ResultGrid)
    assert_type(made.get_results(), ResultGrid)
    assert_type(Tuner.restore(str(path), trainable), Tuner)
    assert_type(Tuner.can_restore(path), bool)


def results(grid: ResultGrid) -> None:
    assert_type(len(grid), int)
    assert_type(grid[0], Result)
    assert_type(iter(grid), Iterator[Result])
    assert_type(grid.get_best_result(), Result)
    assert_type(grid.get_best_result("loss", "min", scope="last-5-avg"), Result)
    assert_type(grid.errors, list[TuneError])
    assert_type(grid.num_errors, int)
    assert_type(grid.num_terminated, int)
    assert_type(grid.get_dataframe(), pandas.DataFrame)
    assert_type(grid.metric, str | None)
    assert_type(grid.mode, Literal["min", "max"] | None)


def result(best: Result) -> None:
    assert_type(best.trial_id, str)
    assert_type(best.metrics, JsonDict)
    assert_type(best.metrics, dict[str, JsonValue])
    assert_type(best.config, dict[str, Any])  # it may hold the param space's objects
    assert_type(best.checkpoint, Checkpoint | None)
    assert_type(best.error, TuneError | None)
    assert_type(best.status, TrialStatus)
    assert_type(best.metrics_dataframe, pandas.DataFrame | None)
    assert_type(best.get_best_checkpoint("loss", "min"), Checkpoint | None)
    assert_type(best.path / "result.json", Path)
    assert_type(best.path.startswith("/"), bool)


def checkpoints(directory: Path) -> None:
    checkpoint = Checkpoint.from_directory(directory)
    assert_type(checkpoint, Checkpoint)
    assert_type(checkpoint.path, str)
    with checkpoint.as_directory() as local:
        assert_type(local, str)
    assert_type(checkpoint.to_directory(), str)


def testing_kit() -> None:
    driver = PolicyDriver(ASHAScheduler(max_t=9), metric="loss", mode="min")
    trial_id = driver.add({"x": 1})
    assert_type(trial_id, str)
    assert_type(driver.result(trial_id, loss=0.5, training_iteration=1), Decision)
    assert_type(driver.status(trial_id), TrialStatus)
    assert_type(driver.trial_ids(TrialStatus.RUNNING), list[str])
    assert_type(driver.started(), list[str])
    assert_type(driver.done, bool)
    assert_type(driver.snapshot(), bytes)
    assert_type(driver.restore(driver.snapshot()), ExperimentState)
