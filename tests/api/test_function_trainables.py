"""Function trainables written the way Ray Tune's documentation writes them,
run end to end through a Tuner on the in-process executor (no Ray)."""

from __future__ import annotations

import datetime
import json
import math
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import tunecore
from tests.integration.trainables import counts_with_temporary_checkpoints
from tunecore import CheckpointConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.model import JsonValue, TrialStatus
from tunecore.schedulers import PopulationBasedTraining
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial

LOSSES = [4.0, 1.0, 3.0, 2.0, 5.0, 6.0]


def fit(
    trainable: object,
    tmp_path: Path,
    space: dict[str, object] | None = None,
    *,
    callbacks: Sequence[Callback] = (),
    checkpoint_config: CheckpointConfig | None = None,
    stop: dict[str, float] | None = None,
    **tune: object,
) -> ResultGrid:
    run = RunConfig(
        name="fn",
        storage_path=str(tmp_path),
        verbose=0,
        executor="in_process",
        callbacks=list(callbacks),
        checkpoint_config=checkpoint_config or CheckpointConfig(),
        stop=stop,
    )
    config = TuneConfig(**tune)  # type: ignore[arg-type]
    return Tuner(trainable, param_space=space or {}, tune_config=config, run_config=run).fit()  # type: ignore[arg-type]


# -- checkpoints reported from a temporary directory (issue 9, bug 1) --------


def test_a_temporary_checkpoint_survives_pbt_saves_and_exploits(tmp_path: Path) -> None:
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=3,  # odd: PBT saves at steps that reported no checkpoint
        hyperparam_mutations={"rate": [0.5, 1.0, 2.0]},
        quantile_fraction=0.5,
        seed=1,
    )
    results = fit(
        counts_with_temporary_checkpoints,
        tmp_path,
        {"rate": tunecore.grid_search([0.5, 1.0, 2.0, 3.0])},
        metric="score",
        mode="max",
        scheduler=pbt,
    )
    assert [r.error for r in results] == [None] * 4
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 4
    assert {r.metrics["step"] for r in results} == {8}


def test_a_temporary_checkpoint_survives_checkpoint_frequency(tmp_path: Path) -> None:
    results = fit(
        counts_with_temporary_checkpoints,
        tmp_path,
        {"rate": 1.0},
        checkpoint_config=CheckpointConfig(checkpoint_frequency=1),
    )
    [result] = results
    assert result.error is None
    assert result.checkpoint is not None
    with result.checkpoint.as_directory() as directory:
        assert (Path(directory) / "step.txt").read_text() == "8"
    # The save at step 7 holds the checkpoint reported at step 6.
    saved = Path(result.path) / "checkpoint_000007" / "step.txt"
    assert saved.read_text() == "6"


def test_only_the_latest_reported_checkpoint_is_kept_in_the_trial(tmp_path: Path) -> None:
    kept: list[list[str]] = []

    def reports_many(config: dict[str, object]) -> None:
        scratch = Path(tunecore.get_context().trial_dir) / "worker_checkpoints"
        for step in range(5):
            with tempfile.TemporaryDirectory() as directory:
                (Path(directory) / "step.txt").write_text(str(step))
                tunecore.report(
                    {"step": step}, checkpoint=tunecore.Checkpoint.from_directory(directory)
                )
            # The copies are in this worker's own part of the trial's scratch.
            kept.append(
                sorted(str(copy) for worker in scratch.iterdir() for copy in worker.iterdir())
            )

    [result] = fit(reports_many, tmp_path)
    assert result.error is None
    assert [len(names) for names in kept] == [1] * 5
    assert len(set(map(tuple, kept))) == 5  # a fresh copy each time, the old one deleted


# -- the final result of a function that returns (issue 9, bug 6) -------------


def reports_losses(config: dict[str, object]) -> None:
    for loss in LOSSES:
        tunecore.report({"loss": loss})


