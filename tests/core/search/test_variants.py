"""Variant resolution: grid order, sample_from, tags, and errors naming paths."""

from __future__ import annotations

from collections import Counter
from typing import cast

import msgspec
import pytest

from tests.core.search.support import at, drain
from tunecore.core.rng import seeded
from tunecore.core.search import (
    BasicVariantGenerator,
    ConfigValue,
    ConfigView,
    ListView,
    Suggestion,
    choice,
    format_vars,
    grid_search,
    parse_space,
    randint,
    resolve,
    sample_from,
    uniform,
)
from tunecore.model import InvalidFieldError, JsonDict, JsonValue


def num(value: ConfigValue | JsonValue) -> float:
    """A number read from a config (sample_from functions see `ConfigValue`s)."""
    assert isinstance(value, int | float)
    return value


def view(value: ConfigValue) -> ConfigView:
    assert isinstance(value, ConfigView)
    return value


def items(value: ConfigValue) -> ListView:
    assert isinstance(value, ListView)
    return value


def configs(space: dict[str, object], num_samples: int = 1, seed: int = 0) -> list[Suggestion]:
    return drain(BasicVariantGenerator(space, num_samples=num_samples, seed=seed))


# -- grid order and counts ---------------------------------------------------------------------


def test_the_grid_is_the_cross_product_with_the_first_path_varying_fastest() -> None:
    space: dict[str, object] = {"b": grid_search([1, 2]), "a": grid_search(["x", "y", "z"])}
    got = [(s.config["a"], s.config["b"]) for s in configs(space)]
    assert got == [("x", 1), ("y", 1), ("z", 1), ("x", 2), ("y", 2), ("z", 2)]


def test_nested_grids_are_ordered_by_their_full_path() -> None:
    space: dict[str, object] = {
        "opt": {"lr": grid_search([0.1, 0.2])},
        "batch": grid_search([16, 32]),
    }
    got = [(s.config["batch"], at(s.config, ("opt", "lr"))) for s in configs(space)]
    assert got == [(16, 0.1), (32, 0.1), (16, 0.2), (32, 0.2)]


def test_num_samples_repeats_the_whole_grid_in_rounds() -> None:
    space: dict[str, object] = {"a": grid_search([1, 2, 3]), "x": uniform(0, 1)}
    suggestions = configs(space, num_samples=4)
    assert len(suggestions) == 12
    assert [s.config["a"] for s in suggestions] == [1, 2, 3] * 4
    assert Counter(s.config["a"] for s in suggestions) == {1: 4, 2: 4, 3: 4}
    assert len({s.config["x"] for s in suggestions}) == 12


def test_a_grid_over_whole_configs_gives_each_dict_as_a_trial_config() -> None:
    # discuss.ray.io "Why does tune.run(config=tune.grid_search(...)) work?":
    # ready-made configs, one trial each; Ray tags them `config=...`.
    ready: list[JsonValue] = [{"a": 1}, {"a": 2, "b": [5, 6]}]
    spaces: list[dict[str, object]] = [{"grid_search": ready}, {"grid_search": tuple(ready)}]
    for space in spaces:
        suggestions = configs(space, num_samples=2)
        assert [s.config for s in suggestions] == ready * 2
        assert [s.evaluated_params for s in suggestions] == [{"config": c} for c in ready] * 2
        assert [s.experiment_tag for s in suggestions][:2] == [
            "0_config={'a':_1}",
            "1_config={'a':_2,_'b':_[5,_6]}",
        ]
    assert parse_space({"grid_search": ready}).grid_size == 2


def test_a_grid_over_whole_configs_takes_only_dicts_of_plain_values() -> None:
    with pytest.raises(InvalidFieldError, match=r"param_space\['grid_search'\]\[1\]"):
        parse_space({"grid_search": [{"a": 1}, 2]})
    with pytest.raises(InvalidFieldError, match=r"param_space\['grid_search'\]"):
        parse_space({"grid_search": []})
    with pytest.raises(InvalidFieldError, match=r"param_space\['grid_search'\]"):
        parse_space({"grid_search": [{"lr": uniform(0, 1)}]})


