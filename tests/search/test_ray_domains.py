"""Ray Tune's own domain objects (a library's search space, built with
`ray.tune.search.sample` where no import rewriting reaches) in a param
space: each is read as tunecore's domain of the same function, and sampled
for each trial as Ray samples it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.search.ray_domains import adopt_ray_domains, from_ray_domain


def _ray_sample() -> Any:
    pytest.importorskip("fsspec")  # ray.tune needs it; ray[tune], which tunecore depends on, has it
    return pytest.importorskip("ray.tune.search.sample")


SAME_FUNCTIONS = [
    ("uniform", (0, 1)),
    ("quniform", (0, 1, 0.1)),
    ("loguniform", (1e-3, 1)),
    ("qloguniform", (1e-3, 1, 1e-3)),
    ("randint", (0, 10)),
    ("qrandint", (0, 10, 2)),
    ("lograndint", (1, 100)),
    ("qlograndint", (1, 100, 2)),
    ("randn", (1, 2)),
    ("qrandn", (1, 2, 0.5)),
    ("choice", ([1, "a", None],)),
]


@pytest.mark.parametrize(("function", "args"), SAME_FUNCTIONS)
def test_each_ray_domain_is_tunecore_s_domain_of_the_same_function(
    function: str, args: tuple[Any, ...]
) -> None:
    ray_domain = getattr(_ray_sample(), function)(*args)
    assert from_ray_domain(ray_domain).to_domain() == getattr(tune, function)(*args)  # type: ignore[attr-defined]


def test_a_hand_built_grid_and_a_function_keep_their_kind() -> None:
    ray_sample = _ray_sample()

    def double(spec: Any) -> int:
        return 2

    grid = from_ray_domain(ray_sample.Categorical([1, 2]).grid())
    assert grid.to_domain() == tune.grid_search([1, 2])  # type: ignore[attr-defined]
    function = from_ray_domain(ray_sample.sample_from(double))
    assert isinstance(function, tune.search.sample.Function)
    assert function.func is double


def test_a_space_without_ray_s_domains_is_left_as_it_is() -> None:
    space = {"a": [1, (2, 3)], "b": {"c": tune.uniform(0, 1)}, "d": "x"}
    assert adopt_ray_domains(space) is space


def test_containers_keep_their_types_around_a_converted_domain() -> None:
    ray_sample = _ray_sample()
    adopted = adopt_ray_domains(
        {"t": (1, ray_sample.uniform(0, 1)), "l": [ray_sample.randint(0, 3)]}
    )
    assert isinstance(adopted, dict)
    assert isinstance(adopted["t"], tuple)
    assert adopted["t"][0] == 1
    assert isinstance(adopted["l"], list)
    assert adopted["l"][0].to_domain() == tune.randint(0, 3)


def _report(config: dict[str, Any]) -> None:
    tune.report(dict(config["model"]))


def test_a_trial_gets_values_drawn_from_ray_s_domains(tmp_path: Path) -> None:
    """Before, each trial got Ray's domain object itself as its value."""
    ray_sample = _ray_sample()
    space = {
        "model": {"lr": ray_sample.loguniform(1e-4, 1e-1), "layers": ray_sample.choice([2, 4])}
    }
    results = Tuner(
        _report,
        param_space=space,
        tune_config=TuneConfig(num_samples=3),
        run_config=RunConfig(storage_path=str(tmp_path), executor="in_process", verbose=0),
    ).fit()
    assert not results.errors
    for result in results:
        assert 1e-4 <= float(str(result.metrics["lr"])) <= 1e-1
        assert result.metrics["layers"] in (2, 4)
        assert result.config["model"]["layers"] in (2, 4)
