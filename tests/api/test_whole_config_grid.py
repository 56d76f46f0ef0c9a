"""A param space that is one grid of dicts: ready-made configs, one trial
each (discuss.ray.io "Why does tune.run(config=tune.grid_search(...))
work?"). Ray's `grid_search` returns `{"grid_search": [...]}`, a dict, so
its `Tuner` and `tune.run` take it and run each dict as a whole config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tunecore import RunConfig, Tuner

READY = [{"a": 1}, {"a": 2, "b": 5}]


def score(config: dict[str, Any]) -> None:
    tune.report({"score": config["a"] * 10 + config.get("b", 0)})


def _run(tmp_path: Path) -> RunConfig:
    return RunConfig(storage_path=str(tmp_path), executor="in_process", verbose=0)


@pytest.mark.parametrize("space", [tune.grid_search(READY), {"grid_search": READY}])
def test_each_dict_of_the_grid_is_one_trials_config(tmp_path: Path, space: object) -> None:
    results = Tuner(score, param_space=space, run_config=_run(tmp_path)).fit()  # type: ignore[arg-type]
    assert sorted((r.config["a"], r.metrics["score"]) for r in results) == [(1, 10), (2, 25)]
    assert sorted((r.config for r in results), key=lambda c: c["a"]) == READY
    best = results.get_best_result(metric="score", mode="max")
    assert best.config == {"a": 2, "b": 5}


def test_a_grid_of_anything_but_dicts_is_refused_naming_the_value(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"param_space\['grid_search'\]\[1\]=3"):
        Tuner(score, param_space=tune.grid_search([{"a": 1}, 3]), run_config=_run(tmp_path)).fit()  # type: ignore[arg-type]
