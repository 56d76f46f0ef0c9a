"""The JSON-shaped values users put in configs and results, and their
flat form (`flatten`: nested keys '/'-joined, the names metrics go by).

mypy sees the recursive union; at run time the alias is `Any` because msgspec
cannot resolve a recursive alias on Python 3.11. Decoding an untyped field
still only yields plain dicts, lists, strings, numbers, booleans and None (and,
from msgpack, bytes): msgspec never constructs user classes, so this is no
door for code execution.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    JsonValue: TypeAlias = (
        bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
    )
else:
    JsonValue = Any

JsonDict: TypeAlias = dict[str, JsonValue]


_FLAT_TYPES = frozenset({float, int, str, bool, type(None), list})
"""Types a value of a flat result has (none is a dict, or a subclass of one)."""


def flatten(result: Mapping[str, JsonValue], separator: str = "/") -> JsonDict:
    """Nested dicts become '/'-joined keys (`{"a": {"b": 1}}` -> `{"a/b": 1}`);
    lists and scalars are left as they are. Stopping criteria, scores and
    metric analysis all address metrics by these flat names. A result that
    is already flat is returned as it is (read it, never mutate it): told
    by the set of its values' types when they are all plain (a third of
    the time of an `isinstance` per value; this runs three times per
    result)."""
    if _FLAT_TYPES.issuperset(map(type, result.values())):
        return result if isinstance(result, dict) else dict(result)
    for value in result.values():
        if isinstance(value, dict):
            break
    else:
        return result if isinstance(result, dict) else dict(result)
    flat: JsonDict = {}
    for key, value in result.items():
        if isinstance(value, dict):
            for sub_key, sub_value in flatten(value, separator).items():
                flat[f"{key}{separator}{sub_key}"] = sub_value
        else:
            flat[key] = value
    return flat
