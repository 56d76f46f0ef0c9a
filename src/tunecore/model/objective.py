"""Which way is better for the metric an experiment optimises."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Literal, TypeAlias


class Mode(enum.StrEnum):
    """`max`: higher is better; `min`: lower is better."""

    MAX = "max"
    MIN = "min"


if TYPE_CHECKING:
    ModeArg: TypeAlias = Mode | Literal["min", "max"]
    """What a user may pass as a `mode`: `Mode.MIN` or `"min"`, as Ray
    Tune's scripts write it."""
else:
    # msgspec evaluates the fields' annotations at run time and refuses a
    # union of two str-like types, so at run time the alias is `Mode` alone:
    # a policy's stored form (and every log written before) stays the same.
    ModeArg = Mode
