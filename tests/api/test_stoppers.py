"""Stopping trials and experiments through `RunConfig(stop=...)`, end to end
on the in-process executor, as a Ray Tune user writes it."""

from __future__ import annotations

from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.api.results import ResultGrid


def _fit(trainable: object, tmp_path: Path, stop: object, **tune: object) -> ResultGrid:
    run = RunConfig(
        name="stoppers",
        storage_path=str(tmp_path),
        verbose=0,
        executor="in_process",
        stop=stop,  # type: ignore[arg-type]
    )
    return Tuner(
        trainable,  # type: ignore[arg-type]
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=TuneConfig(**tune),  # type: ignore[arg-type]
        run_config=run,
    ).fit()


def reports_done_at_three(config: dict[str, object]) -> None:
    for i in range(10):
        tunecore.report({"loss": float(i), "finished": i == 2})


def test_a_boolean_criterion_stops_when_the_flag_is_reached(tmp_path: Path) -> None:
    grid = _fit(reports_done_at_three, tmp_path, {"finished": True})
    assert not grid.errors
    assert [r.metrics["training_iteration"] for r in grid] == [3, 3]


def test_stop_on_done_lets_trials_run_to_their_end(tmp_path: Path) -> None:
    grid = _fit(reports_done_at_three, tmp_path, {"done": True})
    assert not grid.errors
    assert [r.metrics["training_iteration"] for r in grid] == [10, 10]
