"""The JSON-shaped values users put in configs and results.

mypy sees the recursive union; at run time the alias is `Any` because msgspec
cannot resolve a recursive alias on Python 3.11. Decoding an untyped field
still only yields plain dicts, lists, strings, numbers, booleans and None (and,
from msgpack, bytes): msgspec never constructs user classes, so this is no
door for code execution.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    JsonValue: TypeAlias = (
        bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
    )
else:
    JsonValue = Any

JsonDict: TypeAlias = dict[str, JsonValue]
