"""A scheduler's verdict on a running trial after one of its results."""

from __future__ import annotations

import enum


class Decision(enum.StrEnum):
    """CONTINUE keeps training, PAUSE releases the worker keeping a memory
    checkpoint, STOP ends the trial."""

    CONTINUE = "CONTINUE"
    PAUSE = "PAUSE"
    STOP = "STOP"
