"""The public API's types, as a type checker sees them (`mypy --strict`
runs over the tests): `assert_type` fails the type check when a public
name's type drifts, as msgspec's typing tests do. The calls run too, so
each line is a real use."""

from __future__ import annotations

from pathlib import Path
from typing import assert_type

import tunecore
from tunecore import Checkpoint, Result, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.core.search.domains import (
    Choice,
    GridSearch,
    LogUniform,
    RandInt,
    SampleFrom,
    Uniform,
)
from tunecore.model import JsonDict, JsonValue
from tunecore.shell.replay import Replayed


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    return {"loss": 1.0 / iteration}, 1.0


def test_the_public_names_have_the_types_users_rely_on(tmp_path: Path) -> None:
    assert_type(tunecore.uniform(0, 1), Uniform)
    assert_type(tunecore.loguniform(1e-3, 1), LogUniform)
    assert_type(tunecore.choice([1, 2]), Choice)
    assert_type(tunecore.randint(0, 3), RandInt)
    assert_type(tunecore.grid_search([1, 2]), GridSearch)
    assert_type(tunecore.sample_from(lambda spec: 1), SampleFrom)
    assert_type(TuneConfig(num_samples=2), TuneConfig)
    grid = tunecore.simulate(
        curve,
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(name="typed", storage_path=str(tmp_path), verbose=0),
        max_iterations=3,
    )
    assert_type(grid, ResultGrid)
    best = grid.get_best_result()
    assert_type(best, Result)
    assert_type(grid[0], Result)
    assert_type(best.metrics, dict[str, JsonValue])
    assert_type(best.checkpoint, Checkpoint | None)
    assert_type(tunecore.replay(tmp_path / "typed"), Replayed)
    assert_type(Tuner(lambda config: None), Tuner)
    assert_type(Checkpoint.from_directory(str(tmp_path)), Checkpoint)
    assert len(grid) == 2