def test_a_space_of_constants_gives_num_samples_copies_tagged_by_index_only() -> None:
    suggestions = configs({"lr": 0.1, "layers": [1, 2]}, num_samples=3)
    assert [s.config for s in suggestions] == [{"lr": 0.1, "layers": [1, 2]}] * 3
    assert [s.experiment_tag for s in suggestions] == ["0", "1", "2"]
    assert all(s.evaluated_params == {} for s in suggestions)


def test_rays_json_spelling_of_a_grid_is_a_grid() -> None:
    space: dict[str, object] = {"a": {"grid_search": [1, 2]}, "b": {"grid": [1, 2]}}
    assert [s.config for s in configs(space)] == [
        {"a": 1, "b": {"grid": [1, 2]}},
        {"a": 2, "b": {"grid": [1, 2]}},
    ]


def test_random_values_are_drawn_inside_lists_too() -> None:
    (suggestion,) = configs({"layers": [64, randint(1, 4), {"units": choice([8])}]})
    layers = suggestion.config["layers"]
    assert isinstance(layers, list)
    assert layers[0] == 64
    assert layers[1] in (1, 2, 3)
    assert layers[2] == {"units": 8}
    assert set(suggestion.evaluated_params) == {"layers/1", "layers/2/units"}


def test_configs_share_nothing_with_the_space_or_each_other() -> None:
    values: list[JsonValue] = [[1, 2]]
    space: dict[str, object] = {"g": grid_search(values), "c": {"nested": [1]}}
    first, second = configs(space, num_samples=2)
    grid_value = first.config["g"]
    nested = at(first.config, ("c", "nested"))
    assert isinstance(grid_value, list)
    assert isinstance(nested, list)
    grid_value.append(3)
    nested.append(2)
    assert second.config == {"g": [1, 2], "c": {"nested": [1]}}


def test_resolve_is_pure_and_returns_the_advanced_rng() -> None:
    space = parse_space({"x": uniform(0, 1), "y": randint(0, 100)})
    rng = seeded(5)
    assert resolve(space, 0, rng) == resolve(space, 0, rng)
    advanced, _ = resolve(space, 0, rng)
    assert advanced != rng
    with pytest.raises(InvalidFieldError):
        resolve(space, 1, rng)


# -- sample_from ------------------------------------------------------------------------------


def test_sample_from_sees_the_values_resolved_before_it() -> None:
    space: dict[str, object] = {
        "lr": uniform(0, 1),
        "double": sample_from(lambda spec: num(view(spec.config).lr) * 2),
    }
    for suggestion in configs(space, num_samples=5):
        assert suggestion.config["double"] == num(suggestion.config["lr"]) * 2
        assert "double" in suggestion.evaluated_params


def test_every_spelling_of_a_config_read_works() -> None:
    space: dict[str, object] = {
        "opt": {"lr": grid_search([0.5])},
        "ray_spec_attr": sample_from(lambda spec: spec.config.opt.lr),
        "ray_spec_item": sample_from(lambda spec: spec["config"]["opt"]["lr"]),
        "item": sample_from(lambda config: config["opt"]["lr"]),
        "attr": sample_from(lambda config: config.opt.lr),
        "get": sample_from(lambda config: config.get("missing", 7)),
        "none": sample_from(lambda: "constant"),
    }
    (suggestion,) = configs(space)
    assert suggestion.config == {
        "opt": {"lr": 0.5},
        "ray_spec_attr": 0.5,
        "ray_spec_item": 0.5,
        "item": 0.5,
        "attr": 0.5,
        "get": 7,
        "none": "constant",
    }


def test_a_function_may_return_part_of_the_config_as_plain_data() -> None:
    space: dict[str, object] = {
        "copy": sample_from(lambda s: s["base"]),
        "base": {"layers": [grid_search([32]), 8], "act": "relu"},
    }
    (suggestion,) = configs(space)
    assert suggestion.config["copy"] == {"layers": [32, 8], "act": "relu"}
    assert type(suggestion.config["copy"]) is dict


