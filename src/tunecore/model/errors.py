"""The one error type for values that break a struct's invariants."""

from __future__ import annotations


class InvalidFieldError(ValueError):
    """A field holds a value it may not hold.

    The message names the field, the value and what would be accepted, so the
    user can fix the input without reading our code. msgspec wraps this into a
    `msgspec.ValidationError` when it happens while decoding.
    """

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{field}={value!r} is invalid: expected {expected}")


def require_finite_non_negative(field: str, value: object) -> None:
    """Reject booleans, non-numbers, NaN, infinities and negative numbers."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not (0 <= value < float("inf")):  # type: ignore[operator]
        raise InvalidFieldError(field, value, "a finite number >= 0")


def require_int(field: str, value: object, *, minimum: int | None = None) -> None:
    """Reject booleans, non-integers and integers below `minimum`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidFieldError(field, value, "an integer")
    if minimum is not None and value < minimum:
        raise InvalidFieldError(field, value, f"an integer >= {minimum}")


def require_name(field: str, value: object) -> None:
    """Reject anything but a non-empty string."""
    if not isinstance(value, str) or not value:
        raise InvalidFieldError(field, value, "a non-empty string")


def require_bool(field: str, value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidFieldError(field, value, "a boolean")
