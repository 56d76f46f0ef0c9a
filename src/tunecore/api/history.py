"""A trial's every result, read back from the result.json its trial
directory holds (the file `JsonLoggerCallback` writes, one object per line).

The event log holds every result too, but replaying it to list them costs
the whole log; result.json is what Ray reads for `Result.metrics_dataframe`
and the `last-N-avg` scopes, and it is kept in line with the log on resume.
A line a crash (or a writer still running) cut short is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from tunecore.core.results import flatten
from tunecore.model import JsonDict

if TYPE_CHECKING:
    import pandas


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
