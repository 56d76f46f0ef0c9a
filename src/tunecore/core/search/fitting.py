"""Whether a config fits an experiment's parameter space: what a trial
added by hand (`tunecore add DIR --config JSON`) is checked against before
it is queued, so that `{"lr": "abc"}` or a misspelt key is refused at once
instead of failing later in the user's code.

The rules, for each key of the config, by what the space holds there:
- a sampling domain (uniform, choice, randint, ...): a value the domain
  could have drawn (`is_valid`: a number within its bounds, an integer for
  the integer domains, a multiple of q, one of a choice's categories);
- a grid_search: a value of a type its values have (a number for a grid of
  numbers): a grid lists points to try, and a trial added by hand may try
  another one, but not one of another kind;
- a sample_from: anything (its value is the user's function's to compute,
  and a config given by hand overrides it);
- a constant: a value of the same JSON type (a number for a number): the
  constant is what the searcher's trials get, and a trial added by hand
  may set another (more epochs, say), but `"abc"` for `10` is a mistake;
- a nested table: a table, checked key by key by these same rules;
- nothing (the key is not in the space): refused, naming the keys there.
Keys of the space the config leaves out are not asked for: the trial's
config is what was given (as the running experiment takes it)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping

import msgspec

from tunecore.core.search.base import unwrapped
from tunecore.core.search.domains import (
    Choice,
    Domain,
    GridSearch,
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
)
from tunecore.core.search.external import ExternalSearcher
from tunecore.core.search.generator import BasicVariantGenerator
from tunecore.core.search.variants import ParamSpace, parse_space
from tunecore.core.search.view import Path
from tunecore.model import JsonValue
from tunecore.model.numbers import is_number


class Misfit(msgspec.Struct, frozen=True):
    """Where a config leaves its space: the key's path, its value, and what
    the space accepts there."""

    path: Path
    value: object
    expected: str


def searched_space(searcher: object) -> ParamSpace | None:
    """The parameter space the experiment's searcher holds (under any
    wrapper: a concurrency limit, a repeater), or None where it holds
    none the core can read (a searcher with a space of its own)."""
    searcher = unwrapped(searcher)
    if not isinstance(searcher, BasicVariantGenerator | ExternalSearcher):
        return None
    space = searcher.param_space if isinstance(searcher, BasicVariantGenerator) else searcher.space
    if space is None or isinstance(space, ParamSpace):
        return space
    return parse_space(space)


def misfit(space: ParamSpace, config: Mapping[str, JsonValue]) -> Misfit | None:
    """The first key of `config` that does not fit `space` (see the module
    docstring), or None if all do."""
    domains = {p.path: p.domain for p in (*space.grid, *space.sampled, *space.derived)}
    return _misfit_in(space.skeleton, domains, config, ())


def _misfit_in(
    skeleton: Mapping[str, JsonValue],
    domains: Mapping[Path, Domain],
    config: Mapping[str, JsonValue],
    at: Path,
) -> Misfit | None:
    for key, value in config.items():
        path = (*at, key)
        if key not in skeleton:
            return Misfit(path, value, _keys_expected(key, skeleton))
        found = _misfit_at(skeleton[key], domains, path, value)
        if found is not None:
            return found
    return None


def _misfit_at(
    held: JsonValue, domains: Mapping[Path, Domain], path: Path, value: JsonValue
) -> Misfit | None:
    domain = domains.get(path)
    if domain is not None:
        expected = _domain_expected(domain, value)
        return None if expected is None else Misfit(path, value, expected)
    if isinstance(held, dict):
        if not isinstance(value, dict):
            return Misfit(path, value, f"a table of {_names(held)}")
        return _misfit_in(held, domains, value, path)
    if _kind(value) != _kind(held):
        return Misfit(path, value, f"{_kind(held)} (the space's constant is {_shown(held)})")
    return None


def _domain_expected(domain: Domain, value: JsonValue) -> str | None:
    """What `domain` accepts, if `value` is not that; None if it is."""
    if isinstance(domain, SampleFrom):
        return None
    if isinstance(domain, GridSearch):
        kinds = sorted({_kind(item) for item in domain.values})
        if _kind(value) in kinds:
            return None
        return f"{' or '.join(kinds)} (the grid's values are {_shown(domain.values)})"
    if domain.is_valid(value):
        return None
    return _accepts(domain)


def _accepts(domain: Domain) -> str:
    match domain:
        case Choice(categories=categories):
            return f"one of {_shown(categories)}"
        case Uniform(low=low, high=high) | LogUniform(low=low, high=high):
            return f"a number in [{low:g}, {high:g}]"
        case QUniform(low=low, high=high, q=q) | QLogUniform(low=low, high=high, q=q):
            return f"a multiple of {q:g} in [{low:g}, {high:g}]"
        case RandInt(low=low, high=high) | LogRandInt(low=low, high=high):
            return f"an integer in [{low}, {high})"
        case QRandInt(low=low, high=high, q=q) | QLogRandInt(low=low, high=high, q=q):
            return f"a multiple of {q} in [{low}, {high}]"
        case QRandN(q=q):
            return f"a multiple of {q:g}"
        case RandN():
            return "a number"
    return f"a value of {domain!r}"


def _keys_expected(key: str, skeleton: Mapping[str, JsonValue]) -> str:
    if not skeleton:
        return "no keys: the space is empty"
    close = difflib.get_close_matches(key, list(skeleton), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"a key of the space ({hint}its keys: {_names(skeleton)})"


def _kind(value: object) -> str:
    """A JSON value's kind, telling a flag from a number."""
    if isinstance(value, bool):
        return "true or false"
    if is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a table"
    return "null"


def _names(table: Mapping[str, object]) -> str:
    return ", ".join(repr(key) for key in table)


def _shown(value: object) -> str:
    return json.dumps(value, default=repr)
