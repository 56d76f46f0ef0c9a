"""Optuna samplers as JSON and back: how an `OptunaSearch` spec names its sampler.

A restore rebuilds the searcher from its spec and re-asks the logged
suggestions, which is exact only if the rebuilt sampler equals the one the
run started with, seed included. Optuna's samplers do not keep their
constructor arguments, so `describe` reads them back from the sampler's
attributes (`_name`, or where `_GETTERS` says a class keeps one), keeps
those that differ from what the class builds without them, and then checks
its work: a sampler built from the description must equal the original
attribute by attribute, random state included (`fingerprint`). What it
cannot describe exactly (a class outside Optuna, a lambda for `gamma`, a
random state already drawn from) raises `Undescribable`; it never
approximates.

The seed: `LazyRandomState(seed)` keeps no seed, only a seeded MT19937.
numpy's legacy seeding writes the seed into the first word of the key
(init_genrand), so an unused state gives it back; it is checked by seeding
a new state with it and comparing the whole state.

An unseeded sampler (some random state in it has no seed) is described
without a seed and compared blind to random state (`blind`); `seeded`
builds the same sampler with a seed.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import numpy as np
import optuna
from optuna.samplers import BaseSampler
from optuna.samplers._lazy_random_state import LazyRandomState

from tunecore.model import JsonDict, JsonValue

_ABSENT = object()

# Constructor arguments a class keeps under another attribute than `_name`
# (dotted: an attribute of an attribute).
_NSGA_CHILD = {
    "mutation": "_child_generation_strategy._mutation",
    "mutation_prob": "_child_generation_strategy._mutation_prob",
    "crossover": "_child_generation_strategy._crossover",
    "crossover_prob": "_child_generation_strategy._crossover_prob",
    "swapping_prob": "_child_generation_strategy._swapping_prob",
}
_GETTERS: dict[str, dict[str, str]] = {
    "TPESampler": {
        name: f"_parzen_estimator_parameters.{name}"
        for name in ("prior_weight", "consider_magic_clip", "consider_endpoints", "weights")
    },
    "NSGAIISampler": _NSGA_CHILD,
    "NSGAIIISampler": {
        **_NSGA_CHILD,
        "reference_points": "_elite_population_selection_strategy._reference_points",
        "dividing_parameter": "_elite_population_selection_strategy._dividing_parameter",
    },
    "GPSampler": {"deterministic_objective": "_deterministic"},
}


class Undescribable(Exception):
    """The sampler cannot be written as JSON from which it is rebuilt exactly."""


def describe(sampler: BaseSampler) -> JsonDict:
    """`{"class": "optuna.samplers.TPESampler", "kwargs": {...}}`, checked:
    `build` of it equals `sampler`. Call it before the sampler is used."""
    blind = not is_seeded(sampler)
    description = _describe(sampler, blind)
    if fingerprint(build(description), blind) != fingerprint(sampler, blind):
        raise Undescribable(
            f"{type(sampler).__name__} keeps state that its constructor arguments do not give"
        )
    return description


def seeded(sampler: BaseSampler, seed: int) -> tuple[BaseSampler, JsonDict]:
    """An unseeded sampler's equal, seeded with `seed`, and its description."""
    description = describe(sampler)
    kwargs = description["kwargs"]
    assert isinstance(kwargs, dict)
    if "seed" not in _parameters(type(sampler)):
        raise Undescribable(f"{type(sampler).__name__} takes no seed")
    kwargs["seed"] = {"json": seed}
    fresh = build(description)
    if not is_seeded(fresh):
        raise Undescribable(f"{type(sampler).__name__}(seed=...) still draws unseeded numbers")
    return fresh, description


def build(description: Mapping[str, JsonValue]) -> Any:
    """The object `describe` described (a sampler, or a crossover in one)."""
    path = description["class"]
    kwargs = description["kwargs"]
    assert isinstance(path, str)
    assert isinstance(kwargs, dict)
    if not path.startswith("optuna."):
        raise Undescribable(f"{path} is not one of Optuna's classes")
    cls = _import(path)
    values = {name: _from_json(value) for name, value in kwargs.items()}
    return _construct(cls, values)


