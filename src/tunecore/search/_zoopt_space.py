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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tunecore.core.search.domains import Choice, QRandInt, QUniform, RandInt, Uniform, copy_json
from tunecore.core.search.variants import Parameter, ParamSpace, format_path
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.model.numbers import is_number


@dataclass(frozen=True)
class Dimension:
    """One parameter as ZOOpt sees it: its `Dimension2` entry (None: a
    single value, not searched), and how its value maps to the config's
    value and back."""

    parameter: Parameter
    entry: tuple[Any, ...] | None
    decode: Callable[[Any], JsonValue]
    encode: Callable[[JsonValue], Any]


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
            return _single(parameter, categories[0])
        return Dimension(
            parameter,
            (ValueType.GRID, list(range(len(categories)))),
            lambda index: copy_json(categories[int(index)]),
            lambda value: _index_of(categories, value),
        )
    if isinstance(domain, Uniform | QUniform):
        low, high = domain.low, domain.high
        if low == high:
            return _single(parameter, low)
        q = domain.q if isinstance(domain, QUniform) else None
        return Dimension(
            parameter,
            (ValueType.CONTINUOUS, [low, high], q or 1e-12),
            lambda v: min(max(round(float(v) / q) * q if q else float(v), low), high),
            _float,
        )
    if isinstance(domain, RandInt | QRandInt):
        if isinstance(domain, QRandInt):  # multiples of q in [low, high]
            step, first, last = domain.q, -(-domain.low // domain.q), domain.high // domain.q
        else:  # [low, high)
            step, first, last = 1, domain.low, domain.high - 1
        if first == last:
            return _single(parameter, first * step)
        return Dimension(
            parameter,
            (ValueType.DISCRETE, [first, last], True),
            lambda k: int(k) * step,
            lambda value: _integer(value) // step,
        )
    raise InvalidFieldError(
        format_path(parameter.path),
        domain,
        "a domain ZOOptSearch can model (tune.uniform, quniform, randint, qrandint, choice: "
        "ZOOpt has no log or normal dimension, as in Ray Tune)",
    )


def _single(parameter: Parameter, value: JsonValue) -> Dimension:
    """A domain with one value: a constant of the config."""
    return Dimension(parameter, None, lambda _: copy_json(value), lambda _: None)


def _float(value: JsonValue) -> float:
    assert is_number(value)  # `point_values` checked it against the domain
    return float(value)


def _integer(value: JsonValue) -> int:
    assert is_number(value)  # `point_values` checked it against the domain
    return int(value)


def _index_of(categories: list[JsonValue], value: JsonValue) -> int:
    for index, category in enumerate(categories):
        if type(category) is type(value) and category == value:
            return index
    raise InvalidFieldError("value", value, f"one of {categories!r}")


__all__ = ["Dimension", "config_values", "dimensions", "solution_x"]
