"""A param space as the flat list of parameters a model-based optimizer searches.

BayesOpt and HyperOpt know flat, named dimensions; a tunecore param space is
a nested dict of constants and domains. This module is the bridge both use:
`searched_space` parses a space and refuses what an optimizer cannot model
(a `grid_search`, a `sample_from`), naming the parameter's path; `label`
names a dimension as Ray does (`"optimizer/lr"`); `point_values` reads a
user's point (`points_to_evaluate`, a warm-start config) back into one
checked value per parameter; `config_from` puts values into the space's
skeleton, so a suggestion is a whole nested config of plain JSON. The space
round-trips through JSON (`space_to_json` / `space_from_json`), which is how
a searcher's `to_spec` records it. `uniform_space` reads Ray's native
BayesOpt space of `(low, high)` bounds as `Uniform` domains.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from tunecore.core.search.domains import GridSearch, SampleFrom, Uniform, copy_json, plain_json
from tunecore.core.search.variants import MISSING, ParamSpace, format_path, parse_space, value_at
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.model.numbers import is_finite_number


def searched_space(owner: str, space: Mapping[str, object]) -> ParamSpace:
    """The parsed space; a grid or a `sample_from` is an error naming its
    path (the optimizer chooses every value itself, as in Ray)."""
    parsed = parse_space(space)
    for parameter in (*parsed.grid, *parsed.derived):
        kind = "grid_search" if parameter in parsed.grid else "sample_from"
        raise InvalidFieldError(
            format_path(parameter.path),
            parameter.domain,
            f"a random domain (tune.uniform, tune.choice, ...): {owner} cannot search a {kind}",
        )
    labels = [label(parameter.path) for parameter in parsed.sampled]
    for parameter, name in zip(parsed.sampled, labels, strict=True):
        if labels.count(name) > 1:
            raise InvalidFieldError(
                format_path(parameter.path), name, f"a parameter whose name {name!r} is unique"
            )
    return parsed


def label(path: Path) -> str:
    """The dimension's name: its path joined by '/' (Ray's flattened key)."""
    return "/".join(str(part) for part in path)


def point_values(
    owner: str, where: str, space: ParamSpace, point: Mapping[str, object]
) -> dict[Path, JsonValue]:
    """The value of every searched parameter in `point`, a nested config or a
    flat dict keyed by `label`; a missing or out-of-domain value is an error
    naming `where` and the parameter's path."""
    if not isinstance(point, Mapping):
        raise InvalidFieldError(where, point, "a dict of parameter values (a config)")
    values: dict[Path, JsonValue] = {}
    for parameter in space.sampled:
        at = where + "".join(f"[{part!r}]" for part in parameter.path)
        value = value_at(point, parameter.path)
        if value is MISSING:
            value = point.get(label(parameter.path), MISSING)
        if value is MISSING:
            raise InvalidFieldError(at, None, f"a value: {owner} searches this parameter")
        plain = plain_json(at, plain_number(value))
        domain = parameter.domain
        assert not isinstance(domain, GridSearch | SampleFrom)  # searched_space refuses them
        if not domain.is_valid(plain):
            raise InvalidFieldError(at, value, f"a value in {domain!r}")
        values[parameter.path] = plain
    return values


def config_from(space: ParamSpace, values: Mapping[Path, JsonValue]) -> JsonDict:
    """The space's skeleton (its constants) with `values` in their places."""
    config = copy_json(space.skeleton)
    assert isinstance(config, dict)
    for path, value in values.items():
        container: JsonValue = config
        for part in path[:-1]:
            container = _child(container, part)
        *_, last = path
        if isinstance(container, dict) and isinstance(last, str):
            container[last] = value
        else:
            assert isinstance(container, list), path
            assert isinstance(last, int), path
            container[last] = value
    return config


def _child(container: JsonValue, part: str | int) -> JsonValue:
    """The skeleton's value at one step of a parameter's path (the path is
    the skeleton's own, so the step is there)."""
    if isinstance(container, dict) and isinstance(part, str):
        return container[part]
    assert isinstance(container, list), part
    assert isinstance(part, int), part
    return container[part]


def plain_number(value: object) -> object:
    """A numpy scalar as the Python value it holds (numpy's `float64` and
    `str_` too, though they are `float` and `str` subclasses: the log's
    encoder refuses them); anything else as is."""
    item = getattr(value, "item", None)
    if callable(item) and type(value) not in (int, float, str, bool):
        return item()
    return value


def unflattened(values: Mapping[str, object], where: str) -> JsonDict:
    """Values by flat name as a nested config: names split at '/' (Ray's
    unflatten_dict), values as plain JSON (an error naming `where` and the
    name if one is not)."""
    config: JsonDict = {}
    for name, value in values.items():
        plain = plain_json(f"{where}[{name!r}]", plain_config(value))
        set_at(config, tuple(name.split("/")), plain)
    return config


def set_at(config: JsonDict, path: tuple[str, ...], value: JsonValue) -> None:
    """Put `value` at `path` in a nested config, making the dicts on the way."""
    container = config
    for part in path[:-1]:
        below = container.setdefault(part, {})
        if not isinstance(below, dict):
            below = container[part] = {}
        container = below
    container[path[-1]] = value


def plain_config(value: object) -> object:
    """A value an optimizer built (a config of its own space) as plain
    JSON: numpy scalars as Python's, arrays and tuples as lists."""
    if isinstance(value, Mapping):
        return {key: plain_config(item) for key, item in value.items()}
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and getattr(value, "ndim", None):  # an array (a scalar's ndim is 0)
        value = tolist()
    if isinstance(value, list | tuple):
        return [plain_config(item) for item in value]
    return plain_number(value)


def finite(value: object) -> float | None:
    """`value` as a float if it is a finite number, else None (NaN, inf and
    non-numbers are not observations an optimizer can take)."""
    value = plain_number(value)
    return float(value) if is_finite_number(value) else None


def space_to_json(space: ParamSpace) -> JsonValue:
    """The space as plain JSON (for a searcher's spec)."""
    encoded: JsonValue = msgspec.json.decode(msgspec.json.encode(space))
    return encoded


def space_from_json(encoded: object) -> ParamSpace:
    """The space `space_to_json` wrote."""
    return msgspec.convert(encoded, ParamSpace)


def uniform_space(owner: str, bounds: Mapping[str, object]) -> dict[str, object]:
    """Ray's native BayesOpt space, `{"width": (0, 20), "a/b": (lo, hi)}`,
    as a nested param space of `Uniform` domains (a '/' in a name nests)."""
    nested: dict[str, object] = {}
    for name, pair in bounds.items():
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise InvalidFieldError(f"{owner}.space[{name!r}]", pair, "a (low, high) pair")
        try:
            domain = Uniform(*pair)
        except InvalidFieldError as error:
            raise InvalidFieldError(
                f"{owner}.space[{name!r}]", pair, f"a (low, high) pair: {error}"
            ) from error
        container = nested
        *parents, last = name.split("/")
        for part in parents:
            child = container.setdefault(part, {})
            assert isinstance(child, dict)
            container = child
        container[last] = domain
    return nested


__all__ = [
    "config_from",
    "finite",
    "label",
    "plain_config",
    "plain_number",
    "point_values",
    "searched_space",
    "set_at",
    "space_from_json",
    "space_to_json",
    "unflattened",
    "uniform_space",
]
