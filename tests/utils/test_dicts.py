"""`tunecore.utils`' dict helpers, as Ray Tune's `ray.tune.utils` defines them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunecore.utils import deep_update, flatten_dict, merge_dicts, unflatten_dict

KEYS = st.text(alphabet="abcxyz_", min_size=1, max_size=4)
LEAVES = st.none() | st.booleans() | st.integers() | st.text(max_size=3)
NESTED = st.recursive(
    st.dictionaries(KEYS, LEAVES, max_size=3),
    lambda inner: st.dictionaries(KEYS, inner | LEAVES, min_size=1, max_size=3),
    max_leaves=12,
)


def test_flatten_joins_nested_keys_and_leaves_the_input_alone() -> None:
    config = {"a": {"b": 1, "c": {"d": 2}}, "e": [1, {"f": 3}]}
    before = copy.deepcopy(config)
    assert flatten_dict(config) == {"a/b": 1, "a/c/d": 2, "e": [1, {"f": 3}]}
    assert flatten_dict(config, delimiter=".", flatten_list=True) == {
        "a.b": 1,
        "a.c.d": 2,
        "e.0": 1,
        "e.1.f": 3,
    }
    assert config == before


@pytest.mark.parametrize("config", [{"a/b": 1}, {"a": {"b/c": 1}}, {"a": {"b": {"c/d": 1}}}])
def test_prevent_delimiter_refuses_a_key_that_holds_it(config: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="holds the delimiter '/'"):
        flatten_dict(config, prevent_delimiter=True)


@given(NESTED)
def test_unflatten_undoes_flatten_for_dicts_without_empty_ones(config: dict[str, Any]) -> None:
    def has_empty(value: object) -> bool:
        return isinstance(value, dict) and (not value or any(map(has_empty, value.values())))

    if any(has_empty(value) for value in config.values()):
        return  # an empty dict leaves no key behind to unflatten from
    assert unflatten_dict(flatten_dict(config)) == config


def test_unflatten_names_a_key_that_goes_inside_a_value() -> None:
    with pytest.raises(ValueError, match="'a/b' goes inside 'a', which holds a value"):
        unflatten_dict({"a": 1, "a/b": 2})


def test_merge_is_deep_and_changes_neither_argument() -> None:
    first = {"model": {"layers": 2, "act": "relu"}, "lr": 0.1}
    second = {"model": {"layers": 3}, "epochs": 5}
    merged = merge_dicts(first, second)
    assert merged == {"model": {"layers": 3, "act": "relu"}, "lr": 0.1, "epochs": 5}
    assert first == {"model": {"layers": 2, "act": "relu"}, "lr": 0.1}
    assert second == {"model": {"layers": 3}, "epochs": 5}


def test_deep_update_refuses_new_keys_unless_allowed() -> None:
    with pytest.raises(KeyError, match="unknown config key 'new'"):
        deep_update({"a": 1}, {"new": 2})
    assert deep_update({"a": {"x": 1}}, {"a": {"y": 2}}, allow_new_subkey_list=["a"]) == {
        "a": {"x": 1, "y": 2}
    }
    with pytest.raises(KeyError, match="'y'"):
        deep_update({"a": {"x": 1}}, {"a": {"y": 2}})


def test_deep_update_replaces_whole_where_asked() -> None:
    original = {"env": {"type": "A", "size": 1}, "opt": {"lr": 1, "beta": 2}}
    deep_update(
        original,
        {"env": {"type": "B"}, "opt": {"lr": 3}},
        override_all_if_type_changes=["env"],
        override_all_key_list=["opt"],
    )
    assert original == {"env": {"type": "B"}, "opt": {"lr": 3}}
    same_type = {"env": {"type": "A", "size": 1}}
    deep_update(same_type, {"env": {"type": "A", "size": 2}}, override_all_if_type_changes=["env"])
    assert same_type == {"env": {"type": "A", "size": 2}}
