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

from collections.abc import Callable
from typing import Any

from tunecore.core.search.variants import ParamSpace
from tunecore.search._dimension import Dimension as OneParameter
from tunecore.search._dimension import (
    Entries,
    IntegerDomain,
    RealDomain,
    dimension,
    log_base,
)

Dimension = OneParameter[dict[str, Any]]
"""One parameter: its entry is its HEBO parameter record (`DesignSpace.parse`'s)."""

Bounded = RealDomain | IntegerDomain


def dimensions(space: ParamSpace) -> list[Dimension]:
    """The HEBO parameter of every searched parameter (the table)."""
    return [dimension(parameter, _ENTRIES) for parameter in space.sampled]


def design_space(found: list[Dimension]) -> Any:
    """A HEBO `DesignSpace` of the searched parameters."""
    from hebo.design_space.design_space import DesignSpace  # noqa: PLC0415 - optional

    return DesignSpace().parse([d.entry for d in found if d.entry is not None])


def _bounded(linear: str, logarithmic: str) -> Callable[[str, float, float, Bounded], Any]:
    """A numeric parameter's record: of type `linear`, or `logarithmic`
    with the domain's base. HEBO's integer counts multiples of q; on the log
    scale q rounds in the config."""

    def entry(name: str, low: float, high: float, domain: Bounded) -> dict[str, Any]:
        base = log_base(domain)
        if base is None:
            return {"name": name, "type": linear, "lb": low, "ub": high}
        return {"name": name, "type": logarithmic, "lb": low, "ub": high, "base": base}

    return entry


_ENTRIES = Entries[dict[str, Any]](
    choice=lambda name, indices: {"name": name, "type": "cat", "categories": indices},
    real=_bounded("num", "pow"),
    integer=_bounded("int", "pow_int"),
    refusal="a domain HEBOSearch can model (tune.uniform, loguniform, randint, lograndint, "
    "choice and their quantized forms: HEBO has no normal parameter, as in Ray Tune)",
    index=str,
)


__all__ = ["Dimension", "design_space", "dimensions"]
