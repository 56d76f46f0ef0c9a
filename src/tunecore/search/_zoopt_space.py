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

from tunecore.core.search.domains import Choice, QRandInt, QUniform, RandInt, Uniform, copy_json
from tunecore.core.search.variants import Parameter, ParamSpace, format_path
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.search._dimension import Dimension as OneParameter
from tunecore.search._dimension import as_float, as_integer, index_of, integer_range, single

Dimension = OneParameter[tuple[Any, ...]]
"""One parameter: its entry is its `Dimension2` tuple."""


def dimensions(space: ParamSpace) -> list[Dimension]:
    """The ZOOpt dimension of every searched parameter (the table)."""
    return [_dimension(parameter) for parameter in space.sampled]


def config_values(found: list[Dimension], x: list[Any]) -> dict[Path, JsonValue]:
    """The config's value of each parameter, from a solution's x (the
    searched dimensions' values, in order)."""
    searched = iter(x)
    return {d.parameter.path: d.decode(next(searched) if d.entry else None) for d in found}


def solution_x(found: list[Dimension], values: Mapping[Path, JsonValue]) -> tuple[Any, ...]:
    """A point's values (checked against the space) as a solution's x."""
    return tuple(d.encode(values[d.parameter.path]) for d in found if d.entry is not None)


def _dimension(parameter: Parameter) -> Dimension:
    from zoopt import ValueType  # noqa: PLC0415 - optional package

    domain = parameter.domain
    if isinstance(domain, Choice):
        categories = domain.categories
        if len(categories) == 1:
            return single(parameter, categories[0])
        return Dimension(
            parameter,
            (ValueType.GRID, list(range(len(categories)))),
            lambda index: copy_json(categories[int(index)]),
            lambda value: index_of(categories, value),
        )
    if isinstance(domain, Uniform | QUniform):
        low, high = domain.low, domain.high
        if low == high:
            return single(parameter, low)
        q = domain.q if isinstance(domain, QUniform) else None
        return Dimension(
            parameter,
            (ValueType.CONTINUOUS, [low, high], q or 1e-12),
            lambda v: min(max(round(float(v) / q) * q if q else float(v), low), high),
            as_float,
        )
    if isinstance(domain, RandInt | QRandInt):
        step, lowest, highest = integer_range(domain)
        first, last = lowest // step, highest // step  # counted in multiples of step
        if first == last:
            return single(parameter, lowest)
        return Dimension(
            parameter,
            (ValueType.DISCRETE, [first, last], True),
            lambda k: int(k) * step,
            lambda value: as_integer(value) // step,
        )
    raise InvalidFieldError(
        format_path(parameter.path),
        domain,
        "a domain ZOOptSearch can model (tune.uniform, quniform, randint, qrandint, choice: "
        "ZOOpt has no log or normal dimension, as in Ray Tune)",
    )


__all__ = ["Dimension", "config_values", "dimensions", "solution_x"]
