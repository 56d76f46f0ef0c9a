"""A trial's every result, read back from the result.json its trial
directory holds (the file `JsonLoggerCallback` writes, one object per line).

The event log holds every result too, but replaying it to list them costs
the whole log; result.json is what Ray reads for `Result.metrics_dataframe`
and the `last-N-avg` scopes, and it is kept in line with the log on resume.
A line a crash (or a writer still running) cut short is left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from tunecore.core.results import flatten
from tunecore.model import JsonDict
from tunecore.model.numbers import is_number

if TYPE_CHECKING:
    import pandas


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


def as_dataframe(rows: Sequence[JsonDict]) -> pandas.DataFrame:
    """One row per result, nested keys '/'-joined (as Ray's
    `pandas.json_normalize(rows, sep="/")`)."""
    frame: pandas.DataFrame = pandas_module().DataFrame([flatten(row) for row in rows])
    return frame


def pandas_module() -> ModuleType:
    """pandas, an optional dependency, or an error saying how to get it."""
    try:
        import pandas  # noqa: PLC0415 - optional dependency
    except ImportError as error:
        raise ImportError("results as a DataFrame need pandas: pip install pandas") from error
    return pandas
