"""tunecore's search domains as nevergrad parameters, and nevergrad's values as configs.

Each searched parameter becomes one entry of an `ng.p.Dict`, named by its
'/'-joined path (as Ray names it), converted as Ray's
`NevergradSearch.convert_search_space` converts it:

| tunecore | nevergrad |
|---|---|
| uniform, quniform | ng.p.Scalar(lower, upper) |
| loguniform, qloguniform | ng.p.Log(lower, upper) |
| randint(lo, hi), qrandint | ng.p.Scalar on the integers (multiples of q) in range, integer-cast |
| lograndint, qlograndint | ng.p.Log on the integers in range, integer-cast |
| choice | ng.p.Choice over the categories' indices |
| randn, qrandn | ng.p.Scalar(init=mean) with a mutation step of sd |

Two deliberate differences from Ray, so that every suggestion lies in its
domain: Ray drops a quantization (with a warning) and suggests values off
the lattice, tunecore rounds each value to its multiple of q; Ray turns a
normal domain into an unbounded scalar around 0 with step 1, tunecore
centres it at the mean with step sd. A log domain's base does not change
its distribution, so it is not nevergrad's mutation `exponent` (Ray passes
it, and nevergrad warns that the bounds are too few steps apart). A domain with a single value is a
constant, not searched (nevergrad refuses an empty interval). A
`grid_search` or `sample_from` is refused by `spaces.searched_space`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tunecore.core.search.domains import (
    Choice,
    LogRandInt,
    LogUniform,
    QLogRandInt,
    QLogUniform,
    QRandInt,
    QRandN,
    QUniform,
    RandInt,
    RandN,
    Uniform,
    copy_json,
)
from tunecore.core.search.variants import Parameter, ParamSpace, format_path
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.model.numbers import is_number
from tunecore.search.spaces import label


@dataclass(frozen=True)
class Dimension:
    """One parameter as nevergrad sees it: how to build its nevergrad
    parameter (None: a single value, not searched), and how its value maps
    to the config's value and back."""

    parameter: Parameter
    make: Callable[[], Any] | None
    decode: Callable[[Any], JsonValue]
    encode: Callable[[JsonValue], Any]


def dimensions(space: ParamSpace) -> list[Dimension]:
    """The nevergrad dimension of every searched parameter (the table)."""
    return [_dimension(parameter) for parameter in space.sampled]


def parametrization(found: list[Dimension]) -> Any:
    """A fresh `ng.p.Dict` of the searched dimensions (each optimizer
    freezes its own, so it is built anew for each)."""
    import nevergrad as ng  # noqa: PLC0415 - optional package, loaded by the searcher

    return ng.p.Dict(**{label(d.parameter.path): d.make() for d in found if d.make is not None})


def config_values(found: list[Dimension], value: Mapping[str, Any]) -> dict[Path, JsonValue]:
    """The config's value of each parameter, from a candidate's value."""
    return {
        d.parameter.path: d.decode(value[label(d.parameter.path)] if d.make else None)
        for d in found
    }


def candidate_value(found: list[Dimension], values: Mapping[Path, JsonValue]) -> dict[str, Any]:
    """A point's values (checked against the space) as nevergrad's value of
    the `ng.p.Dict`, for `optimizer.suggest`."""
    return {
        label(d.parameter.path): d.encode(values[d.parameter.path])
        for d in found
        if d.make is not None
    }


def _dimension(parameter: Parameter) -> Dimension:
    domain = parameter.domain
    if isinstance(domain, Choice):
        return _choice(parameter, domain.categories)
    if isinstance(domain, Uniform | QUniform | LogUniform | QLogUniform):
        low, high = domain.low, domain.high
        if low == high:
            return _single(parameter, low)
        lattice = domain.q if isinstance(domain, QUniform | QLogUniform) else None
        if isinstance(domain, LogUniform | QLogUniform):
            make = _maker("Log", lower=low, upper=high)
        else:
            make = _maker("Scalar", lower=low, upper=high)
        return Dimension(parameter, make, _float_decoder(low, high, lattice), _float)
    if isinstance(domain, RandInt | LogRandInt | QRandInt | QLogRandInt):
        if isinstance(domain, RandInt | LogRandInt):
            q, first, last = 1, domain.low, domain.high - 1
        else:
            q = domain.q
            first, last = -(-domain.low // q) * q, domain.high // q * q
        if first == last:
            return _single(parameter, first)
        if isinstance(domain, LogRandInt | QLogRandInt):
            make = _maker("Log", lower=first, upper=last, integer=True)
            step = 1  # on the log scale: rounded to q in the config
        else:
            make = _maker("Scalar", lower=first // q, upper=last // q, integer=True)
            step = q  # the nevergrad integer counts multiples of q
        return Dimension(
            parameter,
            make,
            lambda v: min(max(round(int(v) * step / q) * q, first), last),
            lambda value: _integer(value) // step,
        )
    if isinstance(domain, RandN | QRandN):
        if domain.sd == 0:
            return _single(parameter, domain.mean)
        mean, sd = domain.mean, domain.sd
        normal_q = domain.q if isinstance(domain, QRandN) else None
        return Dimension(
            parameter,
            lambda: _scalar_around(mean, sd),
            lambda v: float(round(float(v) / normal_q) * normal_q) if normal_q else float(v),
            _float,
        )
    raise InvalidFieldError(
        format_path(parameter.path), domain, "a search domain NevergradSearch can model"
    )


def _maker(kind: str, *, integer: bool = False, **arguments: object) -> Callable[[], Any]:
    """Builds `ng.p.<kind>(**arguments)`, integer-cast if `integer`."""

    def make() -> Any:
        import nevergrad as ng  # noqa: PLC0415 - optional package

        made = getattr(ng.p, kind)(**arguments)
        return made.set_integer_casting() if integer else made

    return make


def _scalar_around(mean: float, sd: float) -> Any:
    import nevergrad as ng  # noqa: PLC0415 - optional package

    return ng.p.Scalar(init=mean).set_mutation(sigma=sd)


def _float_decoder(low: float, high: float, q: float | None) -> Callable[[Any], JsonValue]:
    """A nevergrad float as the domain's value: within the bounds (nevergrad
    keeps it there, up to rounding), on the lattice of q if quantized."""

    def decode(value: Any) -> JsonValue:
        number = float(value)
        if q is not None:
            number = round(number / q) * q
        return min(max(number, low), high)

    return decode


def _choice(parameter: Parameter, categories: list[JsonValue]) -> Dimension:
    if len(categories) == 1:
        return _single(parameter, categories[0])
    indices = list(range(len(categories)))
    return Dimension(
        parameter,
        _maker("Choice", choices=indices),
        lambda index: copy_json(categories[int(index)]),
        lambda value: _index_of(categories, value),
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


__all__ = ["Dimension", "candidate_value", "config_values", "dimensions", "parametrization"]
