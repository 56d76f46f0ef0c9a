"""`ray.tune.search.sample`: the search-space functions, and Ray's domain
types for the checks user code makes with them.

Ray's domains are mutable objects whose `sample()` draws from a global
generator; tunecore's are immutable values (`tunecore.core.search.domains`,
one class per distribution) that take and return a seeded generator state,
so a replay draws the same configs. What Ray users do with Ray's types is
look at a space: `isinstance(value, Domain)` to tell a domain from a
constant, `isinstance(value, Float)` / `Integer` / `Categorical` /
`Function` for its kind. Those checks work here on tunecore's domains, by
kind. Building one of them by hand (`Float(0, 1).uniform()`) is a
`TypeError` naming the function to use instead (`tune.uniform(0, 1)`).
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn

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
    SampleFrom,
    Uniform,
    lograndint,
    loguniform,
    qlograndint,
    qloguniform,
    qrandint,
    qrandn,
    quniform,
    randint,
    randn,
    sample_from,
    uniform,
)
from tunecore.search.object_values import choice


class _Kind(type):
    """A Ray domain type as a check over tunecore's domain classes: a value
    is an instance when its class is one of `members`."""

    members: tuple[type, ...]
    instead: str

    def __instancecheck__(cls, value: object) -> bool:
        return isinstance(value, cls.members)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, cls.members)

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            f"{cls.__name__}(...) is Ray's domain class, here a type to check values "
            f"against (isinstance(value, {cls.__name__})); build the domain with "
            f"{cls.instead}"
        )


_FLOATS = (Uniform, QUniform, LogUniform, QLogUniform, RandN, QRandN)
_INTEGERS = (RandInt, QRandInt, LogRandInt, QLogRandInt)


class Float(metaclass=_Kind):
    """A float domain: `uniform`, `quniform`, `loguniform`, `qloguniform`,
    `randn`, `qrandn`."""

    members: ClassVar[tuple[type, ...]] = _FLOATS
    instead = "tune.uniform, tune.loguniform, tune.randn or their q- forms"


class Integer(metaclass=_Kind):
    """An integer domain: `randint`, `qrandint`, `lograndint`, `qlograndint`."""

    members: ClassVar[tuple[type, ...]] = _INTEGERS
    instead = "tune.randint, tune.lograndint or their q- forms"


class Categorical(metaclass=_Kind):
    """A choice among given values: `choice`."""

    members: ClassVar[tuple[type, ...]] = (Choice,)
    instead = "tune.choice(categories)"


class Function(metaclass=_Kind):
    """A value computed by a function of the config: `sample_from`."""

    members: ClassVar[tuple[type, ...]] = (SampleFrom,)
    instead = "tune.sample_from(func)"


class Domain(metaclass=_Kind):
    """Any domain (not a `grid_search`, which in Ray is a plain dict and
    no `Domain` either)."""

    members: ClassVar[tuple[type, ...]] = (*_FLOATS, *_INTEGERS, Choice, SampleFrom)
    instead = "tune.uniform, tune.randint, tune.choice, tune.sample_from, ..."


__all__ = [
    "Categorical",
    "Domain",
    "Float",
    "Function",
    "Integer",
    "choice",
    "lograndint",
    "loguniform",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "sample_from",
    "uniform",
]