def is_seeded(sampler: object) -> bool:
    """Whether every random state in it was seeded."""
    seen: set[int] = set()

    def walk(value: object) -> bool:
        if id(value) in seen:
            return True
        seen.add(id(value))
        if isinstance(value, LazyRandomState):
            return value._rng is not None
        if isinstance(value, list | tuple):
            return all(walk(item) for item in value)
        if isinstance(value, dict):
            return all(walk(item) for item in value.values())
        if _is_optuna_object(value):
            return all(walk(item) for item in vars(value).values())
        return True

    return walk(sampler)


def import_path(value: object) -> str | None:
    """`module:qualname` from which `value` (a function or class) imports
    again, or None (a lambda, a nested function, one in `__main__`)."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    if module == "__main__" or "<" in qualname:
        return None
    path = f"{module}:{qualname}"
    try:
        found = _import(path)
    except (ImportError, AttributeError):
        return None
    return path if found is value else None


def import_object(path: str) -> Any:
    """The object at `module:qualname` (or `module.name`)."""
    return _import(path)


def _import(path: str) -> Any:
    """The object at `path`, which a spec (so a log) names: only Optuna is
    imported; any other module must be imported already (the user's script,
    run again), since reading a log never runs code."""
    module_name, _, qualname = path.partition(":")
    if not qualname:
        module_name, _, qualname = path.rpartition(".")
    if module_name.partition(".")[0] == "optuna":
        importlib.import_module("optuna")
    found: Any = sys.modules.get(module_name)
    if found is None:
        raise ImportError(
            f"{path} names the module {module_name!r}, which this process has not imported "
            "(a log names code but never imports it)"
        )
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


# -- describing ---------------------------------------------------------------------------------


def _describe(obj: object, blind: bool) -> JsonDict:
    cls = type(obj)
    if not _is_optuna_object(obj):
        raise Undescribable(f"{cls.__module__}.{cls.__qualname__} is not one of Optuna's classes")
    getters = _GETTERS.get(cls.__name__, {})
    values: dict[str, Any] = {}
    parameters = _parameters(cls)
    if "seed" in parameters and not blind:
        values["seed"] = _seed_of(obj)
    for name in parameters:
        if name == "seed":
            continue
        getter = getters.get(name, f"_{name}")
        value = _get(obj, getter)
        if value is _ABSENT:
            continue
        if fingerprint(_get(_construct(cls, values), getter), blind) != fingerprint(value, blind):
            values[name] = value
    kwargs: JsonDict = {name: _to_json(name, value, blind) for name, value in values.items()}
    return {"class": _class_path(cls), "kwargs": kwargs}


def _parameters(cls: type) -> list[str]:
    signature = inspect.signature(cls)
    return [
        name
        for name, parameter in signature.parameters.items()
        if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    ]


def _get(obj: object, dotted: str) -> Any:
    value: Any = obj
    for part in dotted.split("."):
        attributes = getattr(value, "__dict__", {})
        if part in attributes:
            value = attributes[part]
        elif part.startswith("_") and part[1:] in attributes:
            value = attributes[part[1:]]
        elif hasattr(value, "_asdict") and part in value._asdict():
            value = value._asdict()[part]
        else:
            return _ABSENT
    return value


def _seed_of(obj: object) -> int | None:
    """The seed of the sampler's own random state (QMC keeps it as `_seed`)."""
    attributes = vars(obj)
    if isinstance(attributes.get("_seed"), int):
        return int(attributes["_seed"])
    for value in attributes.values():
        if isinstance(value, LazyRandomState):
            return _recovered_seed(value)
    return None


def _recovered_seed(state: Any) -> int | None:
    rng = state._rng
    if rng is None:
        return None
    name, key, position, has_gauss, _ = cast(tuple[Any, ...], rng.get_state())
    seed = int(key[0])
    fresh = cast(tuple[Any, ...], np.random.RandomState(seed).get_state())
    if name != fresh[0] or position != fresh[2] or has_gauss or not np.array_equal(key, fresh[1]):
        raise Undescribable("its random state was seeded by other means or already drawn from")
    return seed


