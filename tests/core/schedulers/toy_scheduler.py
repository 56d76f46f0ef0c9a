"""A scheduler added the way a new built-in one is: this module, plus one
registry line (`TOY_ENTRY`, joined in `test_registry` with
`SCHEDULERS.including`). Nothing else in tunecore names it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Self

import msgspec

from tunecore.core.registry import Entry
from tunecore.core.results import TRAINING_ITERATION
from tunecore.core.schedulers.base import (
    CONTINUE,
    STOP,
    FirstComeFirstServed,
    Horizon,
    Verdict,
    adopt_objective,
    evolve,
    known_objective,
    signed,
)
from tunecore.model import JsonDict, Mode, TrialState
from tunecore.model.numbers import is_number


class BestAtBudget(msgspec.Struct, FirstComeFirstServed, frozen=True, kw_only=True, tag=True):
    """Stops a trial at `budget` iterations unless its score beats every
    score recorded there before (`best`, signed: greater is better)."""

    budget: int = 3
    metric: str | None = None
    mode: Mode | None = None
    best: float | None = None
    num_stopped: int = 0

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        return adopt_objective(self, (self.metric, self.mode), metric, mode)

    def decides_next_at(self, trial_id: str) -> Horizon | None:
        return (TRAINING_ITERATION, float(self.budget))

    def on_trial_add(self, trial: TrialState) -> Self:
        return self

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        value = result.get(known_objective(self.metric, self.mode).metric)
        if result.get(TRAINING_ITERATION) != self.budget or not is_number(value):
            return self, CONTINUE
        score = signed(float(value), known_objective(self.metric, self.mode).mode)
        if self.best is None or score > self.best:
            return evolve(self, best=score), CONTINUE
        return evolve(self, num_stopped=self.num_stopped + 1), STOP

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        return self

    def on_trial_error(self, trial: TrialState) -> Self:
        return self

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self

    def debug_string(self) -> str:
        return f"BestAtBudget: num_stopped={self.num_stopped}"


TOY_ENTRY = Entry("best_at_budget", BestAtBudget, ("best_at_budget",), what_if=True)
"""The registry line."""
