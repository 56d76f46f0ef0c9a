"""A trial's own stopping rule: the `done` flag, or any criterion reached."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from tunecore.core.results import DONE, is_number
from tunecore.model import JsonValue


class StopCriterionError(msgspec.Struct, frozen=True):
    """A stopping criterion could not be evaluated on a result; the trial
    fails with `message`, as the seed does."""

    message: str


def check_stop(
    criteria: Mapping[str, float], flat_result: Mapping[str, JsonValue]
) -> bool | StopCriterionError:
    """True when the result says `done` or any metric reached (>=) its
    threshold. A criterion on a metric the result lacks, or holds a
    non-number in, is an error naming the metric and the keys present."""
    if flat_result.get(DONE) is True:
        return True
    for metric, threshold in criteria.items():
        if metric not in flat_result:
            present = ", ".join(sorted(flat_result)) or "(none)"
            return StopCriterionError(
                f"Stopping criterion {metric!r} is not in the reported result; "
                f"keys present: {present}"
            )
        value = flat_result[metric]
        if not is_number(value):
            return StopCriterionError(
                f"Stopping criterion {metric!r} needs a number, the result holds {value!r}"
            )
        if value >= threshold:  # type: ignore[operator]
            return True
    return False
