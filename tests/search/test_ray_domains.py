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
from tunecore.core.search.built import adopt_ray_domains, from_ray_domain
from tunecore.core.search.domains import SampleFrom
from tunecore.schedulers import PopulationBasedTraining
from tunecore.search.bayesopt import BayesOptSearch
from tunecore.search.bohb import TuneBOHB
from tunecore.search.hyperopt import HyperOptSearch
from tunecore.search.optuna import OptunaSearch
from tunecore.search.zoopt import ZOOptSearch


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
    assert from_ray_domain(ray_domain) == getattr(tune, function)(*args)


def test_a_hand_built_grid_and_a_function_keep_their_kind() -> None:
    ray_sample = _ray_sample()

    def double(spec: Any) -> int:
        return 2

    grid = from_ray_domain(ray_sample.Categorical([1, 2]).grid())
    assert grid == tune.grid_search([1, 2])
    function = from_ray_domain(ray_sample.sample_from(double))
    assert isinstance(function, SampleFrom)
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
    assert adopted["l"][0] == tune.randint(0, 3)


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


def test_a_choice_of_objects_from_ray_keeps_the_objects(tmp_path: Path) -> None:
    """As `tune.choice` over objects does: the Tuner hands each trial one
    of the objects themselves."""
    ray_sample = _ray_sample()
    first, second = _Marker("a"), _Marker("b")
    results = Tuner(
        _report_marker,
        param_space={"marker": ray_sample.choice([first, second])},
        tune_config=TuneConfig(num_samples=2),
        run_config=RunConfig(storage_path=str(tmp_path), executor="in_process", verbose=0),
    ).fit()
    assert not results.errors
    assert {result.metrics["name"] for result in results} <= {"a", "b"}


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name


def _report_marker(config: dict[str, Any]) -> None:
    tune.report({"name": config["marker"].name})


def _nested_mutations(functions: Any) -> dict[str, Any]:
    return {
        "lr": functions.loguniform(1e-4, 1e-1),
        "optimizer": {
            "momentum": functions.quniform(0.1, 0.9, 0.1),
            "kind": functions.choice(["sgd", "adam"]),
        },
        "layers": functions.randint(1, 4),
    }


def test_pbt_mutations_of_ray_s_domains_are_tunecore_s() -> None:
    """Before, PBT refused them: "expected a list of categories, a search
    domain (a msgspec struct ...)"."""
    ray_pbt = PopulationBasedTraining(
        metric="m", mode="max", hyperparam_mutations=_nested_mutations(_ray_sample())
    )
    own_pbt = PopulationBasedTraining(
        metric="m", mode="max", hyperparam_mutations=_nested_mutations(tune)
    )
    assert ray_pbt.hyperparam_mutations == own_pbt.hyperparam_mutations


def _searcher(name: str, space: dict[str, Any]) -> Any:
    """Each searcher of its own `space`, seeded, by its module's name."""
    if name == "optuna":
        return OptunaSearch(space=space, metric="m", mode="max", seed=3)
    if name == "hyperopt":
        return HyperOptSearch(space=space, metric="m", mode="max", random_state_seed=3)
    if name == "bohb":
        return TuneBOHB(space=space, metric="m", mode="max", seed=3)
    if name == "zoopt":
        return ZOOptSearch(dim_dict=space, budget=4, metric="m", mode="max", seed=3)
    return BayesOptSearch(space=space, metric="m", mode="max", random_state=3)


def _searched(functions: Any, name: str) -> dict[str, Any]:
    """A space every searcher `name` models (BayesOpt: floats only; ZOOpt:
    no log dimension)."""
    if name == "bayesopt":
        return {"x": functions.uniform(-1, 1), "y": functions.uniform(0, 2)}
    space = {"x": functions.uniform(-1, 1), "n": functions.randint(1, 5)}
    space["kind"] = functions.choice(["a", "b"])
    if name != "zoopt":
        space["lr"] = functions.loguniform(1e-4, 1e-1)
    return space


@pytest.mark.parametrize("name", ["optuna", "hyperopt", "bohb", "zoopt", "bayesopt"])
def test_a_searcher_s_own_space_of_ray_s_domains_searches_as_tunecore_s(name: str) -> None:
    """Before, each refused Ray's domain in its `space=`, as an object a
    logged space cannot hold (or, OptunaSearch, as no distribution of
    Optuna's)."""
    pytest.importorskip({"bohb": "ConfigSpace", "bayesopt": "bayes_opt"}.get(name, name))
    ray_searcher = _searcher(name, _searched(_ray_sample(), name))
    own_searcher = _searcher(name, _searched(tune, name))
    ray_config, own_config = ray_searcher.suggest("t1"), own_searcher.suggest("t1")
    assert isinstance(ray_config, dict)
    assert ray_config == own_config
    assert set(ray_config) == set(_searched(tune, name))