class CountsResults(Callback):
    def __init__(self) -> None:
        self.results: list[Mapping[str, JsonValue]] = []

    def on_trial_result(
        self,
        iteration: int,
        trials: Sequence[Trial],
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        self.results.append(result)


def test_the_end_of_a_function_is_not_counted_as_a_result(tmp_path: Path) -> None:
    counter = CountsResults()
    results = fit(reports_losses, tmp_path, metric="loss", mode="min", callbacks=[counter])
    [result] = results
    assert result.status is TrialStatus.TERMINATED
    assert result.metric_analysis["loss"].avg == pytest.approx(3.5)
    assert result.metric_analysis["training_iteration"].avg == pytest.approx(3.5)
    assert [r["loss"] for r in counter.results] == LOSSES
    assert result.metrics["loss"] == 6.0
    assert result.metrics["training_iteration"] == 6
    assert result.metrics["done"] is True
    assert "__duplicate__" not in result.metrics
    assert "__duplicate__" not in results.get_dataframe().columns
    rows = (Path(result.path) / "result.json").read_text().splitlines()
    assert [json.loads(row)["loss"] for row in rows] == LOSSES
    assert results.get_best_result(scope="avg").metrics["loss"] == 6.0


def test_a_returned_dict_is_the_last_result(tmp_path: Path) -> None:
    def returns_its_last(config: dict[str, object]) -> dict[str, float]:
        tunecore.report({"loss": 2.0})
        tunecore.report({"loss": 1.0})
        return {"loss": 0.5}

    counter = CountsResults()
    [result] = fit(returns_its_last, tmp_path, metric="loss", mode="min", callbacks=[counter])
    assert result.status is TrialStatus.TERMINATED
    assert [r["loss"] for r in counter.results] == [2.0, 1.0, 0.5]
    assert result.metrics["loss"] == 0.5
    assert result.metrics["training_iteration"] == 3
    assert result.metrics["done"] is True


def test_a_returned_number_is_reported_as_the_default_metric(tmp_path: Path) -> None:
    def returns_a_number(config: dict[str, object]) -> float:
        return 0.25

    [result] = fit(returns_a_number, tmp_path)
    assert result.status is TrialStatus.TERMINATED
    assert result.metrics["_metric"] == 0.25


def test_a_function_that_reports_nothing_ends_without_results(tmp_path: Path) -> None:
    def reports_nothing(config: dict[str, object]) -> None:
        pass

    counter = CountsResults()
    results = fit(
        reports_nothing, tmp_path, {"x": tunecore.grid_search([1, 2])}, callbacks=[counter]
    )
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 2
    assert [r.error for r in results] == [None, None]
    assert counter.results == []
    assert [r.metrics for r in results] == [{}, {}]


# -- results that are not JSON ------------------------------------------------


class Opaque:
    def __str__(self) -> str:
        return "<opaque>"


def test_values_that_are_not_json_are_recorded_as_ray_logs_them(tmp_path: Path) -> None:
    """While the driver lives, `Result.metrics` holds the objects reported,
    as Ray's does; the log and the result files their JSON form, which a
    read from the directory gives."""
    numpy = pytest.importorskip("numpy")
    when = datetime.datetime(2024, 5, 17, 12, 30, tzinfo=datetime.UTC)
    vector = numpy.array([1.0, 2.0])

    def reports_objects(config: dict[str, object]) -> None:
        tunecore.report(
            {
                "loss": numpy.float32(0.5),
                "count": numpy.int64(3),
                "flag": numpy.bool_(True),
                "vector": vector,
                "nan": numpy.float64("nan"),
                "when": when,
                "where": Path("/data/set"),
                "what": Opaque(),
                "nested": {"matrix": numpy.eye(2, dtype=int), "pair": (1, numpy.int8(2))},
            }
        )

    [result] = fit(reports_objects, tmp_path, metric="loss", mode="min")
    assert result.error is None
    live: dict[str, Any] = result.metrics  # the objects reported, beside JSON values
    assert type(live["loss"]) is numpy.float32
    assert live["vector"] is vector  # in process: the very object
    assert live["when"] == when
    assert live["nested"]["pair"] == (1, 2)
    [metrics] = [r.metrics for r in ResultGrid.from_path(Path(result.path).parent)]
    assert metrics["loss"] == 0.5
    assert type(metrics["loss"]) is float
    assert metrics["count"] == 3
    assert type(metrics["count"]) is int
    assert metrics["flag"] is True
    assert metrics["vector"] == [1.0, 2.0]
    assert isinstance(metrics["nan"], float)
    assert math.isnan(metrics["nan"])
    assert metrics["when"] == str(when)
    assert metrics["where"] == "/data/set"
    assert metrics["what"] == "<opaque>"
    assert metrics["nested"] == {"matrix": [[1, 0], [0, 1]], "pair": [1, 2]}
    [row] = (Path(result.path) / "result.json").read_text().splitlines()
    recorded = json.loads(row)
    assert recorded["when"] == str(when)
    assert recorded["vector"] == [1.0, 2.0]
    assert recorded["what"] == "<opaque>"


# -- what the trial directory keeps --------------------------------------------


def test_no_worker_checkpoints_are_left_in_trial_directories(tmp_path: Path) -> None:
    results = fit(
        counts_with_temporary_checkpoints,
        tmp_path,
        {"rate": tunecore.grid_search([1.0, 2.0])},
        checkpoint_config=CheckpointConfig(checkpoint_frequency=3),
    )
    assert [r.error for r in results] == [None, None]
    for result in results:
        assert not (Path(result.path) / "worker_checkpoints").exists()


# -- a training_iteration the function reports itself (Ray's result.setdefault) --


def counts_in_tens(config: dict[str, Any]) -> None:
    for step in range(1, 9):
        tunecore.report({"training_iteration": 10 * step, "loss": config["a"] / step})


def test_a_reported_training_iteration_is_what_stop_and_asha_decide_on(tmp_path: Path) -> None:
    from tunecore.schedulers import ASHAScheduler  # noqa: PLC0415

    stopped = fit(counts_in_tens, tmp_path / "stop", {"a": 1.0}, stop={"training_iteration": 30})[0]
    frame = stopped.metrics_dataframe
    assert frame is not None
    assert list(frame["training_iteration"]) == [10, 20, 30]
    assert stopped.metrics["iterations_since_restore"] == 3
    rows = (Path(stopped.path) / "result.json").read_text().splitlines()
    assert [json.loads(row)["training_iteration"] for row in rows] == [10, 20, 30]

    asha = ASHAScheduler(grace_period=10, max_t=40)
    results = fit(
        counts_in_tens,
        tmp_path / "asha",
        {"a": tunecore.grid_search([1.0, 2.0])},
        metric="loss",
        mode="min",
        scheduler=asha,
    )
    lasts = [result.metrics["training_iteration"] for result in results]
    assert 40 in lasts, lasts  # max_t on the function's counter, reached at its fourth result
    assert set(lasts) <= {10, 20, 30, 40}, lasts  # stopped at a rung or max_t, never past


def test_a_checkpoint_at_a_negative_reported_iteration_is_saved(tmp_path: Path) -> None:
    def counts_down(config: dict[str, Any]) -> None:
        for step in range(2):
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "state").write_text(str(step))
                tunecore.report(
                    {"training_iteration": -1, "step": step},
                    checkpoint=tunecore.Checkpoint.from_directory(directory),
                )

    (result,) = fit(counts_down, tmp_path)
    assert result.error is None
    assert result.metrics["training_iteration"] == -1
    assert result.checkpoint is not None
    assert Path(result.checkpoint.path, "state").read_text() == "1"
    assert sorted(p.name for p in Path(result.path).glob("checkpoint_*")) == [
        "checkpoint_000000",
        "checkpoint_000000_1",
    ]
