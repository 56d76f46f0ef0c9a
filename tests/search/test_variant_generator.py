"""`ray.tune.search.variant_generator.generate_variants` under the rewriting:
the configs of a space listed without running anything, as Ray yields them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tunecore as tune
from tunecore.model import InvalidFieldError
from tunecore.search.variant_generator import generate_variants, grid_search

SPACE = {
    "a": tune.grid_search([1, 2]),
    "b": grid_search(["x", "y", "z"]),
    "lr": tune.uniform(0, 1),
    "c": tune.sample_from(lambda spec: spec.config.a * 10),
    "k": 3,
}


def test_grid_points_come_in_rays_order_with_their_resolved_values() -> None:
    variants = list(generate_variants(SPACE, random_state=np.random.default_rng(0)))

    # Ray's order (checked on Ray Tune 2.60): the first grid key changes fastest.
    assert [(c["a"], c["b"]) for _, c in variants] == [
        (1, "x"), (2, "x"), (1, "y"), (2, "y"), (1, "z"), (2, "z"),
    ]  # fmt: skip
    for resolved, config in variants:
        assert resolved == {
            ("a",): config["a"],
            ("b",): config["b"],
            ("lr",): config["lr"],
            ("c",): config["a"] * 10,
        }
        assert config["k"] == 3
        assert 0 <= config["lr"] <= 1
    assert len({c["lr"] for _, c in variants}) == 6  # drawn afresh at each grid point


def test_constant_grid_search_draws_once_for_the_whole_grid() -> None:
    variants = list(generate_variants(SPACE, True, np.random.default_rng(0)))
    assert len(variants) == 6
    assert len({c["lr"] for _, c in variants}) == 1


def test_an_int_seed_repeats_and_gives_every_grid_point_the_same_draws_as_ray() -> None:
    first = list(generate_variants(SPACE, random_state=7))
    assert first == list(generate_variants(SPACE, random_state=7))
    assert len({c["lr"] for _, c in first}) == 1


def test_without_a_seed_numpys_global_seed_repeats_the_configs() -> None:
    np.random.seed(1234)
    first = [c for _, c in generate_variants(SPACE)]
    np.random.seed(1234)
    assert first == [c for _, c in generate_variants(SPACE)]


def test_a_space_without_anything_to_resolve_is_one_variant() -> None:
    assert list(generate_variants({"k": 3, "nested": {"x": [1, 2]}})) == [
        ({}, {"k": 3, "nested": {"x": [1, 2]}})
    ]


def test_nested_parameters_are_keyed_by_their_whole_path() -> None:
    space = {"optimizer": {"lr": tune.grid_search([0.1, 0.2])}, "layers": [tune.choice([8])]}
    resolved = [r for r, _ in generate_variants(space, random_state=0)]
    assert resolved == [
        {("optimizer", "lr"): 0.1, ("layers", 0): 8},
        {("optimizer", "lr"): 0.2, ("layers", 0): 8},
    ]


def test_bad_input_is_an_error_naming_the_field() -> None:
    with pytest.raises(InvalidFieldError, match=r"param_space\['opt'\]\['lr'\]"):
        next(generate_variants({"opt": {"lr": {0.1, 0.2}}}))
    with pytest.raises(InvalidFieldError, match="random_state"):
        next(generate_variants(SPACE, random_state="seed"))  # type: ignore[arg-type]


def test_rays_helpers_for_its_own_domains_say_what_to_use_instead() -> None:
    with pytest.raises(ImportError, match="generate_variants"):
        exec("from tunecore.search.variant_generator import parse_spec_vars", {})


@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    seed=st.integers(0, 2**32),
)
def test_every_grid_point_once_and_each_config_holds_its_resolved_values(
    sizes: list[int], seed: int
) -> None:
    space: dict[str, object] = {
        f"g{i}": tune.grid_search(list(range(n))) for i, n in enumerate(sizes)
    }
    space["u"] = tune.uniform(-1, 1)
    variants = list(generate_variants(space, random_state=np.random.default_rng(seed)))
    points = {tuple(c[f"g{i}"] for i in range(len(sizes))) for _, c in variants}
    assert len(variants) == len(points) == int(np.prod(sizes))
    for resolved, config in variants:
        assert all(config[str(path[0])] == value for path, value in resolved.items())
