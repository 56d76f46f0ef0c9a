"""tunecore's search domains as Optuna distributions, and Optuna's values as configs.

Each sampled parameter of a param space becomes one Optuna parameter named
by its '/'-joined path (`optimizer/lr`, as Ray names them), with a
distribution that samples exactly the domain's values:

| tunecore domain            | Optuna distribution                                   |
|----------------------------|-------------------------------------------------------|
| uniform(lo, hi)            | FloatDistribution(lo, hi)                             |
| quniform(lo, hi, q)        | FloatDistribution(lo, hi, step=q)                     |
| loguniform(lo, hi)         | FloatDistribution(lo, hi, log=True)                   |
| qloguniform(lo, hi, q)     | FloatDistribution(lo, hi, log=True), then rounded to q |
| randint(lo, hi)            | IntDistribution(lo, hi - 1) (hi is exclusive)         |
| qrandint(lo, hi, q)        | IntDistribution over the multiples of q in [lo, hi]   |
| lograndint(lo, hi)         | IntDistribution(lo, hi - 1, log=True)                 |
| qlograndint(lo, hi, q)     | IntDistribution(.., log=True), then rounded to q      |
| choice(categories)         | CategoricalDistribution(categories)                   |

Optuna cannot step a log scale, so the two quantized log domains round
Optuna's value to the nearest multiple of q (Ray drops q instead, and its
values then miss the lattice). A choice whose categories are not all
distinct scalars (a list, a dict, both 1 and True) is searched by index.
`randn`, `qrandn`, `grid_search`, `sample_from` and domains inside lists
have no Optuna counterpart and are refused, naming the parameter.

A define-by-run space (a function of an Optuna trial) has no parameters
up front: `Recorder` gives the function the trial and keeps what each
`suggest_*` call returned, which `unflattened` makes a config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalChoiceType,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import create_trial

from tunecore.core.search.domains import (
    Choice,
    GridSearch,
    LogRandInt,
    LogUniform,
    QLogRandInt,
    QLogUniform,
    QRandInt,
    QUniform,
    RandInt,
    SampleFrom,
    Uniform,
    copy_json,
)
from tunecore.core.search.variants import Parameter, ParamSpace, format_path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.search.spaces import set_at


@dataclass(frozen=True)
class OptunaParam:
    """One Optuna parameter: its name, where it goes in a config, and the
    conversions between Optuna's values and the config's."""

    name: str
    path: tuple[str, ...]
    distribution: BaseDistribution
    to_config: Callable[[Any], JsonValue]
    to_optuna: Callable[[JsonValue], Any]
    contains: Callable[[JsonValue], bool]


def from_domains(space: ParamSpace) -> tuple[OptunaParam, ...]:
    """The Optuna parameters of a parsed tunecore param space."""
    for parameter in (*space.grid, *space.derived):
        raise InvalidFieldError(
            format_path(parameter.path),
            parameter.domain,
            "a domain Optuna can sample (OptunaSearch cannot search a grid_search or "
            "sample_from: use a choice, or pass an Optuna define-by-run function as space)",
        )
    return tuple(_convert(parameter) for parameter in space.sampled)


def from_distributions(space: Mapping[str, object], where: str) -> tuple[OptunaParam, ...]:
    """The parameters of a (nested) dict of Optuna distributions."""
    params: list[OptunaParam] = []

    def walk(value: object, path: tuple[str, ...]) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise InvalidFieldError(f"{where}{_format(path)}[{key!r}]", key, "a string key")
                walk(item, (*path, key))
            return
        if not isinstance(value, BaseDistribution):
            raise InvalidFieldError(
                f"{where}{_format(path)}", value, "an optuna.distributions distribution"
            )
        # Ray flattens nested dicts with '/' and splits names at '/' again.
        params.append(_optuna_param(tuple("/".join(path).split("/")), value))

    walk(space, ())
    return tuple(params)


def config_of(params: tuple[OptunaParam, ...], values: Mapping[str, Any]) -> JsonDict:
    """The nested config of Optuna's values, by the parameters' paths."""
    config: JsonDict = {}
    for param in params:
        if param.name in values:
            set_at(config, param.path, param.to_config(values[param.name]))
    return config


def flat_point(
    params: tuple[OptunaParam, ...],
    point: Mapping[str, object],
    where: str,
    ignored: frozenset[tuple[str, ...]] | None = frozenset(),
) -> dict[str, Any]:
    """A config's values (nested, or flat by Optuna's '/'-joined names, as
    Ray takes them) as Optuna's, by parameter name. Paths in `ignored` (the
    space's constants; every other key when it is None) are skipped; any
    other key no parameter has, or a value outside its distribution, is an
    error naming it."""
    if not isinstance(point, Mapping):
        raise InvalidFieldError(where, point, "a dict of parameter values")
    by_path = {param.path: param for param in params}
    by_name = {param.name: param for param in params}
    flat: dict[str, Any] = {}
    for path, value in _leaves(point, ()):
        param = by_path.get(path) or by_name.get("/".join(path))
        if param is None and (ignored is None or path in ignored):
            continue
        here = f"{where}{_format(path)}"
        if param is None:
            names = ", ".join(param.name for param in params)
            raise InvalidFieldError(here, value, f"a parameter of the search space ({names})")
        candidate = cast(JsonValue, value)  # the user's: `contains` decides whether it is one
        if not param.contains(candidate):
            raise InvalidFieldError(here, value, f"a value in {param.distribution}")
        flat[param.name] = param.to_optuna(candidate)
    return flat


def constant_paths(space: ParamSpace) -> frozenset[tuple[str, ...]]:
    """The paths of a param space's constants (leaves of its skeleton that
    no domain fills)."""
    holes = {parameter.path for parameter in (*space.grid, *space.sampled, *space.derived)}
    return frozenset(path for path, _ in _leaves(space.skeleton, ()) if path not in holes)


def flat_names(point: Mapping[str, object]) -> dict[str, object]:
    """A define-by-run point, its nested dicts joined with '/'."""
    return {"/".join(path): value for path, value in _leaves(point, ())}


def to_plain(value: Any) -> Any:
    """numpy scalars as Python's, tuples as lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    return value


