"""tunecore domains <-> ConfigSpace 1.x axes, for `TuneBOHB`.

hpbandster's BOHB models a ConfigSpace space; tunecore's searchers take
tunecore domains. This module is the conversion between the two, apart from
the searcher that drives the model (`tunecore.search.bohb`).

Space conversion (tunecore domains to ConfigSpace 1.x, which has no `q` and
no unbounded normal): uniform/loguniform floats and randint/lograndint as
uniform floats and integers (log where the domain is; randint's high is
exclusive); quantized domains as integers counting multiples of q; randn as
a normal cut at 4 standard deviations (qrandn the same, in multiples of q);
choice as a categorical over the category indices (so any JSON category
works); a domain with one value as a constant. Grids and sample_from are
refused, naming the parameter, as Ray refuses grids.

A user's own ConfigSpace is taken as it is: its names split at '/' give the
nested config, as Ray unflattens them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import msgspec

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
from tunecore.core.search.view import Path
from tunecore.model import JsonValue
from tunecore.model.numbers import is_number
from tunecore.search.spaces import label, plain_number

_NORMAL_SPAN = 4.0
"""randn is searched within mean +- this many standard deviations."""


@dataclass(frozen=True)
class Axis:
    """One searched value: where it goes in the config (`path`), its name
    in the ConfigSpace, its hyperparameter (None for a domain with one
    value), and the maps between ConfigSpace values and config values."""

    path: Path
    name: str
    hyperparameter: Any
    to_config: Callable[[Any], Any]
    to_space: Callable[[Any], Any]


def axis_of(path: Path, domain: object, cs: ModuleType) -> Axis:
    """The ConfigSpace hyperparameter for one tunecore domain and the value
    maps (see the module docstring)."""
    name = label(path)
    if isinstance(domain, Uniform | LogUniform):
        if domain.low == domain.high:
            return _constant(path, name, domain.low)
        log = isinstance(domain, LogUniform)
        hp = cs.UniformFloatHyperparameter(name, lower=domain.low, upper=domain.high, log=log)
        return Axis(path, name, hp, float, float)
    if isinstance(domain, RandInt | LogRandInt):
        if domain.high - 1 == domain.low:
            return _constant(path, name, domain.low)
        log = isinstance(domain, LogRandInt)
        hp = cs.UniformIntegerHyperparameter(name, lower=domain.low, upper=domain.high - 1, log=log)
        return Axis(path, name, hp, int, int)
    if isinstance(domain, QUniform | QLogUniform | QRandInt | QLogRandInt):
        return _multiples(path, name, domain, cs)
    if isinstance(domain, RandN | QRandN):
        return _normal(path, name, domain, cs)
    assert isinstance(domain, Choice)  # searched_space refuses grids and functions
    categories = domain.categories
    if len(categories) == 1:
        return _constant(path, name, categories[0])
    hp = cs.CategoricalHyperparameter(name, choices=list(range(len(categories))))
    encoded = [msgspec.json.encode(category) for category in categories]
    return Axis(
        path,
        name,
        hp,
        lambda index: copy_json(categories[int(index)]),
        lambda value: encoded.index(msgspec.json.encode(value)),
    )


def _multiples(
    path: Path, name: str, domain: QUniform | QLogUniform | QRandInt | QLogRandInt, cs: ModuleType
) -> Axis:
    """A quantized domain as the integers k of its multiples k * q."""
    q = domain.q
    low, high = math.ceil(domain.low / q - 1e-9), math.floor(domain.high / q + 1e-9)
    integral = isinstance(domain, QRandInt | QLogRandInt)

    def to_config(k: Any) -> JsonValue:
        if integral:
            return int(k) * int(q)
        return min(max(int(k) * q, domain.low), domain.high)

    def to_space(value: JsonValue) -> Any:
        assert is_number(value)  # point_values checked it against the domain
        return round(float(value) / q)

    if low == high:
        return _constant(path, name, to_config(low))
    log = isinstance(domain, QLogUniform | QLogRandInt)
    hp = cs.UniformIntegerHyperparameter(name, lower=low, upper=high, log=log)
    return Axis(path, name, hp, to_config, to_space)


def _normal(path: Path, name: str, domain: RandN | QRandN, cs: ModuleType) -> Axis:
    """randn cut at 4 sd (ConfigSpace 1.x wants bounds); qrandn the same in
    multiples of q. A point outside the cut is refused by ConfigSpace."""
    mean, sd = domain.mean, domain.sd
    low, high = mean - _NORMAL_SPAN * sd, mean + _NORMAL_SPAN * sd
    if isinstance(domain, RandN):
        if sd == 0:
            return _constant(path, name, mean)
        hp = cs.NormalFloatHyperparameter(name, mu=mean, sigma=sd, lower=low, upper=high)
        return Axis(path, name, hp, float, float)
    q = domain.q
    k_low, k_high = math.floor(low / q), math.ceil(high / q)
    if k_low == k_high:
        return _constant(path, name, float(k_low * q))
    hp = cs.NormalIntegerHyperparameter(name, mu=mean / q, sigma=sd / q, lower=k_low, upper=k_high)
    return Axis(
        path,
        name,
        hp,
        lambda k: float(int(k) * q),
        lambda value: round(float(value) / q),
    )


def _constant(path: Path, name: str, value: JsonValue) -> Axis:
    """A domain with one value: no hyperparameter, always that value."""
    return Axis(path, name, None, lambda _: copy_json(value), lambda given: given)


def axes_of_configspace(space: Any) -> tuple[Axis, ...]:
    """A user's ConfigSpace: names split at '/' into the nested config (as
    Ray unflattens them), values as ConfigSpace gives them."""
    return tuple(
        Axis(tuple(str(name).split("/")), str(name), hp, plain_number, lambda value: value)
        for name, hp in space.items()
    )


def value_at(point: Mapping[str, Any], axis: Axis) -> Any:
    """A user's ConfigSpace value in a point: by name, or nested."""
    if axis.name in point:
        return point[axis.name]
    value: Any = point
    for part in axis.path:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value
