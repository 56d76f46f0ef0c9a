"""A trial's metric analysis, kept compact: most of it is its last result.

The analysis holds, for every numeric metric a trial reported, its
max/min/avg/last (`MetricStats`). For a metric reported once, and for one
that reported the same value every time, the four are one number: the
value in the last result. A trial keeps only what its last result does not
tell (`compact`), and the whole analysis is derived on demand (`whole`).
At 100,000 finished one-report trials that is ten structs and a dict less
per trial (0.75 KB of the driver's memory each; nine metrics, Ray's
autofilled ones among them).

What a trial stores:

- `kept`: the stats the last result does not tell, by metric name in
  sorted order (so that stats compacted on decoding an old snapshot equal,
  byte for byte, those the live run kept);
- `unanalysed`: the numeric metrics of the last result that have no stats
  at all (a restore can make a checkpoint's metrics, perhaps another
  trial's, the last result; nothing else can), in the last result's order.

The last result tells a metric's stats when its value there is a number
whose float is each of max, min, avg and last exactly: the same float,
and for a zero the same sign (a NaN is never told, NaN being unequal to
itself). `compact` is the rule; the step keeps it incrementally
(`core.results.analyse`) and a snapshot of an older format is put in this
form as it decodes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import msgspec

from tunecore.model.json import JsonValue
from tunecore.model.numbers import is_number


class MetricStats(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Running statistics of one numeric metric over a trial's results."""

    max: float
    min: float
    avg: float
    last: float


def metric_value(value: JsonValue) -> float | None:
    """The number a result's value is to the analysis (ints as floats),
    None for what it leaves out (booleans, strings, lists, None)."""
    return float(value) if is_number(value) else None


def once(value: float) -> MetricStats:
    """The stats of a metric reported once, as `value`."""
    return MetricStats(value, value, value, value)


def tells(value: JsonValue, stats: MetricStats) -> bool:
    """Whether a last result's `value` tells `stats` exactly: every one of
    the four is its float (for a zero, with its sign)."""
    number = metric_value(value)
    if number is None or not (
        stats.max == number and stats.min == number and stats.avg == number and stats.last == number
    ):
        return False
    if number != 0.0:
        return True
    sign = math.copysign(1.0, number)
    return all(math.copysign(1.0, part) == sign for part in (stats.max, stats.min, stats.avg))


def whole(
    kept: Mapping[str, MetricStats], unanalysed: tuple[str, ...], last: Mapping[str, JsonValue]
) -> dict[str, MetricStats]:
    """The whole analysis of a trial whose flattened last result is `last`:
    in the last result's order, then the metrics it lacks, by name."""
    analysis: dict[str, MetricStats] = {}
    for metric, value in last.items():
        stats = kept.get(metric)
        if stats is None:
            number = metric_value(value)
            if number is None or metric in unanalysed:
                continue
            stats = once(number)
        analysis[metric] = stats
    if len(analysis) < len(kept) or not kept.keys() <= analysis.keys():
        for metric, stats in kept.items():
            analysis.setdefault(metric, stats)
    return analysis


def stats_of(
    metric: str,
    kept: Mapping[str, MetricStats],
    unanalysed: tuple[str, ...],
    last: Mapping[str, JsonValue],
) -> MetricStats | None:
    """One metric's stats (`whole(kept, unanalysed, last).get(metric)`)."""
    stats = kept.get(metric)
    if stats is not None or metric in unanalysed:
        return stats
    number = metric_value(last.get(metric))
    return None if number is None else once(number)


def compact(
    analysis: Mapping[str, MetricStats], last: Mapping[str, JsonValue]
) -> tuple[dict[str, MetricStats], tuple[str, ...]]:
    """The kept stats and the unanalysed metrics of a trial whose whole
    analysis is `analysis` and flattened last result is `last` (the
    module's docstring says what each holds)."""
    kept = {
        metric: stats
        for metric, stats in sorted(analysis.items())
        if not tells(last.get(metric), stats)
    }
    unanalysed = tuple(
        metric
        for metric, value in last.items()
        if metric not in analysis and metric_value(value) is not None
    )
    return kept, unanalysed
