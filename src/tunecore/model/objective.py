"""Which way is better for the metric an experiment optimises."""

from __future__ import annotations

import enum


class Mode(enum.StrEnum):
    """`max`: higher is better; `min`: lower is better."""

    MAX = "max"
    MIN = "min"
