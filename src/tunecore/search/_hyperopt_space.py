"""tunecore's search domains as hyperopt expressions, and hyperopt's values as configs.

Each searched parameter becomes one hyperopt label, named by its
'/'-joined path (as Ray names it), with an expression that draws exactly
the domain's values:

| tunecore | hyperopt |
|---|---|
| uniform, quniform | hp.uniform, hp.quniform |
| loguniform, qloguniform | hp.loguniform, hp.qloguniform (on the log bounds) |
| randint(lo, hi), qrandint | hp.quniform on the integers (multiples of q) in range, as an int |
| lograndint, qlograndint | hp.qloguniform on the integers (multiples of q), as an int |
| choice | hp.choice over the categories' indices |
| randn, qrandn | hp.normal, hp.qnormal |

A domain with a single value becomes a choice of one; a `grid_search` or
`sample_from` has no expression and is refused, naming its path.

Ray's other form, a space of hyperopt's own `hp.*` expressions, is searched
as given: `holds_expressions` tells it apart, `native_vals` reads a user's
point for it (Ray's convention: a choice by its value), and
`spaces.plain_config` makes hyperopt's evaluated config plain JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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
from tunecore.core.search.variants import Parameter, format_path
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.model.numbers import is_int, is_number
from tunecore.search._dimension import Dimension as OneParameter
from tunecore.search._dimension import index_of
from tunecore.search.spaces import label

Dimension = OneParameter[object]
"""One parameter: its entry is its hp expression (never None: a single
value is a choice of one)."""


def holds_expressions(space: object) -> bool:
    """Whether a space holds hyperopt's `hp.*` expressions (pyll nodes)."""
    from hyperopt.pyll import Apply  # noqa: PLC0415 - optional package

    if isinstance(space, Apply):
        return True
    if isinstance(space, Mapping):
        return any(holds_expressions(value) for value in space.values())
    if isinstance(space, list | tuple):
        return any(holds_expressions(value) for value in space)
    return False


def native_vals(where: str, space: Mapping[str, Any], point: Mapping[str, Any]) -> dict[str, Any]:
    """A point for a space of hp.* expressions as hyperopt vals (Ray's
    convention: keys are hyperopt's labels; a choice's value, also inside a
    nested dict, is given as the value and recorded as its index)."""
    from hyperopt.pyll import Apply  # noqa: PLC0415 - optional package

    vals: dict[str, Any] = {}
    for key, value in point.items():
        node = space.get(key)
        if isinstance(value, Mapping) and isinstance(node, Mapping):
            vals.update(native_vals(f"{where}[{key!r}]", node, value))
            continue
        if isinstance(node, Apply) and node.name == "switch":
            vals[key] = _option_index(f"{where}[{key!r}]", node.pos_args[1:], value)
        else:
            vals[key] = value
    return vals


def _option_index(where: str, options: list[Any], value: object) -> int:
    """The index of a choice's option: found by value among plain options;
    given as the index when the options are expressions (dicts, spaces)."""
    if all(option.name == "literal" for option in options):
        plain = [option.obj for option in options]
        for index, option in enumerate(plain):
            if type(option) is type(value) and option == value:
                return index
        raise InvalidFieldError(where, value, f"one of {plain!r}")
    if is_int(value) and 0 <= value < len(options):
        return value
    raise InvalidFieldError(
        where, value, f"the index (0 to {len(options) - 1}) of an option: they are expressions"
    )


def dimension(parameter: Parameter) -> Dimension:
    """The hyperopt dimension of one tunecore domain (the module's table)."""
    from hyperopt import hp  # noqa: PLC0415 - optional package

    name = label(parameter.path)
    domain = parameter.domain
    if isinstance(domain, Choice):
        categories = domain.categories
        return Dimension(
            parameter,
            hp.choice(name, list(range(len(categories)))),
            lambda index: copy_json(categories[int(index)]),
            lambda value: index_of(categories, value),
        )
    if isinstance(domain, Uniform | QUniform | LogUniform | QLogUniform):
        low, high = domain.low, domain.high
        if low == high:
            return _single(parameter, low)
        if isinstance(domain, Uniform):
            expression = hp.uniform(name, low, high)
        elif isinstance(domain, QUniform):
            expression = hp.quniform(name, low, high, domain.q)
        elif isinstance(domain, LogUniform):
            expression = hp.loguniform(name, math.log(low), math.log(high))
        else:
            expression = hp.qloguniform(name, math.log(low), math.log(high), domain.q)
        return Dimension(
            parameter,
            expression,
            lambda v: min(max(float(v), low), high),
            _number,
        )
    if isinstance(domain, RandInt | LogRandInt | QRandInt | QLogRandInt):
        if isinstance(domain, RandInt | LogRandInt):
            q, first, last = 1, domain.low, domain.high - 1
        else:
            q = domain.q
            first, last = -(-domain.low // q) * q, domain.high // q * q
        if first == last:
            return _single(parameter, first)
        if isinstance(domain, RandInt | QRandInt):
            expression = hp.quniform(name, first, last, q)
        else:
            expression = hp.qloguniform(name, math.log(first), math.log(last), q)
        return Dimension(
            parameter,
            expression,
            lambda v: min(max(round(float(v) / q) * q, first), last),
            _number,
        )
    if isinstance(domain, RandN | QRandN):
        if domain.sd == 0:
            return _single(parameter, domain.mean)
        if isinstance(domain, RandN):
            expression = hp.normal(name, domain.mean, domain.sd)
        else:
            expression = hp.qnormal(name, domain.mean, domain.sd, domain.q)
        return Dimension(parameter, expression, float, _number)
    raise InvalidFieldError(
        format_path(parameter.path), domain, "a search domain HyperOptSearch can model"
    )


def _number(value: JsonValue) -> float:
    """A numeric domain's value as hyperopt records it (`point_values`
    checked it against the domain)."""
    assert is_number(value)
    return float(value)


def _single(parameter: Parameter, value: JsonValue) -> Dimension:
    """A domain with one value: a choice of one."""
    from hyperopt import hp  # noqa: PLC0415 - optional package

    return Dimension(parameter, hp.choice(label(parameter.path), [0]), lambda _: value, lambda _: 0)


__all__ = ["Dimension", "dimension", "holds_expressions", "native_vals"]
