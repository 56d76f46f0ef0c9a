"""`ray.tune.experimental.output.AirVerbosity`: the levels Ray's newer
console output takes in `RunConfig(verbose=...)`, and `get_air_verbosity`,
which scripts call to learn which of Ray's two outputs is on.

The rules of `get_air_verbosity(verbose)`, as Ray 2.60's: None when the
environment variable RAY_AIR_NEW_OUTPUT is "0" (Ray's older output is on);
else `verbose` itself when it is an AirVerbosity, and otherwise the
AirVerbosity of its number capped at 2 (a Verbosity or an int; Verbosity 3
is AirVerbosity 2; a number below 0 is a ValueError naming it).
"""

from __future__ import annotations

import enum
import os

from tunecore._not_provided import not_provided_getattr


class AirVerbosity(enum.IntEnum):
    """0 prints nothing but errors, 1 the experiment's status, 2 a line per
    result too. An `int`, so `RunConfig(verbose=AirVerbosity.DEFAULT)` is
    `verbose=1`, which prints the same."""

    SILENT = 0
    DEFAULT = 1
    VERBOSE = 2

    def __repr__(self) -> str:
        return str(self.value)


def get_air_verbosity(verbose: int) -> AirVerbosity | None:
    """The AirVerbosity `verbose` stands for, or None when Ray's older
    output is on (see the module doc)."""
    if os.environ.get("RAY_AIR_NEW_OUTPUT", "1") == "0":
        return None
    if isinstance(verbose, AirVerbosity):
        return verbose
    return AirVerbosity(min(2, int(verbose)))


__all__ = ["AirVerbosity", "get_air_verbosity"]

__getattr__ = not_provided_getattr(__name__)
