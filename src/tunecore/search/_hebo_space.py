"""tunecore's search domains as HEBO parameters, and HEBO's values as configs.

Each searched parameter becomes one parameter of a HEBO `DesignSpace`,
named by its '/'-joined path (as Ray names it), converted as Ray's
`HEBOSearch.convert_search_space` converts it:

| tunecore | HEBO |
|---|---|
| uniform, quniform | num(lb=low, ub=high) |
| loguniform, qloguniform | pow(lb=low, ub=high, base) |
| randint(lo, hi), qrandint | int over the integers (multiples of q) in range |
| lograndint, qlograndint | pow_int(lb, ub, base) over the integers in range |
| choice | cat over the categories' indices |

HEBO has no normal parameter: randn and qrandn are refused naming their
path, as Ray refuses them. A deliberate difference, as for Nevergrad and
ZOOpt: Ray drops a quantization (with a warning) and suggests values off
the lattice; tunecore rounds each value onto it, so every suggestion lies
in its domain. A domain with a single value is a constant, not searched.
"""

from __future__ import annotations

from typing import Any

from tunecore.core.search.domains import (
    Choice,
    LogRandInt,
    LogUniform,
    QLogRandInt,
    QLogUniform,
    QRandInt,
    QUniform,
    RandInt,
    Uniform,
    copy_json,
)
from tunecore.core.search.variants import Parameter, ParamSpace, format_path
from tunecore.model import InvalidFieldError
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

Dimension = OneParameter[dict[str, Any]]
"""One parameter: its entry is its HEBO parameter record (`DesignSpace.parse`'s)."""


def dimensions(space: ParamSpace) -> list[Dimension]:
    """The HEBO parameter of every searched parameter (the table)."""
    return [_dimension(parameter) for parameter in space.sampled]


def design_space(found: list[Dimension]) -> Any:
    """A HEBO `DesignSpace` of the searched parameters."""
    from hebo.design_space.design_space import DesignSpace  # noqa: PLC0415 - optional

    return DesignSpace().parse([d.entry for d in found if d.entry is not None])


def _dimension(parameter: Parameter) -> Dimension:
    name = label(parameter.path)
    domain = parameter.domain
    if isinstance(domain, Choice):
        categories = domain.categories
        if len(categories) == 1:
            return single(parameter, categories[0])
        return Dimension(
            parameter,
            {"name": name, "type": "cat", "categories": [str(i) for i in range(len(categories))]},
            lambda index: copy_json(categories[int(index)]),
            lambda value: str(index_of(categories, value)),
        )
    if isinstance(domain, Uniform | QUniform | LogUniform | QLogUniform):
        low, high = domain.low, domain.high
        if low == high:
            return single(parameter, low)
        q = domain.q if isinstance(domain, QUniform | QLogUniform) else None
        entry: dict[str, Any] = {"name": name, "type": "num", "lb": low, "ub": high}
        if isinstance(domain, LogUniform | QLogUniform):
            entry.update(type="pow", base=domain.base)
        return Dimension(parameter, entry, float_decoder(low, high, q), as_float)
    if isinstance(domain, RandInt | LogRandInt | QRandInt | QLogRandInt):
        q, first, last = integer_range(domain)
        if first == last:
            return single(parameter, first)
        if isinstance(domain, LogRandInt | QLogRandInt):
            entry = {"name": name, "type": "pow_int", "lb": first, "ub": last, "base": domain.base}
            step = 1  # on the log scale: rounded to q in the config
        else:
            entry = {"name": name, "type": "int", "lb": first // q, "ub": last // q}
            step = q  # HEBO's integer counts multiples of q
        return Dimension(
            parameter,
            entry,
            integer_decoder(step, q, first, last),
            lambda value: as_integer(value) // step,
        )
    raise InvalidFieldError(
        format_path(parameter.path),
        domain,
        "a domain HEBOSearch can model (tune.uniform, loguniform, randint, lograndint, choice "
        "and their quantized forms: HEBO has no normal parameter, as in Ray Tune)",
    )


__all__ = ["Dimension", "design_space", "dimensions"]
