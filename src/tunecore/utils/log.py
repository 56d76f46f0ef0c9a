"""`ray.tune.utils.log`: the verbosity levels `RunConfig(verbose=...)` and
`tune.run(verbose=...)` take, by name, as Ray's scripts write them
(`verbose=Verbosity.V1_EXPERIMENT`)."""

from __future__ import annotations

import enum


class Verbosity(enum.IntEnum):
    """How much a run prints: 0 only errors, 1 the experiment's status, 2
    a line per result too, 3 every detail. An `int` itself, so it is
    accepted wherever a verbosity number is."""

    V0_MINIMAL = 0
    V1_EXPERIMENT = 1
    V2_TRIAL_NORM = 2
    V3_TRIAL_DETAILS = 3


_level = Verbosity.V3_TRIAL_DETAILS


def set_verbosity(level: int) -> None:
    """Set the process-wide level `has_verbosity` compares against (Ray
    sets it from `verbose=` as a run starts; here only a script does)."""
    global _level  # noqa: PLW0603 - Ray's module-level setting, by design
    try:
        _level = Verbosity(int(level))
    except ValueError:
        raise ValueError(
            f"verbosity level={level!r} is not one of 0, 1, 2, 3 (Verbosity.V0_MINIMAL .. "
            "Verbosity.V3_TRIAL_DETAILS)"
        ) from None


def has_verbosity(level: int) -> bool:
    """Whether the level set by `set_verbosity` (at first 3) reaches `level`."""
    return _level >= int(level)


__all__ = ["Verbosity", "has_verbosity", "set_verbosity"]
