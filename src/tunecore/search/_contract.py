"""The parts of Ray's searcher contract every integration checks the same way.

The flat-space searchers (BayesOpt, HyperOpt, Nevergrad, ZOOpt, HEBO, Ax)
are the same kind of searcher to Ray Tune: one objective, a space of their
own or the Tuner's, `points_to_evaluate` served first, a metric that each
finished trial's result must hold, integer arguments (a seed, a batch
size). What they refuse, and the words they refuse it with, live here once,
with the owner's name in each message (`BayesOptSearch.metric`, ...), so
they cannot drift apart. `encode_spec` and `decode_spec` are how every integration writes
and reads its `to_spec`: a spec is a frozen msgspec struct as plain JSON, and one
that does not decode is an error naming the searcher and the field.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from tunecore.core.search.domains import plain_json
from tunecore.model import InvalidFieldError, JsonDict
from tunecore.model.numbers import is_int

S = TypeVar("S", bound=msgspec.Struct)


def require_package(owner: str, module: str, extra: str) -> None:
    """An ImportError saying which extra to install when `module` is missing."""
    try:
        importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"{owner} needs {module}: pip install 'tunecore[{extra}]'") from error


def check_one_metric(owner: str, metric: object) -> None:
    """One metric name, or None: the optimizer has a single objective."""
    if not (metric is None or isinstance(metric, str)):
        kind = owner.removesuffix("Search")
        raise InvalidFieldError(
            f"{owner}.metric", metric, f"one metric name: {kind} has one objective"
        )


def check_integer(
    owner: str, field: str, value: object, *, minimum: int | None = None, optional: bool = False
) -> None:
    """An integer argument, at least `minimum` if given, or None if
    `optional` (a seed the experiment's replaces)."""
    if optional and value is None:
        return
    if not (is_int(value) and (minimum is None or value >= minimum)):
        accepted = "an integer" if minimum is None else f"an integer >= {minimum}"
        raise InvalidFieldError(
            f"{owner}.{field}", value, f"{accepted}, or None" if optional else accepted
        )


def check_points(owner: str, points: object) -> list[Any]:
    """`points_to_evaluate` as a list (of configs the space checks later)."""
    if points is None:
        return []
    if not isinstance(points, list | tuple):
        raise InvalidFieldError(f"{owner}.points_to_evaluate", points, "a list of configs")
    return list(points)


def tuner_objective(
    owner: str,
    metric: str | None,
    mode: str | None,
    tuner_metric: str | None,
    tuner_mode: str | None,
) -> tuple[str | None, str | None]:
    """Ray's `set_search_properties` for a searcher with no space of its own:
    the Tuner's metric and mode where it gives them (the mode checked)."""
    if tuner_mode and tuner_mode not in ("min", "max"):
        raise InvalidFieldError(f"{owner}.mode", tuner_mode, "'min' or 'max'")
    return tuner_metric or metric, tuner_mode or mode


def require_ready(
    owner: str, has_space: bool, metric: str | None, mode: str | None, domains: str
) -> None:
    """Before a suggestion: a space to search (`domains` says what it needs)
    and the objective, each missing one named."""
    if not has_space:
        raise RuntimeError(
            f"{owner} has no search space: pass space= or a Tuner param_space with {domains}"
        )
    if not metric or not mode:
        raise RuntimeError(
            f"{owner} has no metric and mode (metric={metric!r}, mode={mode!r}): pass them "
            "to it or to TuneConfig"
        )


def metric_value(owner: str, metric: str | None, result: Mapping[str, Any]) -> object:
    """The metric's value in a trial's last result; a result without it is
    an error naming the metric and the keys the result has."""
    if metric is None or metric not in result:
        raise RuntimeError(
            f"{owner} expected the metric {metric!r} in the trial's last result, which has "
            f"{sorted(result)}: report it (tune.report)"
        )
    return result[metric]


def json_kwargs(kwargs: Mapping[str, Any]) -> JsonDict | None:
    """Keyword arguments for an optimizer as JSON for a spec, or None if
    one is not JSON as it stands (an object, or a tuple JSON makes a list)."""
    try:
        plain = plain_json("kwargs", dict(kwargs))
    except InvalidFieldError:
        return None
    if plain != kwargs:
        return None
    assert isinstance(plain, dict)
    return plain


def encode_spec(spec: msgspec.Struct) -> JsonDict:
    """A spec struct as plain JSON (lists, not the tuples `to_builtins` keeps)."""
    encoded: JsonDict = msgspec.json.decode(msgspec.json.encode(spec))
    return encoded


def decode_spec(owner: str, spec: object, spec_type: type[S]) -> S:
    """The spec struct `to_spec` wrote; anything else is an error naming the
    field msgspec could not read."""
    try:
        return msgspec.convert(spec, spec_type)
    except msgspec.ValidationError as error:
        raise InvalidFieldError(
            f"{owner}.from_spec(spec)", spec, f"a spec to_spec wrote: {error}"
        ) from error


__all__ = [
    "check_integer",
    "check_one_metric",
    "check_points",
    "decode_spec",
    "encode_spec",
    "json_kwargs",
    "metric_value",
    "require_package",
    "require_ready",
    "tuner_objective",
]
