"""The one error type for values that break a struct's invariants."""

from __future__ import annotations

import enum
import math
from typing import TypeVar

import msgspec

from tunecore.model.numbers import is_number

_Enum = TypeVar("_Enum", bound=enum.Enum)


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


class TrainOnlyFieldError(ValueError):
    """A config given to tunecore's Tuner sets a field only Ray Train's
    trainers read (a Ray Train V2 field tunecore's config takes so that a
    script's rewritten `ray.train.RunConfig(...)` reaches the trainer)."""

    def __init__(self, config: str, fields: dict[str, object]) -> None:
        self.config = config
        self.fields = fields
        given = ", ".join(f"{name}={value!r}" for name, value in fields.items())
        super().__init__(
            f"{config}({given}) is Ray Train's: only a Ray Train trainer uses "
            f"{'this field' if len(fields) == 1 else 'these fields'} (a config given to "
            "tunecore.torch.TorchTrainer and the other trainers of Ray Train's modules); a "
            f"tunecore trial has no use for it: leave it out of the {config} given here"
        )


def require_finite_non_negative(field: str, value: object) -> None:
    """Reject booleans, non-numbers, NaN, infinities and negative numbers."""
    if not (is_number(value) and 0 <= value < math.inf):
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


def unset_unless_true(owner: msgspec.Struct, attribute: str) -> None:
    """Check a flag that is `msgspec.UNSET` unless True, and store False as
    UNSET: an unset field is never encoded, so a struct without the flag
    encodes to the bytes it had before the field existed, and old data,
    which lacks it, reads back as it was written."""
    value = getattr(owner, attribute)
    if value is msgspec.UNSET:
        return
    require_bool(f"{type(owner).__name__}.{attribute}", value)
    if not value:
        msgspec.structs.force_setattr(owner, attribute, msgspec.UNSET)


def coerce_enum(owner: msgspec.Struct, attribute: str, kind: type[_Enum]) -> None:
    """Store `owner.attribute` as a member of `kind`, accepting its plain value.

    Users write `score_order="min"`; the core compares members by identity.
    Coercing once, on construction, keeps both true (decoding already yields
    members, so this is a no-op there).
    """
    value = getattr(owner, attribute)
    try:
        member = kind(value)
    except ValueError:
        accepted = ", ".join(repr(m.value) for m in kind)
        field = f"{type(owner).__name__}.{attribute}"
        raise InvalidFieldError(field, value, f"one of {accepted}") from None
    msgspec.structs.force_setattr(owner, attribute, member)


def float_valued(values: dict[str, float]) -> dict[str, float]:
    """The dict with int values as floats (see `floats_as_decoded`)."""
    if all(type(v) is float for v in values.values()):
        return values
    return {k: float(v) if type(v) is int else v for k, v in values.items()}


def floats_as_decoded(owner: msgspec.Struct, *attributes: str) -> None:
    """Store int values of float fields as floats.

    Decoding always yields floats for a float field, while construction keeps
    the int a caller passed (`Resources(cpu=1)`). Both must encode to the
    same bytes, or a replayed state differs from the live one byte for byte.
    """
    for attribute in attributes:
        value = getattr(owner, attribute)
        if type(value) is int:
            msgspec.structs.force_setattr(owner, attribute, float(value))
