"""First in, first out: every trial runs to its own stopping criteria."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Self

import msgspec

from tunecore.core.results import TRAINING_ITERATION
from tunecore.core.schedulers.base import (
    CONTINUE,
    FirstComeFirstServed,
    Horizon,
    Verdict,
)
from tunecore.model import JsonDict, Mode, TrialState


class FIFOScheduler(msgspec.Struct, FirstComeFirstServed, frozen=True, tag=True):
    """Never pauses or stops a trial; starts waiting trials in the order they
    were added, new ones before paused ones (as Ray Tune's FIFOScheduler).
    It has no state, so every hook returns the scheduler itself."""

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        return self

    def decides_next_at(self, trial_id: str) -> Horizon | None:
        """Never anything but CONTINUE."""
        return _FOREVER

    def on_trial_add(self, trial: TrialState) -> Self:
        return self

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        return self, CONTINUE

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        return self

    def on_trial_error(self, trial: TrialState) -> Self:
        return self

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self

    def debug_string(self) -> str:
        return "Using FIFO scheduling algorithm."


_FOREVER: Horizon = (TRAINING_ITERATION, math.inf)
"""FIFO's horizon for every trial, made once: `step` asks on every result."""
