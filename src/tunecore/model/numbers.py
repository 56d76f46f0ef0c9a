"""What counts as a number in what users pass and report: real numbers,
never booleans (a bool is an int to Python, a flag to a user). One
definition for every layer: validation of settings, stored values, result
analysis and the policies all ask these."""

from __future__ import annotations

import math
from typing import TypeGuard


def is_int(value: object) -> TypeGuard[int]:
    """An int and not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """An int or a float, not a bool. (The exact-type test first: it is the
    common case and this runs for every metric of every result.) A
    TypeGuard: after it, the checker knows the number."""
    kind = type(value)
    if kind is float or kind is int:
        return True
    return isinstance(value, int | float) and kind is not bool


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """A real number that is neither infinite nor NaN."""
    return is_number(value) and math.isfinite(value)
