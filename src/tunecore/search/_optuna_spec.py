"""What `OptunaSearch.to_spec` records, and how `from_spec` reads it back.

The spec is `OptunaSpec`, a frozen struct written as plain JSON. Its space
is one of three kinds, as the user gave it (`SpaceSpec`, one field set):

- `define_by_run`: the import path of the function (`module:name`); a
  lambda or a function in `__main__` has none, and then there is no spec;
- `param_space`: tunecore's domains, with `from_tuner` when the Tuner's
  param space was taken (then the space is handed back through
  `set_search_properties`' path, not the constructor: Ray's contract says
  a searcher built with a space of its own refuses the Tuner's);
- `distributions`: Optuna's own, in `optuna.distributions`' JSON.

No field set: no space yet. `version` changes when a field's meaning
does (2: no `sampler` field; a sampler the user builds gives no spec,
see `tunecore.search.optuna`); the Optuna version is recorded for a
reader of the log.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

import msgspec
from optuna.distributions import BaseDistribution, distribution_to_json, json_to_distribution

from tunecore.core.search.variants import ParamSpace
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.search._contract import decode_spec
from tunecore.search._optuna_space import OptunaParam

SPEC_VERSION = 2


class SpaceSpec(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """The searcher's space: at most one of the three kinds (module docstring)."""

    define_by_run: str | None = None
    param_space: ParamSpace | None = None
    from_tuner: bool = False
    distributions: dict[str, JsonDict] | None = None


class OptunaSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`OptunaSearch`'s arguments as it holds them after set-up: the space,
    the objective, the points (and their rewards), and the seed of the
    default TPE sampler (the only sampler a spec rebuilds)."""

    version: int
    optuna: str
    space: SpaceSpec
    metric: str | list[str] | None
    mode: str | list[str] | None
    points_to_evaluate: list[JsonDict] | None
    evaluated_rewards: list[JsonValue] | None
    seed: int | None
    study_name: str
    sampler: JsonDict | None = None
    """Version 1 described a sampler the user built here; tunecore no longer
    does (Optuna has no public API that gives its arguments back), so a
    version 1 spec holding one is refused (`read_spec`). None: the default
    TPE on `seed`."""


def describe_space(
    define_by_run: Callable[..., Any] | None,
    param_space: ParamSpace | None,
    from_tuner: bool,
    params: tuple[OptunaParam, ...] | None,
) -> SpaceSpec | None:
    """The space's spec; None for a define-by-run function without an
    import path."""
    if define_by_run is not None:
        path = _import_path(define_by_run)
        return None if path is None else SpaceSpec(define_by_run=path)
    if param_space is not None:
        return SpaceSpec(param_space=param_space, from_tuner=from_tuner)
    if params is not None:
        return SpaceSpec(
            distributions={p.name: json.loads(distribution_to_json(p.distribution)) for p in params}
        )
    return SpaceSpec()


def read_spec(spec: object) -> OptunaSpec:
    """The spec `to_spec` wrote, of this version or the one before (whose
    default TPE it rebuilds the same way)."""
    version = spec.get("version") if isinstance(spec, dict) else None
    if version not in (1, SPEC_VERSION):
        raise InvalidFieldError("OptunaSearch spec.version", version, f"1 or {SPEC_VERSION}")
    decoded = decode_spec("OptunaSearch", spec, OptunaSpec)
    if decoded.sampler is not None:
        raise InvalidFieldError(
            "OptunaSearch spec.sampler",
            decoded.sampler.get("class", decoded.sampler),
            "none: a sampler you built is not rebuilt from the log (Optuna has no public "
            "API that gives its arguments back); pass the searcher again, built as before, "
            "to Tuner.restore(path, trainable, search_alg=...)",
        )
    return decoded


def constructor_space(
    space: SpaceSpec,
) -> dict[str, Any] | dict[str, BaseDistribution] | Callable[..., Any] | None:
    """The `space` argument that builds the searcher again (None: it takes
    the Tuner's, given back with `SpaceSpec.param_space`)."""
    if space.define_by_run is not None:
        function: Callable[..., Any] = _import(space.define_by_run)
        return function
    if space.param_space is not None:
        return None if space.from_tuner else _space_dict(space.param_space)
    if space.distributions is not None:
        return {
            name: json_to_distribution(json.dumps(encoded))
            for name, encoded in space.distributions.items()
        }
    return None


def _import_path(value: object) -> str | None:
    """`module:qualname` from which `value` imports again, or None (a
    lambda, a nested function, one in `__main__`)."""
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


def _import(path: str) -> Any:
    """The object at `module:qualname`, which a spec (so a log) names: only
    Optuna is imported; any other module must be imported already (the
    user's script, run again), since reading a log never runs code."""
    module_name, _, qualname = path.partition(":")
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


def _space_dict(space: ParamSpace) -> dict[str, Any]:
    """A parsed param space as the dict it was parsed from."""
    rebuilt: dict[str, Any] = json.loads(json.dumps(space.skeleton))
    for parameter in space.sampled:
        target: Any = rebuilt  # a dict or a list the skeleton holds on the path
        for part in parameter.path[:-1]:
            target = target[part]
        target[parameter.path[-1]] = parameter.domain
    return rebuilt


__all__ = [
    "SPEC_VERSION",
    "OptunaSpec",
    "SpaceSpec",
    "constructor_space",
    "describe_space",
    "read_spec",
]
