"""Which of a user's values the event log can store, checked where they come in.

Python holds values msgpack cannot: integers beyond 64 bits (msgpack's are
-2**63 .. 2**64 - 1) and strings with a lone surrogate such as "\\ud800"
(not UTF-8, so msgspec refuses to encode them). And a value nested a few
hundred deep encodes, but every reader that recurses (msgspec's decoder on
a resume, the loggers, the user's analysis) meets Python's recursion limit
sooner or later. An event holding one once stopped the driver when the log
failed to encode it, and the resumes after it. Such values are refused
where they come in, the error naming where the value is and showing it
shortened: results at `report()` in the worker (which encodes the result
once and asks `encoding_error` where the culprit is), param spaces in
`Tuner`, configs from `tunecore add` and the inbox (`check_storable`).
Whatever else the log fails to encode, `Journal.record` names with
`encoding_error`, and the loop fails the event's trial instead.
"""

from __future__ import annotations

import msgspec

from tunecore.model.errors import InvalidFieldError
from tunecore.model.numbers import is_int

MAX_DEPTH = 100
"""Deepest nesting of dicts and lists in a user's value (the value itself is
level 1): far beyond any real config or result, far below the recursion
limit."""
MAX_RECORD_BYTES = 16 << 20
"""The largest record the event log's writer writes (16 MiB, far beyond any
event or header; a frame claiming more is damage). Here, below the layers,
because a worker checks a result against it at `report()` without loading
the log's code."""
MIN_INT = -(2**63)
MAX_INT = 2**64 - 1
_SHOWN = 60  # characters of a value shown in an error
_PATH_SHOWN = 120  # and of where it is
_EXPECTED_INT = "an integer from -2**63 to 2**64 - 1 (msgpack's range; floats go further)"
TOO_DEEP = f"a value nested at most {MAX_DEPTH} deep (dicts and lists)"
_EXPECTED_TEXT = "text that is valid UTF-8 (it holds a lone surrogate such as '\\ud800')"


class UnstorableValueError(InvalidFieldError):
    """A value that cannot be stored; `shown` is the value shortened."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        self.shown = shortened(value)
        if len(field) > _PATH_SHOWN:
            field = field[: _PATH_SHOWN - 3] + "..."
        ValueError.__init__(self, f"{field}={self.shown} cannot be stored: expected {expected}")


def check_storable(where: str, value: object) -> None:
    """Raise `UnstorableValueError` for the first part of `value` (dicts,
    lists, tuples and msgspec structs, walked in order) that the event log
    cannot store; see the module docstring. Other types pass: whether they
    are allowed at all is the caller's check."""
    _check(where, value, 1)


def _check(where: str, value: object, depth: int) -> None:
    kind = type(value)
    if kind is str:
        _check_text(where, value)  # type: ignore[arg-type]
    elif kind is int:
        if not MIN_INT <= value <= MAX_INT:  # type: ignore[operator]
            raise UnstorableValueError(where, value, _EXPECTED_INT)
    elif kind is dict or kind is list or kind is tuple or isinstance(value, msgspec.Struct):
        if depth > MAX_DEPTH:
            raise UnstorableValueError(where, value, TOO_DEEP)
        if isinstance(value, dict):
            for key, item in value.items():
                if type(key) is str:
                    _check_text(f"{where}[{shortened(key)}]", key)
                _check(f"{where}[{shortened(key)}]", item, depth + 1)
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                _check(f"{where}[{index}]", item, depth + 1)
        else:
            for name in value.__struct_fields__:  # type: ignore[attr-defined]
                _check(f"{where}.{name}", getattr(value, name), depth + 1)
    elif is_int(value):
        _check(where, int(value), depth)
    elif isinstance(value, str):
        _check(where, str(value), depth)


def _check_text(where: str, text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise UnstorableValueError(where, text, _EXPECTED_TEXT) from None


def shortened(value: object) -> str:
    """`repr(value)` cut to a readable length, computed without ever
    building a huge (or, for a deep value, impossible) repr."""
    if is_int(value) and value.bit_length() > 190:
        digits = int(value.bit_length() * 0.30103) + 1
        sign = "-" if value < 0 else ""
        return f"{sign}<an integer of about {digits} digits>"
    if isinstance(value, dict | list | tuple):
        return f"<a {type(value).__name__} of {len(value)} items>"
    if isinstance(value, msgspec.Struct):
        return f"<a {type(value).__name__}>"
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def encoding_error(where: str, value: object, error: Exception) -> UnstorableValueError:
    """Why `value` failed to encode (`error`, from msgspec): the first
    unstorable part `check_storable` finds in it, else `error` itself."""
    try:
        check_storable(where, value)
    except UnstorableValueError as found:
        return found
    return UnstorableValueError(where, value, f"a value the event log can hold ({error})")
