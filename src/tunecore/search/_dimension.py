"""One searched parameter as a flat-space optimizer sees it, and the value
mappings every such optimizer shares.

Nevergrad, ZOOpt, HEBO and Ax each model a parameter their own way (an
`ng.p` maker, a `Dimension2` tuple, a HEBO or Ax parameter dict), but map
values the same way around it: a domain with a single value is a constant,
not searched; an integer domain is the multiples of q in its bounds; a
quantized float is rounded onto its lattice within its bounds; a choice is
searched by the index of its category (so any JSON value can be one).
Those mappings live here once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tunecore.core.search.domains import LogRandInt, QLogRandInt, QRandInt, RandInt, copy_json
from tunecore.core.search.variants import Parameter
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.model.numbers import is_number
from tunecore.search.spaces import label

E = TypeVar("E")


@dataclass(frozen=True)
class Dimension(Generic[E]):
    """One parameter: the optimizer's entry for it (None: a single value,
    not searched), and how the optimizer's value maps to the config's value
    and back."""

    parameter: Parameter
    entry: E | None
    decode: Callable[[Any], JsonValue]
    encode: Callable[[JsonValue], Any]


def config_values(found: list[Dimension[Any]], named: Mapping[str, Any]) -> dict[Path, JsonValue]:
    """The config's value of each parameter, from the optimizer's values
    named by label (a suggestion: an `ng.p.Dict` value, a HEBO row, an Ax
    parameterization)."""
    return {
        d.parameter.path: d.decode(named[label(d.parameter.path)] if d.entry else None)
        for d in found
    }


def by_label(found: list[Dimension[Any]], values: Mapping[Path, JsonValue]) -> dict[str, Any]:
    """A point's values (checked against the space) as the optimizer's,
    named by label: what `config_values` reads back."""
    return {
        label(d.parameter.path): d.encode(values[d.parameter.path])
        for d in found
        if d.entry is not None
    }


def integer_decoder(step: int, q: int, first: int, last: int) -> Callable[[Any], JsonValue]:
    """An optimizer's integer (counting multiples of `step`) as the
    domain's value: a multiple of q from `first` to `last`."""
    return lambda v: min(max(round(round(float(v)) * step / q) * q, first), last)


def single(parameter: Parameter, value: JsonValue) -> Dimension[Any]:
    """A domain with one value: a constant of the config."""
    return Dimension(parameter, None, lambda _: copy_json(value), lambda _: None)


def integer_range(domain: RandInt | LogRandInt | QRandInt | QLogRandInt) -> tuple[int, int, int]:
    """`(q, first, last)`: the domain's values are the multiples of q from
    `first` to `last`, both included (randint's high is exclusive)."""
    if isinstance(domain, RandInt | LogRandInt):
        return 1, domain.low, domain.high - 1
    q = domain.q
    return q, -(-domain.low // q) * q, domain.high // q * q


def float_decoder(low: float, high: float, q: float | None) -> Callable[[Any], JsonValue]:
    """An optimizer's float as the domain's value: within the bounds (the
    optimizer keeps it there, up to rounding), on the lattice of q if
    quantized."""

    def decode(value: Any) -> JsonValue:
        number = float(value)
        if q is not None:
            number = round(number / q) * q
        return min(max(number, low), high)

    return decode


def as_float(value: JsonValue) -> float:
    assert is_number(value)  # `point_values` checked it against the domain
    return float(value)


def as_integer(value: JsonValue) -> int:
    assert is_number(value)  # `point_values` checked it against the domain
    return int(value)


def index_of(categories: list[JsonValue], value: JsonValue) -> int:
    """The index of `value` among `categories` (by type and value: 1 is not True)."""
    for index, category in enumerate(categories):
        if type(category) is type(value) and category == value:
            return index
    raise InvalidFieldError("value", value, f"one of {categories!r}")


__all__ = [
    "Dimension",
    "as_float",
    "as_integer",
    "by_label",
    "config_values",
    "float_decoder",
    "index_of",
    "integer_decoder",
    "integer_range",
    "single",
]
