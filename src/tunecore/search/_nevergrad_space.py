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

from tunecore.core.search.domains import QRandN, RandN
from tunecore.core.search.variants import Parameter, ParamSpace
from tunecore.search._dimension import Dimension as OneParameter
from tunecore.search._dimension import (
    Entries,
    IntegerDomain,
    RealDomain,
    as_float,
    dimension,
    log_base,
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
    if not isinstance(domain, RandN | QRandN):
        return dimension(parameter, _ENTRIES)
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


def _bounded(
    _name: str, low: float, high: float, domain: RealDomain | IntegerDomain
) -> Callable[[], Any]:
    """`ng.p.Scalar` or, on a log scale, `ng.p.Log` within the bounds,
    integer-cast for an integer domain (whose nevergrad integer counts
    multiples of q; on the log scale q rounds in the config)."""
    kind = "Scalar" if log_base(domain) is None else "Log"
    integer = isinstance(domain, IntegerDomain)
    return _maker(kind, lower=low, upper=high, integer=integer)


_ENTRIES = Entries[Callable[[], Any]](
    choice=lambda _name, indices: _maker("Choice", choices=indices),
    real=_bounded,
    integer=_bounded,
    refusal="a search domain NevergradSearch can model",
)


__all__ = ["Dimension", "dimensions", "parametrization"]
