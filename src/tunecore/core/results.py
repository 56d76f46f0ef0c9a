"""Bookkeeping on reported results: flattening, the fields every recorded
result carries, and the running statistics of each numeric metric."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from math import isnan

import msgspec

from tunecore.model import JsonDict, JsonValue, MetricStats, TrialState
from tunecore.model.analysis import compact, metric_value, once, tells
from tunecore.model.json import flatten as flatten  # noqa: PLC0414 - read from here too
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
TIMESTEPS_THIS_ITER = "timesteps_this_iter"
EPISODES_THIS_ITER = "episodes_this_iter"
"""Counts a result may report (RLlib's, and Ray's docs' convention): the
wrapper sums them into the two totals below, as Ray's `Trainable.train` does."""
TIMESTEPS_TOTAL = "timesteps_total"
EPISODES_TOTAL = "episodes_total"
TIMESTEPS_SINCE_RESTORE = "timesteps_since_restore"

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


def annotate(
    result: Mapping[str, JsonValue], *, trial_id: str, done: bool, experiment_tag: str
) -> JsonDict:
    """The result as recorded: with `trial_id`, `done` and (when the trial has
    one) `experiment_tag`, so every line of result.json stands on its own."""
    if experiment_tag:
        return {**result, TRIAL_ID: trial_id, DONE: done, EXPERIMENT_TAG: experiment_tag}
    return {**result, TRIAL_ID: trial_id, DONE: done}


def as_heard(result: Mapping[str, JsonValue]) -> JsonDict:
    """A recorded result as Ray Tune 2.60's result callbacks hear it, and so
    as its result files (result.json, progress.csv, TensorBoard: written by
    callbacks) keep it: without `experiment_tag`, which Ray's
    `Trial.update_last_result` adds only after the callbacks heard the
    result (and so do the metrics of `Result.best_checkpoints`, which Ray
    registers from that result). `trial.last_result` and `Result.metrics`
    have the tag, in the driver that ran the experiment and read back from
    its path alike (Ray keeps `last_result` in its experiment state)."""
    if EXPERIMENT_TAG not in result:
        return dict(result)
    return {key: value for key, value in result.items() if key != EXPERIMENT_TAG}


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
    trial: TrialState, flat_result: Mapping[str, JsonValue], recorded: Mapping[str, JsonValue]
) -> dict[str, MetricStats]:
    """Fold one flattened result into the trial's per-metric
    max/min/avg/last, and keep of them what `recorded` (the result as it
    becomes the last one, flattened) does not tell (`model.analysis`: the
    trial's `stats_beyond_last`; every numeric metric of `recorded` is
    analysed, so none is unanalysed after this).

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
    kept, unanalysed = trial.stats_beyond_last, trial.unanalysed
    last = flatten(trial.last_result) if trial.last_result else trial.last_result
    updated: dict[str, MetricStats] = {}
    kept_of, last_of, recorded_of = kept.get, last.get, recorded.get
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
        previous = kept_of(metric)
        if previous is None and metric not in unanalysed:
            told = metric_value(last_of(metric))  # the last result tells its stats
            if told is not None:
                previous = once(told)
        if previous is None:
            if recorded_of(metric) is value and not isnan(number):  # told
                continue
            updated[metric] = once(number)
            continue
        # Same results as max(number, hi) and min(number, lo), NaN included.
        hi, lo = previous.max, previous.min
        stats = MetricStats(
            hi if hi > number else number,
            lo if lo < number else number,
            previous.avg * keep + number * add,
            number,
        )
        if recorded_of(metric) is not value or not tells(value, stats):
            updated[metric] = stats
    if kept or last:
        _carry(updated, kept, unanalysed, last, recorded)
    return dict(sorted(updated.items())) if len(updated) > 1 else updated


def _carry(
    updated: dict[str, MetricStats],
    kept: Mapping[str, MetricStats],
    unanalysed: tuple[str, ...],
    last: Mapping[str, JsonValue],
    recorded: Mapping[str, JsonValue],
) -> None:
    """Add to `updated` the stats of the metrics the new result did not
    report as numbers: they stay what they were, and the new last result
    (`recorded`) cannot tell them. (A metric it reported is in `updated`
    or a number of `recorded`: the annotations `recorded` adds are none.)"""
    for metric, stats in kept.items():
        if metric not in updated and metric_value(recorded.get(metric)) is None:
            updated[metric] = stats
    for metric, value in last.items():
        if metric in updated or metric in kept or metric in unanalysed:
            continue
        number = metric_value(value)
        if number is not None and metric_value(recorded.get(metric)) is None:
            updated[metric] = once(number)


def with_last_result(trial: TrialState, last_result: JsonDict) -> TrialState:
    """`trial` with `last_result` as its last result and its metric analysis
    unchanged (kept, as always, compact against the last result: a
    restore's checkpoint metrics tell other stats than the result before)."""
    kept, unanalysed = compact(trial.metric_analysis, flatten(last_result))
    return msgspec.structs.replace(
        trial, recorded_result=last_result, recorded_stats=kept, unanalysed=unanalysed
    )


def marked_done(trial: TrialState) -> TrialState:
    """`trial` with its last result (if any) marked `done`. The flag a
    recorded result carries is a boolean, never analysed: the stats are
    kept as they are (anything else there, `with_last_result` rebases)."""
    last = trial.last_result
    if not last:
        return trial
    if type(last.get(DONE, False)) is bool:
        return msgspec.structs.replace(trial, recorded_result={**last, DONE: True})
    return with_last_result(trial, {**last, DONE: True})


def repeated_at_end(trial: TrialState) -> JsonDict:
    """The result Ray Tune 2.60's controller takes a function trainable's
    end for (its `RESULT_DUPLICATE` branch): the trial's last result again,
    marked `done`; for a trial that never reported, its id marked `done`.
    The stoppers hear it (`ExperimentConfig.end_repeats_result`)."""
    return {**trial.last_result, TRIAL_ID: trial.trial_id, DONE: True}


def values_of(rows: Sequence[JsonDict], metric: str) -> list[float]:
    """Every number reported for `metric` ('/'-joined for nested keys), in
    order; results without it, or with another kind of value, are passed
    over. A `null` counts as NaN: it is how result.json keeps a NaN or
    infinite value (always valid JSON, see `shell.storage.layout`), and a trial
    whose window holds one must be passed over as its in-memory scores
    are (Ray's `filter_nan_and_inf`), not ranked on its other values."""
    values = []
    for row in rows:
        flat = flatten(row)
        if metric not in flat:
            continue
        value = flat[metric]
        if is_number(value):
            values.append(float(value))
        elif value is None:
            values.append(math.nan)
    return values


def last_n_average(rows: Sequence[JsonDict], metric: str, n: int) -> float | None:
    """Ray's `last-N-avg`: the mean of the last `n` numbers reported for
    `metric` (fewer if the trial reported fewer); None if it reported none."""
    window = values_of(rows, metric)[-n:]
    return math.fsum(window) / len(window) if window else None
