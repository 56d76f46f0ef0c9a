"""A scheduler of your own, developed offline with `tunecore.testing`.

`PatienceScheduler` stops a trial once it has gone `patience` results
without beating the best value any trial had reached at the same
iteration. Like tunecore's own schedulers it is a frozen msgspec struct
(`tag=True`, so snapshots and the event log can hold it) whose hooks return
a new scheduler instead of changing this one.

Run it: `python examples/custom_scheduler.py` drives it by hand through a
few results, then lets `check_policy` try it against a few hundred
generated runs. `tests/testing/test_custom_scheduler.py` does the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Self

import msgspec

from tunecore.core.schedulers.base import CONTINUE, STOP, FirstComeFirstServed, Verdict, signed
from tunecore.model import JsonDict, Mode, ModeArg, TrialState
from tunecore.model.errors import coerce_enum


class PatienceScheduler(msgspec.Struct, FirstComeFirstServed, frozen=True, kw_only=True, tag=True):
    """`FirstComeFirstServed` gives it FIFO's order for starting trials and
    stops nothing but the trial that reports."""

    metric: str | None = None
    mode: ModeArg | None = None
    """`Mode.MIN` or `"min"`, as Ray Tune's scripts write it; stored as a
    `Mode` (`__post_init__`), which `signed` compares by identity."""
    patience: int = 3
    # State: the best signed score seen at each iteration, and each trial's
    # count of results in a row that did not beat it.
    best_at: dict[int, float] = {}
    stale: dict[str, int] = {}

    def __post_init__(self) -> None:
        if self.mode is not None:
            coerce_enum(self, "mode", Mode)

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        return msgspec.structs.replace(self, metric=self.metric or metric, mode=self.mode or mode)

    def on_trial_add(self, trial: TrialState) -> Self:
        return self

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        value, iteration = result.get(self.metric or ""), result.get("training_iteration")
        if not isinstance(value, int | float) or not isinstance(iteration, int):
            return self, CONTINUE
        score = signed(float(value), Mode(self.mode or Mode.MAX))
        best = self.best_at.get(iteration, -math.inf)
        stale = 0 if score > best else self.stale.get(trial.trial_id, 0) + 1
        updated = msgspec.structs.replace(
            self,
            best_at={**self.best_at, iteration: max(best, score)},
            stale={**self.stale, trial.trial_id: stale},
        )
        return updated, STOP if stale >= self.patience else CONTINUE

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        return self._forget(trial)

    def on_trial_error(self, trial: TrialState) -> Self:
        return self._forget(trial)

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self._forget(trial)

    def _forget(self, trial: TrialState) -> Self:
        stale = {k: v for k, v in self.stale.items() if k != trial.trial_id}
        return msgspec.structs.replace(self, stale=stale)

    def debug_string(self) -> str:
        return f"PatienceScheduler: patience {self.patience}"


def main() -> None:
    from tunecore.testing import PolicyDriver  # noqa: PLC0415
    from tunecore.testing.check import check_policy  # noqa: PLC0415

    driver = PolicyDriver(PatienceScheduler(metric="loss", mode="min", patience=2), cpus=2)
    good, bad = driver.add({"lr": 0.1}), driver.add({"lr": 0.9})
    # Each result gets its verdict back; `bad` never beats `good` at the
    # same iteration, so it is stopped after its second stale result.
    print(driver.result(good, loss=1.0), driver.result(bad, loss=2.0))
    print(driver.result(good, loss=0.5), driver.result(bad, loss=1.9))
    print(driver.status(bad), driver.result(good, loss=0.3), driver.status(good))

    check_policy(lambda: PatienceScheduler(metric="loss", mode="min", patience=2))
    print("check_policy: every rule held")


if __name__ == "__main__":
    main()