def test_a_key_named_config_is_the_users_own() -> None:
    (suggestion,) = configs({"config": 3, "b": sample_from(lambda c: c.config)})
    assert suggestion.config["b"] == 3


def test_sample_from_functions_resolve_in_dependency_order_whatever_their_order() -> None:
    space: dict[str, object] = {
        "c": sample_from(lambda s: num(s["b"]) + 1),
        "b": sample_from(lambda s: num(s["a"]) * 10),
        "a": grid_search([1, 2]),
    }
    assert [(s.config["a"], s.config["b"], s.config["c"]) for s in configs(space)] == [
        (1, 10, 11),
        (2, 20, 21),
    ]


def test_a_function_inside_a_list_may_read_other_elements() -> None:
    space: dict[str, object] = {
        "layers": [64, sample_from(lambda s: num(items(s["layers"])[0]) * 2)]
    }
    (suggestion,) = configs(space)
    assert suggestion.config == {"layers": [64, 128]}


def test_keys_are_readable_before_values_resolve() -> None:
    space: dict[str, object] = {
        "a": sample_from(sorted),
        "b": sample_from(len),
    }
    (suggestion,) = configs(space)
    assert suggestion.config == {"a": ["a", "b"], "b": 2}


def test_swallowing_the_unresolved_error_still_waits_for_the_value() -> None:
    def fallback(spec: ConfigView) -> JsonValue:
        try:
            value = spec["b"]
        except Exception:
            return "fallback"
        assert isinstance(value, int)
        return value + 1

    (suggestion,) = configs({"a": sample_from(fallback), "b": sample_from(lambda: 1)})
    assert suggestion.config == {"a": 2, "b": 1}


def test_a_cycle_of_sample_from_values_is_an_error_naming_the_cycle() -> None:
    space: dict[str, object] = {
        "a": sample_from(lambda s: s["b"]),
        "b": sample_from(lambda s: s["a"]),
        "c": uniform(0, 1),
    }
    with pytest.raises(InvalidFieldError) as raised:
        configs(space)
    assert raised.value.field == "param_space['a']"
    assert "param_space['a'] -> param_space['b'] -> param_space['a']" in str(raised.value)


def test_a_function_reading_its_own_value_is_a_cycle() -> None:
    with pytest.raises(InvalidFieldError, match=r"param_space\['x'\]\['y'\] -> param_space"):
        configs({"x": {"y": sample_from(lambda s: view(s["x"])["y"])}})


def test_a_failing_function_is_an_error_naming_its_path_and_the_exception() -> None:
    with pytest.raises(InvalidFieldError, match="KeyError") as raised:
        configs({"opt": {"lr": sample_from(lambda s: s["missing"])}})
    assert raised.value.field == "param_space['opt']['lr']"
    assert isinstance(raised.value.__cause__, KeyError)


def test_a_function_returning_a_non_json_value_is_an_error_naming_its_path() -> None:
    with pytest.raises(InvalidFieldError) as raised:
        configs({"a": sample_from(lambda: {1, 2})})
    assert raised.value.field == "param_space['a']"


def test_a_function_cannot_write_through_the_view() -> None:
    def mutate(spec: ConfigView) -> JsonValue:
        cast(JsonDict, spec)["a"] = 5
        return 0

    with pytest.raises(InvalidFieldError, match="TypeError"):
        configs({"a": 1, "b": sample_from(mutate)})


# -- invalid spaces --------------------------------------------------------------------------


def test_a_non_json_constant_is_rejected_naming_its_path() -> None:
    with pytest.raises(InvalidFieldError) as raised:
        parse_space({"optimizer": {"betas": [0.9, object()]}})
    assert raised.value.field == "param_space['optimizer']['betas'][1]"


