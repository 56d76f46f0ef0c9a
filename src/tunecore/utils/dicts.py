"""The dict helpers of Ray Tune's `ray.tune.utils` that scripts import:
flattening a nested result or config into `a/b` keys, and merging configs.
Ray has deprecated them; they are here so such a script still runs."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any


def flatten_dict(
    dt: dict[Any, Any],
    delimiter: str = "/",
    prevent_delimiter: bool = False,
    flatten_list: bool = False,
) -> dict[Any, Any]:
    """`dt` with every nested dict (and, with `flatten_list`, every list)
    spread into the top level, its keys joined by `delimiter`
    (`{"a": {"b": 1}}` -> `{"a/b": 1}`); `dt` itself is left as it is. With
    `prevent_delimiter`, a key already holding the delimiter is a
    ValueError, since flattening would make it ambiguous."""
    flat: dict[Any, Any] = {}
    for key, value in dt.items():
        if prevent_delimiter:
            _refuse_delimiter(key, delimiter)
        _spread(
            flat,
            key,
            value,
            delimiter=delimiter,
            prevent_delimiter=prevent_delimiter,
            flatten_list=flatten_list,
        )
    return flat


def _refuse_delimiter(key: Any, delimiter: str) -> None:
    if isinstance(key, str) and delimiter in key:
        raise ValueError(
            f"flatten_dict: the key {key!r} holds the delimiter {delimiter!r}; "
            "rename it or pick another delimiter"
        )


def _spread(
    flat: dict[Any, Any],
    key: Any,
    value: Any,
    *,
    delimiter: str,
    prevent_delimiter: bool,
    flatten_list: bool,
) -> None:
    if isinstance(value, dict):
        items: list[tuple[Any, Any]] = list(value.items())
    elif flatten_list and isinstance(value, list):
        items = list(enumerate(value))
    else:
        flat[key] = value
        return
    for inner, item in items:
        if prevent_delimiter:
            _refuse_delimiter(inner, delimiter)
        _spread(
            flat,
            f"{key}{delimiter}{inner}",
            item,
            delimiter=delimiter,
            prevent_delimiter=prevent_delimiter,
            flatten_list=flatten_list,
        )


def unflatten_dict(dt: dict[str, Any], delimiter: str = "/") -> dict[str, Any]:
    """The inverse of `flatten_dict` for dicts: `{"a/b": 1}` -> `{"a": {"b": 1}}`."""
    nested: dict[str, Any] = {}
    for key, value in dt.items():
        *parents, last = key.split(delimiter)
        level = nested
        for parent in parents:
            level = level.setdefault(parent, {})
            if not isinstance(level, dict):
                raise ValueError(
                    f"unflatten_dict: {key!r} goes inside {parent!r}, which holds a value, "
                    "not a dict"
                )
        level[last] = value
    return nested


_NO_DEFAULT: Any = object()


def unflattened_lookup(
    flat_key: str,
    lookup: Mapping[Any, Any] | Sequence[Any],
    delimiter: str = "/",
    *,
    default: Any = _NO_DEFAULT,
) -> Any:
    """The value a flattened key names in a nested result or config:
    `"a/0/b"` is `lookup["a"][0]["b"]` (a key that holds the delimiter
    itself, `lookup["a/0/b"]`, is found first), as Ray's progress table
    reads its columns. A missing key returns `default` if given, else is a
    KeyError; as in Ray, a list index that is not a number (ValueError) or
    past the end (IndexError) is raised whatever the default."""
    base: Any = lookup
    if flat_key in base:
        return base[flat_key]
    for key in flat_key.split(delimiter):
        try:
            if isinstance(base, Mapping):
                base = base[key]
            elif isinstance(base, Sequence):
                base = base[int(key)]
            else:
                raise KeyError(key)
        except KeyError:
            if default is not _NO_DEFAULT:
                return default
            raise
    return base


def merge_dicts(d1: dict[Any, Any], d2: dict[Any, Any]) -> dict[Any, Any]:
    """A new dict: a deep copy of `d1` with `d2` merged into it, dict by
    dict (`deep_update` allowing new keys); neither argument changes."""
    merged = copy.deepcopy(d1)
    deep_update(merged, d2, new_keys_allowed=True)
    return merged


def deep_update(  # noqa: PLR0917 - Ray's signature, positional as there
    original: dict[Any, Any],
    new_dict: dict[Any, Any],
    new_keys_allowed: bool = False,
    allow_new_subkey_list: Sequence[Any] | None = None,
    override_all_if_type_changes: Sequence[Any] | None = None,
    override_all_key_list: Sequence[Any] | None = None,
) -> dict[Any, Any]:
    """Update `original` in place with `new_dict`, descending into values
    that are dicts on both sides, and return it. A key `original` lacks is
    a KeyError unless `new_keys_allowed` (or, one level down, the parent
    key is in `allow_new_subkey_list`). A key in `override_all_key_list`
    (at any depth), or a top-level one in `override_all_if_type_changes`
    whose dict's `"type"` changes, is replaced whole instead of merged."""
    allowed_below = set(allow_new_subkey_list or ())
    type_sensitive = set(override_all_if_type_changes or ())
    replaced_whole = list(override_all_key_list or ())
    for key, value in new_dict.items():
        if key not in original and not new_keys_allowed:
            raise KeyError(f"deep_update: unknown config key {key!r} (new keys are not allowed)")
        current = original.get(key)
        if (
            isinstance(current, dict)
            and isinstance(value, dict)
            and key not in replaced_whole
            and not (key in type_sensitive and _type_changed(current, value))
        ):
            deep_update(
                current,
                value,
                new_keys_allowed or key in allowed_below,
                override_all_key_list=replaced_whole,
            )
        else:
            original[key] = value
    return original


def _type_changed(old: dict[Any, Any], new: dict[Any, Any]) -> bool:
    """Both name a `"type"`, and not the same one."""
    return "type" in old and "type" in new and old["type"] != new["type"]
