"""Resolving a param space into configs: Ray's variant generation, lazily.

A param space is a dict whose values are constants (JSON), search domains,
or nested dicts and lists of those. `parse_space` splits it once into data:

- the skeleton: the space with every domain replaced by None (the constants
  keep their place);
- the grid parameters (`GridSearch`), sorted by path;
- the sampled parameters (random domains), in traversal order;
- the derived parameters (`SampleFrom`), in traversal order.

Traversal order is depth-first in dict insertion order and list order. A
dict written `{"grid_search": [...]}` (Ray's JSON/YAML spelling) is a grid.
A whole space written so, a grid of dicts (`param_space=grid_search([{...},
{...}])`, Ray's ready-made configs), is one grid parameter at the empty path
(`()`): each of its dicts is a trial's whole config, named `config` in tags.

Variant `i` of an experiment (0-based) is grid point `i % grid_size` of
sample round `i // grid_size`: every round walks the whole grid, as Ray's
BasicVariantGenerator does. Grid point `g` is read as a mixed-radix number
whose first digit (the fastest-changing) is the first grid parameter in path
order: with `a: grid([1, 2])`, `b: grid(["x", "y", "z"])` the points are
(1,x) (2,x) (1,y) (2,y) (1,z) (2,z), which is Ray's order. A variant costs
O(size of the space) to build, never O(number of variants), so spaces with
huge grids and `num_samples` are fine.

Invariants
- Resolution is a pure function of (space, grid point, Rng): it returns the
  advanced Rng, and the same inputs always give the same config.
- Sampled parameters draw from the Rng in traversal order, one domain after
  another; grids and functions draw nothing.
- Derived values are resolved after all grid and sampled values, in passes:
  each pass calls every unresolved function; a function that reads an
  unresolved value is retried in the next pass (Ray's retry loop). A pass
  that resolves nothing means the remaining functions wait on each other:
  an `InvalidFieldError` names the cycle by parameter path.
- A config contains only plain JSON and shares nothing with the space.

Experiment tags (what the status table and trial directories show) follow
Ray: `f"{index}_{vars}"`, or just `f"{index}"` when the space resolves
nothing, where `vars` is `name=value` for every resolved value, sorted by
path and joined with ','. The exact rules:
- name: the last path component; when that is a list index, the suffix of
  the path back to the nearest dict key, joined by '_' (`layers_0`, as Ray
  1.x writes it). When two parameters would get the same name, each of them
  takes one more component from its path, repeatedly, until the names
  differ (the shortest unique suffix: `optimizer_lr`, `scheduler_lr`).
- value: a float (not bool) is written `format(v, ".5")` (Ray's `{:.5}`:
  0.01 -> `0.01`, 0.123456 -> `0.12346`, 1e-05 -> `1e-05`, 2.0 -> `2.0`);
  any other value is `str(v)` (True -> `True`, None -> `None`,
  [1, 2] -> `[1,_2]` after cleaning).
- cleaning, of names and values: every run of whitespace, '/' or '\\' becomes
  one '_' (Ray replaces '/'; we also remove what a directory name should not
  hold).

Why one module of over 400 lines: the parse of a space, the grid and
sampling order it fixes, and `BasicVariantGenerator`, which walks them,
share the one traversal order stated above; split apart, each part would
restate it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from tunecore.core.rng import Rng
from tunecore.core.search.built import built
from tunecore.core.search.domains import (
    DOMAIN_TYPES,
    OBJECTS_ELSEWHERE,
    Domain,
    GridSearch,
    SampleFrom,
    SamplingDomain,
    copy_json,
    plain_json,
)
from tunecore.core.search.view import (
    ConfigView,
    ListView,
    Path,
    Probe,
    UnresolvedValueError,
    view_of,
)
from tunecore.model import InvalidFieldError, JsonDict, JsonValue

ROOT = "param_space"
WHOLE_CONFIG = "config"
"""The name tags and `evaluated_params` give a grid over whole configs
(the empty path), as Ray names it (its variant generator sees the space
under the key `config`)."""


class Parameter(msgspec.Struct, frozen=True, array_like=True):
    """A domain and where its value goes in the config."""

    path: Path
    domain: Domain


class ParamSpace(msgspec.Struct, frozen=True, array_like=True):
    """A param space split into data (see the module header). Build it with
    `parse_space`; it encodes once `without_functions` has taken the
    `sample_from` functions out (their places stay in `derived`)."""

    skeleton: JsonDict
    grid: tuple[Parameter, ...] = ()
    sampled: tuple[Parameter, ...] = ()
    derived: tuple[Parameter, ...] = ()

    @property
    def grid_size(self) -> int:
        """The number of grid points (1 when the space has no grid)."""
        return math.prod(len(_grid_domain(parameter).values) for parameter in self.grid)


class Variant(msgspec.Struct, frozen=True):
    """One resolved config and the values the search chose, by path."""

    config: JsonDict
    resolved: tuple[tuple[Path, JsonValue], ...]


def format_path(path: Path) -> str:
    """`param_space['optimizer']['lr']`, `param_space['layers'][0]`."""
    return ROOT + "".join(f"[{part!r}]" for part in path)


# -- parsing ---------------------------------------------------------------------------------------


def parse_space(param_space: Mapping[str, object]) -> ParamSpace:
    """Split a param space into skeleton and parameters, validating every
    value; errors name the parameter path (`param_space['optimizer']['lr']`).

    A space holds constants (JSON), domains, and dicts and lists of them. It
    is typed `Mapping[str, object]` rather than a recursive alias because
    mypy infers a mixed dict of domains as `dict[str, Struct]`, which no
    precise alias accepts; everything is checked here at run time instead."""
    if not isinstance(param_space, Mapping):
        raise InvalidFieldError(ROOT, param_space, "a dict of parameter names to values")
    if _is_grid_literal(param_space):
        return _whole_config_grid(param_space["grid_search"])
    grid: list[Parameter] = []
    sampled: list[Parameter] = []
    derived: list[Parameter] = []

    def walk(value: object, path: Path) -> JsonValue:
        value = built(value)
        if path and isinstance(value, Mapping) and _is_grid_literal(value):
            where = f"{format_path(path)}['grid_search']"
            values = plain_json(where, value["grid_search"], otherwise=OBJECTS_ELSEWHERE)
            assert isinstance(values, list)
            if not values:
                raise InvalidFieldError(where, values, "a non-empty list")
            value = GridSearch(values)
        if isinstance(value, DOMAIN_TYPES):
            value.check(format_path(path))
            parameter = Parameter(path, value)
            if isinstance(value, GridSearch):
                grid.append(parameter)
            elif isinstance(value, SampleFrom):
                derived.append(parameter)
            else:
                sampled.append(parameter)
            return None
        if isinstance(value, Mapping):
            skeleton: JsonDict = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise InvalidFieldError(f"{format_path(path)}[{key!r}]", key, "a string key")
                skeleton[key] = walk(item, (*path, key))
            return skeleton
        if isinstance(value, list | tuple):
            return [walk(item, (*path, index)) for index, item in enumerate(value)]
        if callable(value):
            raise InvalidFieldError(
                format_path(path), value, "a JSON value or a search domain (wrap it in sample_from)"
            )
        return plain_json(format_path(path), value, otherwise=OBJECTS_ELSEWHERE)

    skeleton = walk(param_space, ())
    assert isinstance(skeleton, dict)
    grid.sort(key=lambda parameter: parameter.path)
    return ParamSpace(skeleton, tuple(grid), tuple(sampled), tuple(derived))


def _is_grid_literal(value: Mapping[Any, object]) -> bool:
    return len(value) == 1 and isinstance(value.get("grid_search"), list | tuple)


def _whole_config_grid(configs: object) -> ParamSpace:
    """A space that is one grid of whole configs: each value a dict of
    plain values (like every grid's values: a domain inside one is refused,
    where Ray would sample it)."""
    where = f"{ROOT}['grid_search']"
    values = plain_json(where, configs, otherwise=OBJECTS_ELSEWHERE)
    assert isinstance(values, list)
    if not values:
        raise InvalidFieldError(where, values, "a non-empty list")
    for index, value in enumerate(values):
        if not isinstance(value, dict):
            raise InvalidFieldError(
                f"{where}[{index}]", value, "a dict of parameters (a grid over whole configs)"
            )
    return ParamSpace({}, (Parameter((), GridSearch(values)),))


def _grid_domain(parameter: Parameter) -> GridSearch:
    domain = parameter.domain
    assert isinstance(domain, GridSearch)
    return domain


def _sampling_domain(parameter: Parameter) -> SamplingDomain:
    domain = parameter.domain
    assert not isinstance(domain, GridSearch | SampleFrom)
    return domain


def _function_domain(parameter: Parameter) -> SampleFrom:
    domain = parameter.domain
    assert isinstance(domain, SampleFrom)
    return domain


# -- resolving -------------------------------------------------------------------------------------


def resolve(space: ParamSpace, grid_point: int, rng: Rng) -> tuple[Rng, Variant]:
    """The config for grid point `grid_point` (0 <= grid_point < grid_size)
    with fresh random draws from `rng`; returns the advanced `rng`. The
    space's `sample_from` functions are called here, so they must be in it
    (a generator's space holds none: see `resolve_sampled`)."""
    rng, variant = resolve_sampled(space, grid_point, rng)
    values = call_functions(variant.config, space.derived)
    return rng, with_derived(variant, space.derived, values)


def resolve_sampled(space: ParamSpace, grid_point: int, rng: Rng) -> tuple[Rng, Variant]:
    """Like `resolve` but without calling functions: the derived values
    stay None in the config and out of `resolved`. A generator resolves
    this far, the shell calls the functions on the config
    (`call_functions`), and `with_derived` puts their values in."""
    if not 0 <= grid_point < space.grid_size:
        raise InvalidFieldError("grid_point", grid_point, f"0 <= grid_point < {space.grid_size}")
    config = copy_json(space.skeleton)
    assert isinstance(config, dict)
    resolved: list[tuple[Path, JsonValue]] = []
    rest = grid_point
    for parameter in space.grid:
        values = _grid_domain(parameter).values
        rest, digit = divmod(rest, len(values))
        value = copy_json(values[digit])
        _assign(config, parameter.path, value)
        resolved.append((parameter.path, value))
    for parameter in space.sampled:
        rng, value = _sampling_domain(parameter).sample(rng)
        _assign(config, parameter.path, value)
        resolved.append((parameter.path, value))
    resolved.sort(key=lambda item: item[0])
    return rng, Variant(config, tuple(resolved))


def call_functions(config: JsonDict, derived: Sequence[Parameter]) -> list[JsonValue]:
    """The values of the `sample_from` functions in `derived` on `config`
    (grid and sampled values resolved), in the order of `derived`. `config`
    is not changed. This runs user code: the shell calls it."""
    work = copy_json(config)
    assert isinstance(work, dict)
    by_path = dict(_resolve_derived(work, derived))
    return [by_path[parameter.path] for parameter in derived]


def with_derived(
    variant: Variant, derived: Sequence[Parameter], values: Sequence[JsonValue]
) -> Variant:
    """`variant` with the derived values put in (one per parameter)."""
    if len(values) != len(derived):
        raise InvalidFieldError("values", list(values), f"one value per function ({len(derived)})")
    config = copy_json(variant.config)
    assert isinstance(config, dict)
    resolved = list(variant.resolved)
    for parameter, given in zip(derived, values, strict=True):
        value = plain_json(format_path(parameter.path), given)
        _assign(config, parameter.path, value)
        resolved.append((parameter.path, value))
    resolved.sort(key=lambda item: item[0])
    return Variant(config, tuple(resolved))


def with_functions(functions: Mapping[Path, SampleFrom], paths: Sequence[Path]) -> list[Parameter]:
    """The derived parameters at `paths` with their functions taken from
    `functions` (by path); a missing one is an error naming its path."""
    for path in paths:
        if path not in functions:
            raise InvalidFieldError(
                format_path(path),
                None,
                "its sample_from function, which the event log does not hold: pass the "
                "param_space again (Tuner.restore(path, param_space=...))",
            )
    return [Parameter(path, functions[path]) for path in paths]


def without_functions(space: ParamSpace) -> ParamSpace:
    """The space with every `sample_from` function taken out (its place,
    import path and signature kept), so that it encodes: what a searcher in
    the core holds."""
    derived = tuple(
        Parameter(p.path, _function_domain(p).without_function()) for p in space.derived
    )
    return msgspec.structs.replace(space, derived=derived)


def as_param_space(space: ParamSpace) -> dict[str, object]:
    """A param space again, as a user writes it: the skeleton with each
    domain (functions left out) in its place."""
    if space.grid and not space.grid[0].path:  # a grid over whole configs
        return {"grid_search": copy_json(_grid_domain(space.grid[0]).values)}
    rebuilt = copy_json(space.skeleton)
    assert isinstance(rebuilt, dict)
    for parameter in (*space.grid, *space.sampled):
        _assign(rebuilt, parameter.path, parameter.domain)  # type: ignore[arg-type]
    return rebuilt  # type: ignore[return-value]


class Missing:
    """The type of `MISSING`."""


MISSING = Missing()
"""What `value_at` finds where a config has no value."""


def value_at(config: Mapping[str, object], path: Path) -> object:
    """The value at `path` in a nested config (dicts and lists), or
    `MISSING` where the config has none: how a searcher's answer is read
    parameter by parameter."""
    value: object = config
    for part in path:
        if isinstance(value, Mapping) and isinstance(part, str):
            value = value.get(part, MISSING)  # MISSING stays MISSING to the end
        elif isinstance(value, list | tuple) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return MISSING
    return value


def _assign(config: JsonDict, path: Path, value: JsonValue) -> None:
    if not path:  # a grid over whole configs: the value is the config
        assert isinstance(value, dict)
        config.clear()
        config.update(value)
        return
    container: JsonValue = config
    for part in path[:-1]:
        container = container[part]  # type: ignore[index]
    container[path[-1]] = value  # type: ignore[index]


def _resolve_derived(
    config: JsonDict, derived: Sequence[Parameter]
) -> list[tuple[Path, JsonValue]]:
    """Call the functions in passes until all are resolved (see the header).
    At most len(derived) passes: each pass that does not fail resolves one."""
    pending: dict[Path, SampleFrom] = {p.path: _function_domain(p) for p in derived}
    resolved: list[tuple[Path, JsonValue]] = []
    while pending:
        waits: dict[Path, Path] = {}
        before = len(pending)
        for path, domain in list(pending.items()):
            probe = Probe()
            try:
                result = _materialise(domain.call(view_of(config, pending.keys(), probe)))
            except UnresolvedValueError as error:
                waits[path] = probe.waited_for or error.path
                continue
            except Exception as error:
                raise InvalidFieldError(
                    format_path(path),
                    domain.func,
                    f"a sample_from function that succeeds on the config; it raised {error!r}",
                ) from error
            if probe.waited_for is not None:
                waits[path] = probe.waited_for
                continue
            value = plain_json(format_path(path), result)
            _assign(config, path, value)
            resolved.append((path, value))
            del pending[path]
        if len(pending) == before:
            raise _cycle_error(waits, pending)
    return resolved


def _materialise(result: object) -> object:
    """Views a function returned (`lambda spec: spec["base"]`) as plain data;
    reading them may still find an unresolved value, which then waits."""
    if isinstance(result, ConfigView):
        return {key: _materialise(value) for key, value in result.items()}
    if isinstance(result, ListView):
        return [_materialise(value) for value in result]
    return result


def _cycle_error(waits: Mapping[Path, Path], stuck: Mapping[Path, SampleFrom]) -> InvalidFieldError:
    """Follow the waits from the first stuck function until one repeats."""
    start = next(iter(waits))
    chain = [start]
    while (following := waits.get(chain[-1])) is not None and following not in chain:
        chain.append(following)
    if following is not None:
        chain.append(following)
    route = " -> ".join(format_path(path) for path in chain)
    return InvalidFieldError(
        format_path(start),
        stuck[start].func,
        f"a sample_from function that does not wait on itself; these wait in a cycle: {route}",
    )


# -- reporting -------------------------------------------------------------------------------------


def evaluated_params(variant: Variant) -> JsonDict:
    """The resolved values by '/'-joined path (`optimizer/lr`, `layers/0`)."""
    return {_joined(path, "/"): value for path, value in variant.resolved}


def _joined(parts: Path, separator: str) -> str:
    """`parts` joined by `separator`; the empty path is the whole config."""
    return separator.join(str(part) for part in parts) or WHOLE_CONFIG


def experiment_tag(index: int, variant: Variant) -> str:
    """`f"{index}_{format_vars(...)}"`, or `str(index)` if nothing was resolved."""
    formatted = format_vars(variant.resolved)
    return f"{index}_{formatted}" if formatted else str(index)


def format_vars(resolved: Sequence[tuple[Path, JsonValue]]) -> str:
    """`name=value` pairs sorted by path, joined by ','; see the header."""
    ordered = sorted(resolved, key=lambda item: item[0])
    names = _short_names([path for path, _ in ordered])
    return ",".join(f"{_clean(names[path])}={_clean_value(value)}" for path, value in ordered)


def _short_names(paths: Sequence[Path]) -> dict[Path, str]:
    lengths = {path: _minimal_suffix(path) for path in paths}
    while True:
        names = {path: _joined(path[len(path) - lengths[path] :], "_") for path in paths}
        holders: dict[str, list[Path]] = {}
        for path, name in names.items():
            holders.setdefault(name, []).append(path)
        grown = False
        for group in holders.values():
            if len(group) < 2:
                continue
            for path in group:
                if lengths[path] < len(path):
                    lengths[path] += 1
                    grown = True
        if not grown:
            return names


def _minimal_suffix(path: Path) -> int:
    """Components from the end up to and including the last dict key."""
    for length in range(1, len(path) + 1):
        if isinstance(path[-length], str):
            return length
    return len(path)


_UNSAFE = re.compile(r"[\s/\\]+")


def _clean(text: str) -> str:
    return _UNSAFE.sub("_", text)


def _clean_value(value: JsonValue) -> str:
    if isinstance(value, float):
        return _clean(format(value, ".5"))
    return _clean(str(value))