# -- one parameter --------------------------------------------------------------------------------


class Recorder:
    """The Optuna trial a define-by-run function gets, recording what every
    `suggest_*` call returned (Ray's _OptunaTrialSuggestCaptor)."""

    def __init__(self, trial: Any) -> None:
        self._trial = trial
        self.values: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._trial, name)
        if not name.startswith("suggest_") or not callable(found):
            return found

        def recording(*args: Any, **kwargs: Any) -> Any:
            value = found(*args, **kwargs)
            self.values[kwargs.get("name", args[0] if args else "")] = value
            return value

        return recording


def is_constants(value: object) -> bool:
    """None, or a dict of constants by name (what a define-by-run function returns)."""
    return value is None or (isinstance(value, dict) and all(isinstance(k, str) for k in value))


def _convert(parameter: Parameter) -> OptunaParam:
    path = parameter.path
    where = format_path(path)
    if any(not isinstance(part, str) for part in path):
        raise InvalidFieldError(
            where, parameter.domain, "a domain in nested dicts (OptunaSearch takes none in lists)"
        )
    keys = tuple(str(part) for part in path)
    domain = parameter.domain
    if isinstance(domain, GridSearch | SampleFrom):
        raise InvalidFieldError(where, domain, "a domain Optuna can sample")
    name = "/".join(keys)

    def make(
        distribution: BaseDistribution,
        to_config: Callable[[Any], JsonValue],
        to_optuna: Callable[[JsonValue], Any] = lambda value: value,
    ) -> OptunaParam:
        return OptunaParam(name, keys, distribution, to_config, to_optuna, domain.is_valid)

    if isinstance(domain, Uniform):
        return make(FloatDistribution(domain.low, domain.high), _float)
    if isinstance(domain, QUniform):
        return make(FloatDistribution(domain.low, domain.high, step=domain.q), _float)
    if isinstance(domain, LogUniform):
        return make(FloatDistribution(domain.low, domain.high, log=True), _float)
    if isinstance(domain, QLogUniform):
        low, high, q = domain.low, domain.high, domain.q
        return make(
            FloatDistribution(low, high, log=True),
            lambda value: min(max(round(float(value) / q) * q, low), high),
        )
    if isinstance(domain, RandInt):
        return make(IntDistribution(domain.low, domain.high - 1), _int)
    if isinstance(domain, LogRandInt):
        return make(IntDistribution(domain.low, domain.high - 1, log=True), _int)
    if isinstance(domain, QRandInt):
        low, high = _multiples(domain.low, domain.high, domain.q)
        return make(IntDistribution(low, high, step=domain.q), _int)
    if isinstance(domain, QLogRandInt):
        low, high = _multiples(domain.low, domain.high, domain.q)
        q = domain.q
        return make(
            IntDistribution(low, high, log=True),
            lambda value: min(max(round(int(value) / q) * q, low), high),
        )
    if isinstance(domain, Choice):
        return _choice(make, domain.categories)
    raise InvalidFieldError(
        where,
        domain,
        "a domain Optuna can sample (uniform, quniform, loguniform, qloguniform, randint, "
        "qrandint, lograndint, qlograndint, choice): Optuna has no normal distribution",
    )


def _choice(
    make: Callable[..., OptunaParam],
    categories: list[JsonValue],
) -> OptunaParam:
    scalars = all(
        category is None or isinstance(category, bool | int | float | str)
        for category in categories
    )
    distinct = all(a != b for index, a in enumerate(categories) for b in categories[index + 1 :])
    if scalars and distinct:
        choices = cast(list[CategoricalChoiceType], categories)
        return make(CategoricalDistribution(choices), copy_json)

    def index_of(value: JsonValue) -> int:
        return next(i for i, c in enumerate(categories) if type(c) is type(value) and c == value)

    return make(
        CategoricalDistribution(list(range(len(categories)))),
        lambda index: copy_json(categories[int(index)]),
        index_of,
    )


def _optuna_param(path: tuple[str, ...], distribution: BaseDistribution) -> OptunaParam:
    def contains(value: JsonValue) -> bool:
        """Whether Optuna takes `value` for this distribution: its public
        check is the one `create_trial` makes of a trial's params."""
        try:
            create_trial(params={"value": value}, distributions={"value": distribution}, value=0)
        except (TypeError, ValueError):
            return False
        return True

    return OptunaParam("/".join(path), path, distribution, to_plain, lambda v: v, contains)


def _multiples(low: int, high: int, q: int) -> tuple[int, int]:
    """The least and greatest multiples of q in [low, high]."""
    return -(-low // q) * q, (high // q) * q


def _float(value: Any) -> JsonValue:
    return float(value)


def _int(value: Any) -> JsonValue:
    return int(value)


Leaf = tuple[tuple[str, ...], object]


def _leaves(value: Mapping[str, object], at: tuple[str, ...]) -> list[Leaf]:
    found: list[Leaf] = []
    for key, item in value.items():
        if isinstance(item, Mapping):
            found.extend(_leaves(item, (*at, str(key))))
        else:
            found.append(((*at, str(key)), item))
    return found


def _format(path: tuple[str, ...]) -> str:
    return "".join(f"[{part!r}]" for part in path)
