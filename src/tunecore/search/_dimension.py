"""One searched parameter as a flat-space optimizer sees it, and the value
mappings every such optimizer shares.

Nevergrad, ZOOpt, HEBO and Ax each model a parameter their own way (an
`ng.p` maker, a `Dimension2` tuple, a HEBO or Ax parameter dict), but map
values the same way around it: a domain with a single value is a constant,
not searched; an integer domain is the multiples of q in its bounds; a
quantized float is rounded onto its lattice within its bounds; a choice is
searched by the index of its category (so any JSON value can be one).
Those mappings live here once, and so does the conversion itself
(`dimension`): an optimizer says only how it writes each kind of parameter
(its `Entries`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tunecore.core.search import domains
from tunecore.core.search.domains import copy_json
from tunecore.core.search.variants import Parameter, format_path
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.model.numbers import is_number
from tunecore.search.spaces import label

E = TypeVar("E")

RealDomain = domains.Uniform | domains.QUniform | domains.LogUniform | domains.QLogUniform
IntegerDomain = domains.RandInt | domains.LogRandInt | domains.QRandInt | domains.QLogRandInt
LogDomain = domains.LogUniform | domains.QLogUniform | domains.LogRandInt | domains.QLogRandInt


@dataclass(frozen=True)
class Dimension(Generic[E]):
    """One parameter: the optimizer's entry for it (None: a single value,
    not searched), and how the optimizer's value maps to the config's value
    and back."""

    parameter: Parameter
    entry: E | None
    decode: Callable[[Any], JsonValue]
    encode: Callable[[JsonValue], Any]


@dataclass(frozen=True)
class Entries(Generic[E]):
    """How one optimizer writes a searched parameter of each kind, given the
    parameter's label: `dimension` does the rest the same way for all."""

    choice: Callable[[str, list[Any]], E]
    """A choice's entry, from its label and its categories' indices (as
    `index` writes them)."""

    real: Callable[[str, float, float, RealDomain], E]
    """A float domain's entry, from its label, its bounds and the domain
    (its `log_base`, its q)."""

    integer: Callable[[str, int, int, IntegerDomain], E]
    """An integer domain's entry, from its label, its bounds counted in the
    optimizer's steps (on a log scale the integers themselves, else the
    multiples of q) and the domain (its `log_base`)."""

    refusal: str
    """What the error refusing any other domain says the optimizer models."""

    index: Callable[[int], Any] = int
    """A category's index as the optimizer's value."""

    log_scale: bool = True
    """Whether the optimizer has a log scale: a log domain is refused if not."""


def dimension(parameter: Parameter, entries: Entries[E]) -> Dimension[E]:
    """`parameter` as the optimizer `entries` describes searches it: a
    domain with one value is a constant, a quantized one is decoded onto its
    lattice, a choice is searched by its categories' indices; any other
    domain is an error naming the parameter's path."""
    name = label(parameter.path)
    domain = parameter.domain
    if isinstance(domain, domains.Choice):
        categories = domain.categories
        if len(categories) == 1:
            return single(parameter, categories[0])
        index = entries.index
        return Dimension(
            parameter,
            entries.choice(name, [index(i) for i in range(len(categories))]),
            lambda chosen: copy_json(categories[int(chosen)]),
            lambda value: index(index_of(categories, value)),
        )
    modelled = entries.log_scale or log_base(domain) is None
    if modelled and isinstance(domain, RealDomain):
        low, high = domain.low, domain.high
        if low == high:
            return single(parameter, low)
        q = domain.q if isinstance(domain, domains.QUniform | domains.QLogUniform) else None
        entry = entries.real(name, low, high, domain)
        return Dimension(parameter, entry, _float_decoder(low, high, q), as_float)
    if modelled and isinstance(domain, IntegerDomain):
        q, first, last = _integer_range(domain)
        if first == last:
            return single(parameter, first)
        step = 1 if log_base(domain) is not None else q  # on a log scale: q in the config
        return Dimension(
            parameter,
            entries.integer(name, first // step, last // step, domain),
            _integer_decoder(step, q, first, last),
            lambda value: _as_integer(value) // step,
        )
    raise InvalidFieldError(format_path(parameter.path), domain, entries.refusal)


def log_base(domain: object) -> float | None:
    """The base of a log-scaled domain; None for any other."""
    if isinstance(domain, LogDomain):
        return domain.base
    return None


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


def _integer_decoder(step: int, q: int, first: int, last: int) -> Callable[[Any], JsonValue]:
    """An optimizer's integer (counting multiples of `step`) as the
    domain's value: a multiple of q from `first` to `last`."""
    return lambda v: min(max(round(round(float(v)) * step / q) * q, first), last)


def single(parameter: Parameter, value: JsonValue) -> Dimension[Any]:
    """A domain with one value: a constant of the config."""
    return Dimension(parameter, None, lambda _: copy_json(value), lambda _: None)


def _integer_range(domain: IntegerDomain) -> tuple[int, int, int]:
    """`(q, first, last)`: the domain's values are the multiples of q from
    `first` to `last`, both included (randint's high is exclusive)."""
    if isinstance(domain, domains.RandInt | domains.LogRandInt):
        return 1, domain.low, domain.high - 1
    q = domain.q
    return q, -(-domain.low // q) * q, domain.high // q * q


def _float_decoder(low: float, high: float, q: float | None) -> Callable[[Any], JsonValue]:
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


def _as_integer(value: JsonValue) -> int:
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
    "Entries",
    "IntegerDomain",
    "RealDomain",
    "as_float",
    "by_label",
    "config_values",
    "dimension",
    "index_of",
    "log_base",
    "single",
]