def _to_json(name: str, value: Any, blind: bool) -> JsonValue:
    """A constructor argument, tagged: `{"json": v}`, `{"import": path}`
    (a function or class) or `{"object": description}` (an Optuna object)."""
    plain = _plain(value)
    if plain is not _ABSENT:
        return {"json": plain}
    if callable(value) and not _is_optuna_object(value):
        path = import_path(value)
        if path is None:
            raise Undescribable(f"its {name}={value!r} cannot be imported by name")
        return {"import": path}
    if _is_optuna_object(value):
        return {"object": _describe(value, blind)}
    raise Undescribable(f"its {name}={value!r} is not JSON")


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple) and not hasattr(value, "_asdict"):
        items = [_plain(item) for item in value]
        return _ABSENT if any(item is _ABSENT for item in items) else items
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        entries = {key: _plain(item) for key, item in value.items()}
        return _ABSENT if any(item is _ABSENT for item in entries.values()) else entries
    return _ABSENT


def _from_json(tagged: JsonValue) -> Any:
    assert isinstance(tagged, dict)
    if "import" in tagged:
        path = tagged["import"]
        assert isinstance(path, str)
        return _import(path)
    if "object" in tagged:
        description = tagged["object"]
        assert isinstance(description, dict)
        return build(description)
    return tagged["json"]


def _class_path(cls: type) -> str:
    """The public name where there is one (`optuna.samplers.TPESampler`)."""
    for public in ("optuna.samplers", "optuna.samplers.nsgaii"):
        if getattr(importlib.import_module(public), cls.__name__, None) is cls:
            return f"{public}:{cls.__name__}"
    return f"{cls.__module__}:{cls.__qualname__}"


def _is_optuna_object(value: object) -> bool:
    module = getattr(type(value), "__module__", "")
    return (
        module.startswith("optuna.") and hasattr(value, "__dict__") and not isinstance(value, type)
    )


def _construct(cls: Callable[..., Any], kwargs: Mapping[str, Any]) -> Any:
    """`cls(**kwargs)` without the warnings Optuna gives for deprecated or
    experimental arguments (the user saw them when building the original)."""
    with _quiet():
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as error:
            raise Undescribable(f"{cls!r}(**{kwargs!r}) failed: {error}") from error


@contextmanager
def _quiet() -> Iterator[None]:
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        optuna.logging.set_verbosity(verbosity)


# -- comparing ------------------------------------------------------------------------------------


def fingerprint(value: object, blind: bool = False) -> object:
    """A comparable picture of `value`: plain data as is, Optuna objects by
    class and attributes, random states by their state (or all alike when
    `blind`), functions and other objects by identity."""

    def picture(item: object, depth: int) -> object:
        if depth > 12:
            return ("deep", id(item))
        if item is None or isinstance(item, bool | int | float | str):
            return item
        if isinstance(item, np.generic):
            return item.item()
        if isinstance(item, np.ndarray):
            return ("array", item.tolist())
        if isinstance(item, LazyRandomState):
            return ("rng",) if blind else ("rng", picture(item._rng, depth + 1))
        if isinstance(item, np.random.RandomState):
            return ("rng",) if blind else ("state", picture(list(item.get_state()), depth + 1))
        if hasattr(item, "_asdict"):
            return ("tuple", picture(item._asdict(), depth + 1))
        if isinstance(item, list | tuple):
            return [picture(each, depth + 1) for each in item]
        if isinstance(item, dict):
            return [(repr(key), picture(each, depth + 1)) for key, each in item.items()]
        if _is_optuna_object(item):
            attributes = [
                (name, ("rng",) if blind and name == "_seed" else picture(each, depth + 1))
                for name, each in vars(item).items()
            ]
            return ("object", type(item).__qualname__, attributes)
        return ("identity", id(item))

    return picture(value, 0)
