"""Ray Tune's plateau stoppers: one trial's metric stops moving
(`TrialPlateauStopper`), or the best results of the whole experiment do
(`ExperimentPlateauStopper`).

Deviations from Ray, where Ray's behaviour is an accident rather than a
rule: a result whose metric is missing or not a number is not counted by
`ExperimentPlateauStopper` (Ray raises `KeyError` and ends the run), nor is
a NaN (Ray sorts it in wherever it lands); `TrialPlateauStopper` counts
such a result but cannot stop on a window holding it (Ray: the same, by
catching NumPy's error), and with a `metric_threshold` it does not stop on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Self

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.core.stoppers.base import number
from tunecore.model import InvalidFieldError, JsonDict, Mode, ModeArg
from tunecore.model.errors import (
    coerce_enum,
    floats_as_decoded,
    require_finite_non_negative,
    require_int,
    require_name,
)
from tunecore.model.numbers import is_number


def population_std(values: Sequence[float]) -> float:
    """NumPy's `np.std` (ddof=0); NaN when a value is NaN or infinite."""
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


class TrialPlateauStopper(msgspec.Struct, frozen=True, tag=True):
    """Stops a trial once the standard deviation of its last `num_results`
    values of `metric` is below `std`, but not before its `grace_period`-th
    result; with `metric_threshold`, only once the value is at or below it
    (`mode="min"`) or at or above it (`mode="max"`).

    State: `seen` counts each trial's results, `recent` keeps its last
    `num_results` values (None for a result without a numeric value); both
    are persistent maps, so a result copies a 256th of them.
    """

    metric: str
    std: float = 0.01
    num_results: int = 4
    grace_period: int = 4
    metric_threshold: float | None = None
    mode: ModeArg | None = None
    seen: ShardedMap[str, int] = ShardedMap()
    recent: ShardedMap[str, tuple[float | None, ...]] = ShardedMap()

    def __post_init__(self) -> None:
        owner = "TrialPlateauStopper"
        require_name(f"{owner}.metric", self.metric)
        require_finite_non_negative(f"{owner}.std", self.std)
        require_int(f"{owner}.num_results", self.num_results, minimum=1)
        require_int(f"{owner}.grace_period", self.grace_period, minimum=0)
        threshold: object = self.metric_threshold
        if threshold is not None:
            if not is_number(threshold):
                raise InvalidFieldError(f"{owner}.metric_threshold", threshold, "a number")
            if self.mode is None:
                raise InvalidFieldError(
                    f"{owner}.mode", self.mode, "'min' or 'max' when a metric_threshold is given"
                )
        if self.mode is not None:
            coerce_enum(self, "mode", Mode)
        floats_as_decoded(self, "std", "metric_threshold")

    def on_result(self, trial_id: str, result: JsonDict) -> tuple[Self, bool]:
        value = number(result.get(self.metric))
        count = (self.seen.get(trial_id) or 0) + 1
        window = (*(self.recent.get(trial_id) or ()), value)[-self.num_results :]
        stopper = msgspec.structs.replace(
            self,
            seen=self.seen.set(trial_id, count),
            recent=self.recent.set(trial_id, window),
        )
        return stopper, self._plateaued(count, window, value)

    def _plateaued(self, count: int, window: tuple[float | None, ...], value: float | None) -> bool:
        if count < self.grace_period or len(window) < self.num_results:
            return False
        threshold = self.metric_threshold
        if threshold is not None:
            if value is None:
                return False
            if self.mode is Mode.MIN and value > threshold:
                return False
            if self.mode is Mode.MAX and value < threshold:
                return False
        values = [v for v in window if v is not None]
        if len(values) < len(window):
            return False
        return population_std(values) < self.std

    def stop_all(self, elapsed: float) -> str | None:
        del elapsed
        return None


class ExperimentPlateauStopper(msgspec.Struct, frozen=True, tag=True):
    """Stops the whole experiment once the `top` best values of `metric`
    seen across all trials have a standard deviation of at most `std`, and
    have kept it for `patience` more results.

    State: `best` holds the `top` best values so far (ascending), `streak`
    how many results in a row found them plateaued.
    """

    metric: str
    std: float = 0.001
    top: int = 10
    mode: ModeArg = Mode.MIN
    patience: int = 0
    best: tuple[float, ...] = ()
    streak: int = 0

    def __post_init__(self) -> None:
        owner = "ExperimentPlateauStopper"
        require_name(f"{owner}.metric", self.metric)
        coerce_enum(self, "mode", Mode)
        require_int(f"{owner}.top", self.top, minimum=2)
        require_int(f"{owner}.patience", self.patience, minimum=0)
        std: object = self.std
        if not (is_number(std) and 0 < std < math.inf):
            raise InvalidFieldError(f"{owner}.std", std, "a finite number > 0")
        floats_as_decoded(self, "std")

    def on_result(self, trial_id: str, result: JsonDict) -> tuple[Self, bool]:
        del trial_id
        value = number(result.get(self.metric))
        if value is None or math.isnan(value):
            return self, self._stops
        ordered = sorted((*self.best, value))
        best = tuple(ordered[: self.top] if self.mode is Mode.MIN else ordered[-self.top :])
        plateaued = self._plateaued(best)
        streak = self.streak + 1 if plateaued else 0
        stopper = msgspec.structs.replace(self, best=best, streak=streak)
        return stopper, stopper._stops

    def _plateaued(self, best: tuple[float, ...]) -> bool:
        return len(best) == self.top and population_std(best) <= self.std

    @property
    def _stops(self) -> bool:
        return self._plateaued(self.best) and self.streak >= self.patience

    def stop_all(self, elapsed: float) -> str | None:
        del elapsed
        if self._stops:
            return (
                f"the top {self.top} values of {self.metric!r} plateaued "
                f"(std <= {self.std:g}; ExperimentPlateauStopper)"
            )
        return None
