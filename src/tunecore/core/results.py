"""Bookkeeping on reported results: flattening, the fields every recorded
result carries, and the running statistics of each numeric metric."""

from __future__ import annotations

from collections.abc import Mapping

from tunecore.model import JsonDict, JsonValue, MetricStats
from tunecore.model.numbers import is_int, is_number

TRAINING_ITERATION = "training_iteration"
DONE = "done"
TRIAL_ID = "trial_id"
EXPERIMENT_TAG = "experiment_tag"
SHOULD_CHECKPOINT = "should_checkpoint"
RESULT_DUPLICATE = "__duplicate__"
"""Ray's key for the end of a function trainable: a result holding it (set
to True) says the trainable ended on its own after its last result; it is
no result of its own (see `lifecycle.end_training`)."""
DEFAULT_METRIC = "_metric"
"""Where a number a function trainable returns is reported (Ray's name)."""

# What the trainable wrapper measures and adds to every result (the core
# only reads them): every result-key name lives in this module.
TIME_THIS_ITER_S = "time_this_iter_s"
TIME_TOTAL_S = "time_total_s"
TIME_SINCE_RESTORE = "time_since_restore"
ITERATIONS_SINCE_RESTORE = "iterations_since_restore"
TIMESTAMP = "timestamp"
DATE = "date"
"""The result's local time as Ray writes it (`DATE_FORMAT`)."""
PID = "pid"
HOSTNAME = "hostname"
NODE_IP = "node_ip"

DATE_FORMAT = "%Y-%m-%d_%H-%M-%S"

AUTOFILLED = frozenset(
    {
        DONE,
        TRAINING_ITERATION,
        TIME_THIS_ITER_S,
        TIME_TOTAL_S,
        TIME_SINCE_RESTORE,
        ITERATIONS_SINCE_RESTORE,
        TIMESTAMP,
        DATE,
        PID,
        HOSTNAME,
        NODE_IP,
        TRIAL_ID,
        EXPERIMENT_TAG,
        SHOULD_CHECKPOINT,
    }
)
"""The keys the trainable wrapper (and the core, on recording) fill in on
their own: a result holding nothing else (such as the final `done` of a
function that returned) is exempt from strict metric checking, as in Ray
Tune."""

_FLAT_TYPES = frozenset({float, int, str, bool, type(None), list})
"""Types a value of a flat result has (none is a dict, or a subclass of one)."""


def flatten(result: Mapping[str, JsonValue], separator: str = "/") -> JsonDict:
    """Nested dicts become '/'-joined keys (`{"a": {"b": 1}}` -> `{"a/b": 1}`);
    lists and scalars are left as they are. Stopping criteria, scores and
    metric analysis all address metrics by these flat names. A result that
    is already flat is returned as it is (read it, never mutate it): told
    by the set of its values' types when they are all plain (a third of
    the time of an `isinstance` per value; this runs three times per
    result)."""
    if _FLAT_TYPES.issuperset(map(type, result.values())):
        return result if isinstance(result, dict) else dict(result)
    for value in result.values():
        if isinstance(value, dict):
            break
    else:
        return result if isinstance(result, dict) else dict(result)
    flat: JsonDict = {}
    for key, value in result.items():
        if isinstance(value, dict):
            for sub_key, sub_value in flatten(value, separator).items():
                flat[f"{key}{separator}{sub_key}"] = sub_value
        else:
            flat[key] = value
    return flat


def annotate(
    result: Mapping[str, JsonValue], *, trial_id: str, done: bool, experiment_tag: str
) -> JsonDict:
    """The result as recorded: with `trial_id`, `done` and (when the trial has
    one) `experiment_tag`, so every line of result.json stands on its own."""
    if experiment_tag:
        return {**result, TRIAL_ID: trial_id, DONE: done, EXPERIMENT_TAG: experiment_tag}
    return {**result, TRIAL_ID: trial_id, DONE: done}


def is_end_marker(result: Mapping[str, JsonValue]) -> bool:
    """Whether `result` is the end of a function trainable (`RESULT_DUPLICATE`)."""
    return result.get(RESULT_DUPLICATE) is True


def ends_batch(result: Mapping[str, JsonValue]) -> bool:
    """Whether a batch of results a worker sends in one call ends at
    `result`: it is done, carries a checkpoint, or ends a function
    (`TrialHost.train_many`, and `TrialSession.report`, whose function
    waits there even when it may run ahead)."""
    return any(result.get(flag) is True for flag in (DONE, SHOULD_CHECKPOINT, RESULT_DUPLICATE))


def iteration_of(result: Mapping[str, JsonValue]) -> int:
    """A result's `training_iteration`; 0 when it has none."""
    value = result.get(TRAINING_ITERATION)
    return value if is_int(value) else 0


def analyse(
    analysis: Mapping[str, MetricStats], flat_result: Mapping[str, JsonValue]
) -> dict[str, MetricStats]:
    """Fold one flattened result into the per-metric max/min/avg/last.

    `avg` is the running mean over training iterations the way the seed
    computes it: with `step = training_iteration or 1`,
    `avg' = (value + (step - 1) * avg) / step`. It equals the arithmetic mean
    when every iteration reports once, and weights by iteration otherwise.
    It is evaluated as the convex combination `avg * (step-1)/step +
    value/step`, which cannot overflow to infinity for finite inputs the way
    the seed's sum can (two metrics near 1e308 gave `inf`).
    """
    step_value = flat_result.get(TRAINING_ITERATION)
    kind = type(step_value)
    numeric = kind is int or kind is float or is_number(step_value)  # exact types first: hot
    step = float(step_value) if numeric and step_value else 1.0  # type: ignore[arg-type]
    keep, add = (step - 1.0) / step, 1.0 / step
    updated = dict(analysis)
    previous_of = analysis.get
    for metric, value in flat_result.items():
        kind = type(value)
        if kind is float:
            number: float = value  # type: ignore[assignment]
        elif kind is str or kind is bool:  # names and flags: most of the rest
            continue
        elif kind is int or is_number(value):
            number = float(value)  # type: ignore[arg-type]
        else:
            continue
        previous = previous_of(metric)
        if previous is None:
            updated[metric] = MetricStats(number, number, number, number)
        else:
            # Same results as max(number, hi) and min(number, lo), NaN included.
            hi, lo = previous.max, previous.min
            updated[metric] = MetricStats(
                hi if hi > number else number,
                lo if lo < number else number,
                previous.avg * keep + number * add,
                number,
            )
    return updated
