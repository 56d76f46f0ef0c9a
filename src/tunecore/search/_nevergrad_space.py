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

from collections.abc import Callable
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
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.search._dimension import Dimension as OneParameter
from tunecore.search._dimension import (
    as_float,
    as_integer,
    float_decoder,
    index_of,
    integer_decoder,
    integer_range,
    single,
)
from tunecore.search.spaces import label

Dimension = OneParameter[Callable[[], Any]]
"""One parameter: its entry builds its nevergrad parameter."""


def dimensions(space: ParamSpace) -> list[Dimension]:
    """The nevergrad dimension of every searched parameter (the table)."""
    return [_dimension(parameter) for parameter in space.sampled]


def parametrization(found: list[Dimension]) -> Any:
    """A fresh `ng.p.Dict` of the searched dimensions (each optimizer
    freezes its own, so it is built anew for each)."""
    import nevergrad as ng  # noqa: PLC0415 - optional package, loaded by the searcher

    return ng.p.Dict(**{label(d.parameter.path): d.entry() for d in found if d.entry is not None})


def _dimension(parameter: Parameter) -> Dimension:
    domain = parameter.domain
    if isinstance(domain, Choice):
        return _choice(parameter, domain.categories)
    if isinstance(domain, Uniform | QUniform | LogUniform | QLogUniform):
        low, high = domain.low, domain.high
        if low == high:
            return single(parameter, low)
        lattice = domain.q if isinstance(domain, QUniform | QLogUniform) else None
        if isinstance(domain, LogUniform | QLogUniform):
            make = _maker("Log", lower=low, upper=high)
        else:
            make = _maker("Scalar", lower=low, upper=high)
        return Dimension(parameter, make, float_decoder(low, high, lattice), as_float)
    if isinstance(domain, RandInt | LogRandInt | QRandInt | QLogRandInt):
        q, first, last = integer_range(domain)
        if first == last:
            return single(parameter, first)
        if isinstance(domain, LogRandInt | QLogRandInt):
            make = _maker("Log", lower=first, upper=last, integer=True)
            step = 1  # on the log scale: rounded to q in the config
        else:
            make = _maker("Scalar", lower=first // q, upper=last // q, integer=True)
            step = q  # the nevergrad integer counts multiples of q
        return Dimension(
            parameter,
            make,
            integer_decoder(step, q, first, last),
            lambda value: as_integer(value) // step,
        )
    if isinstance(domain, RandN | QRandN):
        if domain.sd == 0:
            return single(parameter, domain.mean)
        mean, sd = domain.mean, domain.sd
        normal_q = domain.q if isinstance(domain, QRandN) else None
        return Dimension(
            parameter,
            lambda: _scalar_around(mean, sd),
            lambda v: float(round(float(v) / normal_q) * normal_q) if normal_q else float(v),
            as_float,
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


def _choice(parameter: Parameter, categories: list[JsonValue]) -> Dimension:
    if len(categories) == 1:
        return single(parameter, categories[0])
    indices = list(range(len(categories)))
    return Dimension(
        parameter,
        _maker("Choice", choices=indices),
        lambda index: copy_json(categories[int(index)]),
        lambda value: index_of(categories, value),
    )


__all__ = ["Dimension", "dimensions", "parametrization"]
