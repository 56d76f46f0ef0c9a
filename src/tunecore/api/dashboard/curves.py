"""One trial's learning curves, kept in bounded memory however long it runs.

A trial that reports a million results must not cost the dashboard a
million points per metric: a `Curve` keeps at most `MAX_POINTS` rows. When
full it drops every other row and from then on keeps one result in
`stride` (which doubles each time), so what it holds stays evenly spread
over the whole run. The newest result is always shown, kept or not, so a
curve never ends short of where the trial is. Values are 8-byte floats in
`array`s (no Python object per point); a metric first reported late is
NaN before it, and a trial reporting more than `MAX_METRICS` numeric keys
keeps the first ones.
"""

from __future__ import annotations

import math
from array import array

MAX_POINTS = 2048
MAX_METRICS = 64


class Curve:
    """The numeric values of one trial's results, by key, row-aligned."""

    def __init__(self) -> None:
        self.columns: dict[str, array[float]] = {}
        self.rows = 0
        self.seen = 0
        self.stride = 1
        self.last: dict[str, float] = {}

    def add(self, values: dict[str, float]) -> None:
        """One more result's numeric values."""
        self.seen += 1
        self.last = values
        if (self.seen - 1) % self.stride:
            return
        for key, value in values.items():
            column = self.columns.get(key)
            if column is None:
                if len(self.columns) >= MAX_METRICS:
                    continue
                column = self.columns[key] = array("d", [math.nan] * self.rows)
            column.append(value)
        self.rows += 1
        for key, column in self.columns.items():
            if len(column) < self.rows:
                column.append(values.get(key, math.nan))
        if self.rows > MAX_POINTS:
            for key, column in self.columns.items():
                self.columns[key] = column[::2]
            self.rows = len(next(iter(self.columns.values())))
            self.stride *= 2

    def series(self, x: str, y: str) -> list[tuple[float, float]]:
        """(x, y) for each kept result with both (and the newest result)."""
        xs, ys = self.columns.get(x), self.columns.get(y)
        points = []
        if xs is not None and ys is not None:
            points = [(a, b) for a, b in zip(xs, ys, strict=True) if _finite(a) and _finite(b)]
        newest = (self.last.get(x, math.nan), self.last.get(y, math.nan))
        if (self.seen - 1) % self.stride and _finite(newest[0]) and _finite(newest[1]):
            points.append(newest)
        return points


def _finite(value: float) -> bool:
    return not (math.isnan(value) or math.isinf(value))
