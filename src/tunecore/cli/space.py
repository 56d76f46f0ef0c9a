"""The parameter space file of `tunecore run --param-space` (TOML or JSON):
parsed into tunecore's domains, with an error naming the file, the
parameter and the value for anything wrong in it."""

from __future__ import annotations

import difflib
import json
import tomllib
from collections.abc import Callable
from pathlib import Path

from tunecore.cli.errors import CliError
from tunecore.core.search.domains import (
    SAMPLING_TYPES,
    LogRandInt,
    RandInt,
    choice,
    grid_search,
    loguniform,
    plain_json,
    qloguniform,
    qrandint,
    quniform,
    randint,
    randn,
    uniform,
)
from tunecore.model import (
    InvalidFieldError,
)
from tunecore.model.numbers import is_number

PARAM_SPACE_HELP = """\
The parameter space file (--param-space) is TOML (.toml) or JSON (.json).
Each key is a parameter; a value is a constant, a list (a constant too), a
nested table (nested parameters), or a table with exactly one of these keys,
which makes it a search domain (the tunecore function of the same name):

    {"uniform": [low, high]}          float in [low, high)
    {"quniform": [low, high, q]}      float in [low, high], a multiple of q
    {"loguniform": [low, high]}       float, log-uniform in [low, high]
    {"qloguniform": [low, high, q]}   the same, a multiple of q
    {"randint": [low, high]}          integer in [low, high): high is excluded
    {"qrandint": [low, high, q]}      multiple of q in [low, high]: both included
    {"randn": [mean, sd]}             float from the normal distribution
    {"choice": [value, ...]}          one of the values, each equally likely
    {"grid_search": [value, ...]}     every value (grids are crossed; each
                                      point is sampled --num-samples times)

For example, space.toml:

    lr = {loguniform = [1e-4, 1e-1]}
    batch = {choice = [32, 64, 128]}
    optimizer = {grid_search = ["sgd", "adam"]}
    epochs = 10
    [model]
    width = {randint = [16, 257]}

--scheduler pbt mutates the parameters given as a domain other than
grid_search; --scheduler pb2 chooses those given as a numeric range
(uniform, quniform, loguniform, qloguniform and the randints), within it.
A constant table whose only key is one of the names above would be read
as a domain: no such table can be a constant; nor can one whose only key
is close to such a name ({loguniforn = [...]} is an error asking "did you
mean 'loguniform'?", not a constant).
"""

_DomainMaker = Callable[..., object]
_DOMAINS: dict[str, tuple[_DomainMaker, str, bool]] = {
    # name: (constructor, its arguments, whether the list is spread into them)
    "uniform": (uniform, "[low, high]", True),
    "quniform": (quniform, "[low, high, q]", True),
    "loguniform": (loguniform, "[low, high]", True),
    "qloguniform": (qloguniform, "[low, high, q]", True),
    "randint": (randint, "[low, high]", True),
    "qrandint": (qrandint, "[low, high, q]", True),
    "randn": (randn, "[mean, sd]", True),
    "choice": (choice, "[value, ...]", False),
    "grid_search": (grid_search, "[value, ...]", False),
}


def load_param_space(file: str) -> dict[str, object]:
    """The search space in `file` (see `PARAM_SPACE_HELP`), with its domains
    built; a `CliError` naming the file, the parameter and the value if
    anything in it is wrong."""
    path = Path(file).expanduser()
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise CliError(f"--param-space {path}: a parameter space file must end in .toml or .json")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CliError(f"--param-space {path}: cannot read it ({error.strerror})") from None
    try:
        data: object = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise CliError(f"{path}: not valid {suffix[1:].upper()}: {error}") from None
    if not isinstance(data, dict):
        raise CliError(f"{path}: the parameter space must be a table/object of parameters")
    return {key: _parameter(path, key, value) for key, value in data.items()}


def _parameter(file: Path, name: str, value: object) -> object:
    """One parameter: a domain, a nested table of parameters, or a constant."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, arguments),) = value.items()
            if key in _DOMAINS:
                return _domain(file, name, key, arguments)
            _refuse_misspelled_domain(file, name, key, arguments)
        return {key: _parameter(file, f"{name}.{key}", item) for key, item in value.items()}
    try:
        return plain_json(name, value)
    except InvalidFieldError as error:
        raise _bad_parameter(file, name, value, error.expected) from None


def _refuse_misspelled_domain(file: Path, name: str, key: str, arguments: object) -> None:
    """A one-key table whose key is close to a domain name is a typo, not a
    constant: `{loguniforn = [...]}` silently fixed at a table would tune
    nothing. (A real nested constant with such a key is renamed, which is
    cheaper than a search that never searched.)"""
    close = difflib.get_close_matches(key.lower(), list(_DOMAINS), n=1, cutoff=0.75)
    if close:
        raise _bad_parameter(
            file,
            name,
            {key: arguments},
            f"{key!r} is not a domain; did you mean {close[0]!r}? (domains: {', '.join(_DOMAINS)})",
        )


def _domain(file: Path, name: str, kind: str, arguments: object) -> object:
    make, usage, spread = _DOMAINS[kind]
    given = {kind: arguments}
    if not isinstance(arguments, list):
        raise _bad_parameter(file, name, given, f"{kind} takes a list {usage}")
    try:
        return make(*arguments) if spread else make(arguments)
    except TypeError:
        raise _bad_parameter(file, name, given, f"{kind} takes {usage}") from None
    except InvalidFieldError as error:
        raise _bad_parameter(file, name, given, str(error)) from None


def _bad_parameter(file: Path, name: str, value: object, why: str) -> CliError:
    shown = json.dumps(value, default=repr)
    return CliError(f"{file}: parameter {name!r} = {shown} is invalid: {why}")


def sampled_domains(space: dict[str, object]) -> dict[str, object]:
    """The parameters given as a sampling domain (PBT's mutations), nested
    as in the space."""
    found: dict[str, object] = {}
    for key, value in space.items():
        if isinstance(value, SAMPLING_TYPES):
            found[key] = value
        elif isinstance(value, dict) and (inner := sampled_domains(value)):
            found[key] = inner
    return found


_HIGH_EXCLUDED = (RandInt, LogRandInt)


def range_bounds(space: dict[str, object]) -> dict[str, object]:
    """PB2's `hyperparam_bounds`: `[low, high]` of each parameter given as
    a numeric range (both ends included: a randint's excluded high is
    high - 1), nested as in the space."""
    found: dict[str, object] = {}
    for key, value in space.items():
        if isinstance(value, dict):
            if inner := range_bounds(value):
                found[key] = inner
            continue
        low, high = getattr(value, "low", None), getattr(value, "high", None)
        if isinstance(value, SAMPLING_TYPES) and is_number(low) and is_number(high):
            found[key] = [low, high - 1 if isinstance(value, _HIGH_EXCLUDED) else high]
    return found
