"""tunecore's search domains as ZOOpt dimensions, and ZOOpt's values as configs.

Each searched parameter becomes one dimension of a `zoopt.Dimension2`, in
the space's order, converted as Ray's `ZOOptSearch.convert_search_space`
converts it:

| tunecore | ZOOpt |
|---|---|
| uniform, quniform | (CONTINUOUS, [low, high], q or 1e-12) |
| randint(lo, hi), qrandint | (DISCRETE, [lo, hi - 1] (multiples of q, counted), True) |
| choice | (GRID, the categories' indices) |

ZOOpt has no log or normal dimension: a log or normal domain is refused
naming its path, as Ray refuses it. A deliberate difference: Ray keeps
qrandint's bounds and drops q (values off the lattice); tunecore counts the
multiples of q, so every value is in its domain. A domain with a single
value is a constant, not searched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tunecore.core.search.domains import QUniform
from tunecore.core.search.variants import ParamSpace
from tunecore.core.search.view import Path
from tunecore.model import JsonValue
from tunecore.search._dimension import Dimension as OneParameter
from tunecore.search._dimension import Entries, RealDomain, dimension

Dimension = OneParameter[tuple[Any, ...]]
"""One parameter: its entry is its `Dimension2` tuple."""


def dimensions(space: ParamSpace) -> list[Dimension]:
    """The ZOOpt dimension of every searched parameter (the table)."""
    return [dimension(parameter, _ENTRIES) for parameter in space.sampled]


def config_values(found: list[Dimension], x: list[Any]) -> dict[Path, JsonValue]:
    """The config's value of each parameter, from a solution's x (the
    searched dimensions' values, in order)."""
    searched = iter(x)
    return {d.parameter.path: d.decode(next(searched) if d.entry else None) for d in found}


def solution_x(found: list[Dimension], values: Mapping[Path, JsonValue]) -> tuple[Any, ...]:
    """A point's values (checked against the space) as a solution's x."""
    return tuple(d.encode(values[d.parameter.path]) for d in found if d.entry is not None)


def _grid(_name: str, indices: list[Any]) -> tuple[Any, ...]:
    from zoopt import ValueType  # noqa: PLC0415 - optional package

    return (ValueType.GRID, indices)


def _continuous(_name: str, low: float, high: float, domain: RealDomain) -> tuple[Any, ...]:
    from zoopt import ValueType  # noqa: PLC0415 - optional package

    q = domain.q if isinstance(domain, QUniform) else None
    return (ValueType.CONTINUOUS, [low, high], q or 1e-12)


def _discrete(_name: str, first: int, last: int, _domain: object) -> tuple[Any, ...]:
    """Counted in multiples of q, so every value is in its domain."""
    from zoopt import ValueType  # noqa: PLC0415 - optional package

    return (ValueType.DISCRETE, [first, last], True)


_ENTRIES = Entries[tuple[Any, ...]](
    choice=_grid,
    real=_continuous,
    integer=_discrete,
    refusal="a domain ZOOptSearch can model (tune.uniform, quniform, randint, qrandint, "
    "choice: ZOOpt has no log or normal dimension, as in Ray Tune)",
    log_scale=False,
)


__all__ = ["Dimension", "config_values", "dimensions", "solution_x"]