@pytest.mark.parametrize(
    "make",
    [
        lambda: parse_space({"model": object()}),
        lambda: parse_space({"model": {"grid_search": [object()]}}),
        lambda: grid_search([object()]),  # type: ignore[list-item]
        lambda: choice([1, object()]),  # type: ignore[list-item]
    ],
)
def test_an_object_in_a_space_is_refused_saying_how_to_pass_it(make: object) -> None:
    """Ray Tune takes any object (a model, a `ray.put` reference) as a
    config value; here a config is logged, and the error says where
    objects go instead."""
    with pytest.raises(InvalidFieldError, match=r"tune\.with_parameters\(trainable, name=obj\)"):
        make()  # type: ignore[operator]


def test_a_bare_function_is_rejected_with_a_hint_to_wrap_it() -> None:
    with pytest.raises(InvalidFieldError, match="sample_from") as raised:
        parse_space({"f": lambda spec: 1})
    assert raised.value.field == "param_space['f']"


def test_a_non_string_key_is_rejected_naming_its_path() -> None:
    with pytest.raises(InvalidFieldError) as raised:
        parse_space({"opt": {1: 2}})
    assert raised.value.field == "param_space['opt'][1]"


def test_an_empty_json_grid_is_rejected_naming_its_path() -> None:
    with pytest.raises(InvalidFieldError) as raised:
        parse_space({"opt": {"lr": {"grid_search": []}}})
    assert raised.value.field == "param_space['opt']['lr']['grid_search']"


def test_a_domain_made_invalid_after_construction_is_caught_naming_its_path() -> None:
    domain = uniform(0, 1)
    msgspec.structs.force_setattr(domain, "high", -1.0)
    with pytest.raises(InvalidFieldError) as raised:
        BasicVariantGenerator({"optimizer": {"lr": domain}})
    assert raised.value.field == "param_space['optimizer']['lr'].high"
    assert raised.value.value == -1.0


def test_a_param_space_must_be_a_dict() -> None:
    with pytest.raises(InvalidFieldError, match="param_space"):
        parse_space([1, 2])  # type: ignore[arg-type]


# -- tags and evaluated params ----------------------------------------------------------------


def test_tags_are_index_then_last_key_equals_value_sorted_by_path() -> None:
    space: dict[str, object] = {
        "momentum": grid_search([0.9, 0.99]),
        "lr": grid_search([0.01, 0.001]),
        "batch": 32,
    }
    assert [s.experiment_tag for s in configs(space)] == [
        "0_lr=0.01,momentum=0.9",
        "1_lr=0.001,momentum=0.9",
        "2_lr=0.01,momentum=0.99",
        "3_lr=0.001,momentum=0.99",
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.123456789, "0.12346"),
        (1e-05, "1e-05"),
        (0.0001, "0.0001"),
        (123456.0, "1.2346e+05"),
        (2.0, "2.0"),
        (3, "3"),
        (True, "True"),
        (None, "None"),
        ("relu", "relu"),
        ("a b/c\\d", "a_b_c_d"),
        ([1, 2], "[1,_2]"),
    ],
)
def test_values_in_tags_are_formatted_as_ray_formats_them(value: JsonValue, shown: str) -> None:
    assert format_vars([(("x",), value)]) == f"x={shown}"


def test_nested_and_list_paths_are_named_by_their_last_key() -> None:
    space: dict[str, object] = {
        "optimizer": {"lr": grid_search([0.1])},
        "layers": [grid_search([32]), 8],
    }
    (suggestion,) = configs(space)
    assert suggestion.experiment_tag == "0_layers_0=32,lr=0.1"
    assert suggestion.evaluated_params == {"layers/0": 32, "optimizer/lr": 0.1}


def test_clashing_names_grow_to_the_shortest_unique_suffix() -> None:
    space: dict[str, object] = {
        "opt": {"lr": grid_search([0.1])},
        "sched": {"lr": grid_search([0.2])},
        "momentum": grid_search([0.9]),
    }
    (suggestion,) = configs(space)
    assert suggestion.experiment_tag == "0_momentum=0.9,opt_lr=0.1,sched_lr=0.2"


def test_the_tag_index_counts_across_sample_rounds() -> None:
    tags = [s.experiment_tag for s in configs({"a": grid_search([1, 2])}, num_samples=2)]
    assert tags == ["0_a=1", "1_a=2", "2_a=1", "3_a=2"]
