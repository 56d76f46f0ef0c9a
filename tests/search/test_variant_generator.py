"""`ray.tune.search.variant_generator`'s helpers, which users' searchers
import: the split Ray 2.60's `parse_spec_vars` makes,
`generate_variants` walking a grid in Ray's order, and `format_vars`
spelling a variant as Ray's trial tag."""

from __future__ import annotations

import numpy as np
import pytest

import tunecore as tune
from tunecore.model import InvalidFieldError
from tunecore.search.sample import Categorical, Float, Function
from tunecore.search.variant_generator import (
    assign_value,
    format_vars,
    generate_variants,
    parse_spec_vars,
)


def test_parse_spec_vars_splits_constants_domains_and_grids_by_path() -> None:
    lr = tune.uniform(0, 1)
    derived = tune.sample_from(lambda config: 2)
    resolved, domain_vars, grid_vars = parse_spec_vars(
        {
            "z": tune.grid_search([1, 2]),
            "opt": {"lr": lr, "name": "sgd", "n": {"grid_search": ["a", "b"]}},
            "layers": [3, derived],
        }
    )
    # Ray's output, checked on Ray Tune 2.60 for this spec.
    assert resolved == [(("opt", "name"), "sgd"), (("layers", 0), 3)]
    assert domain_vars == [(("opt", "lr"), lr), (("layers", 1), derived)]
    assert isinstance(domain_vars[0][1], Float)
    assert isinstance(domain_vars[1][1], Function)
    assert [path for path, _ in grid_vars] == [("opt", "n"), ("z",)]  # sorted by path
    for (_, grid), values in zip(grid_vars, [["a", "b"], [1, 2]], strict=True):
        assert isinstance(grid, Categorical)
        assert grid.is_grid()
        assert grid.categories == values


def test_a_space_without_domains_is_all_resolved() -> None:
    assert parse_spec_vars({"a": 1, "b": [True, None]}) == (
        [(("a",), 1), (("b", 0), True), (("b", 1), None)],
        [],
        [],
    )


def test_choices_over_objects_and_hand_built_grids_are_rays_categoricals() -> None:
    marker = object()
    built_grid = Categorical([4, 5]).grid()
    _, domain_vars, grid_vars = parse_spec_vars(
        {"model": tune.choice([marker, "b"]), "g": built_grid}
    )
    ((path, choice),) = domain_vars
    assert path == ("model",)
    assert isinstance(choice, Categorical)
    assert not choice.is_grid()
    assert choice.categories == [marker, "b"]
    assert [(p, g.categories) for p, g in grid_vars] == [(("g",), [4, 5])]


def test_generate_variants_walks_the_grid_first_var_fastest() -> None:
    spec = {"config": {"a": tune.grid_search([1, 2]), "b": tune.grid_search(["x", "y"]), "c": 0}}
    variants = list(generate_variants(spec))
    assert [config["config"] for _, config in variants] == [
        {"a": 1, "b": "x", "c": 0},
        {"a": 2, "b": "x", "c": 0},
        {"a": 1, "b": "y", "c": 0},
        {"a": 2, "b": "y", "c": 0},
    ]
    assert variants[1][0] == {("config", "a"): 2, ("config", "b"): "x"}


def test_generate_variants_draws_per_point_or_once_and_calls_functions() -> None:
    spec = {
        "g": tune.grid_search([1, 2, 3]),
        "x": tune.uniform(0, 1),
        "twice": tune.sample_from(lambda config: config["g"] * 2),
    }
    fresh = [config for _, config in generate_variants(spec, random_state=7)]
    again = [config for _, config in generate_variants(spec, random_state=np.random.default_rng(1))]
    constant = [config for _, config in generate_variants(spec, True, random_state=7)]
    assert fresh == [config for _, config in generate_variants(spec, random_state=7)]
    assert len({config["x"] for config in fresh}) == 3
    assert len({config["x"] for config in constant}) == 1
    assert [config["twice"] for config in again] == [2, 4, 6]
    assert all(0 <= float(config["x"]) < 1 for config in fresh + again)  # type: ignore[arg-type]


def test_generate_variants_refuses_a_bad_random_state_and_objects_by_name() -> None:
    with pytest.raises(TypeError, match="random_state='seed'"):
        next(generate_variants({"a": 1}, random_state="seed"))  # type: ignore[arg-type]
    with pytest.raises(InvalidFieldError, match=r"\['model'\]"):
        next(generate_variants({"model": object()}))


def test_assign_value_sets_a_nested_path_in_place() -> None:
    spec = {"opt": {"layers": [1, 2]}}
    assign_value(spec, ("opt", "layers", 1), 9)
    assert spec == {"opt": {"layers": [1, 9]}}


def test_format_vars_spells_rays_tag_by_last_key_in_path_order() -> None:
    # Expected strings are Ray Tune 2.60's format_vars on the same input.
    resolved = {("opt", "name"): "adam w/ decay", ("lr",): 0.001, ("b",): 3, ("c",): "__"}
    assert format_vars(resolved) == "b=3,c=,lr=0.0010,name=adam_w_decay"
    assert format_vars({("a", "lr"): 1e-5, ("b", "lr"): 2.5}) == "lr=0.0000,lr=2.5000"
    assert format_vars({("layers", 0): 64, ("layers", 1): [1, 2]}) == "0=64,1=1_2"
    assert format_vars({}) == ""


def test_format_vars_leaves_out_the_keys_rays_runner_tagged_itself() -> None:
    resolved = {"run": "PPO", "env": "CartPole", "resources_per_trial": 1, ("x",): True}
    assert format_vars(resolved) == "x=True"


def test_format_vars_names_each_variant_generate_variants_yields() -> None:
    space = {"lr": tune.grid_search([0.1, 0.25]), "m": {"n": tune.grid_search(["a b", "c"])}}
    tags = [format_vars(resolved) for resolved, _ in generate_variants(space)]
    assert tags == ["lr=0.1000,n=a_b", "lr=0.2500,n=a_b", "lr=0.1000,n=c", "lr=0.2500,n=c"]
