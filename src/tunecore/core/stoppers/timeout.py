"""Ray Tune's `TimeoutStopper`: the experiment's time budget as a stopper."""

from __future__ import annotations

import datetime
from typing import Self

import msgspec

from tunecore.model import InvalidFieldError, JsonDict
from tunecore.model.errors import require_finite_non_negative
from tunecore.model.numbers import is_number


class TimeoutStopper(msgspec.Struct, frozen=True, tag=True):
    """Stops every trial once the experiment has run `timeout` seconds (a
    number, or a `datetime.timedelta`, stored as its seconds).

    Time is the events' (see `tunecore.core.stoppers.base`), so, as in Ray,
    the time an experiment was down before a resume does not count. This is
    what `TuneConfig(time_budget_s=...)` does too.
    """

    timeout: float | datetime.timedelta

    def __post_init__(self) -> None:
        timeout: object = self.timeout
        if isinstance(timeout, datetime.timedelta):
            timeout = timeout.total_seconds()
        elif not is_number(timeout):
            raise InvalidFieldError(
                "TimeoutStopper.timeout", timeout, "a number of seconds or a datetime.timedelta"
            )
        require_finite_non_negative("TimeoutStopper.timeout", timeout)
        msgspec.structs.force_setattr(self, "timeout", float(timeout))

    @property
    def seconds(self) -> float:
        timeout = self.timeout
        assert isinstance(timeout, float)  # __post_init__ made it one
        return timeout

    def on_result(self, trial_id: str, result: JsonDict) -> tuple[Self, bool]:
        del trial_id, result
        return self, False

    def stop_all(self, elapsed: float) -> str | None:
        if elapsed >= self.seconds:
            return f"Reached timeout of {self.seconds:g} seconds (TimeoutStopper)"
        return None
