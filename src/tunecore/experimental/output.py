"""`ray.tune.experimental.output.AirVerbosity`: the levels Ray's newer
console output takes in `RunConfig(verbose=...)`."""

from __future__ import annotations

import enum


class AirVerbosity(enum.IntEnum):
    """0 prints nothing but errors, 1 the experiment's status, 2 a line per
    result too. An `int`, so `RunConfig(verbose=AirVerbosity.DEFAULT)` is
    `verbose=1`, which prints the same."""

    SILENT = 0
    DEFAULT = 1
    VERBOSE = 2

    def __repr__(self) -> str:
        return str(self.value)


__all__ = ["AirVerbosity"]
