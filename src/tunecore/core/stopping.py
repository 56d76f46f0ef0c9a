"""A trial's own stopping rule: the `done` flag, or any criterion reached."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from tunecore.core.results import DONE
from tunecore.model import JsonValue

Threshold = float | bool
"""A criterion's threshold. Booleans compare as numbers, as they do in Ray
Tune's `result[metric] >= threshold` (`{"done": True}`, `{"converged": True}`)."""


class StopCriterionError(msgspec.Struct, frozen=True):
    """A stopping criterion could not be evaluated on a result; the trial
    fails with `message`, as the seed does."""

    message: str


def check_stop(
    criteria: Mapping[str, Threshold], flat_result: Mapping[str, JsonValue]
) -> bool | StopCriterionError:
    """True when the result says `done` or any metric reached (>=) its
    threshold, booleans counting as 0 and 1. A criterion on a metric the
    result lacks, or holds something else than a number or a boolean in, is
    an error naming the metric and the keys present."""
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
        if not isinstance(value, int | float):  # bool is an int
            return StopCriterionError(
                f"Stopping criterion {metric!r} needs a number or a boolean, "
                f"the result holds {value!r}"
            )
        if value >= threshold:
            return True
    return False
