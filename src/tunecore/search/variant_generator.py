"""`ray.tune.search.variant_generator`: the space helpers custom searchers import.

Ray's own searchers begin by splitting the space they are given with
`parse_spec_vars` (`_, domain_vars, grid_vars = parse_spec_vars(space)`:
are there domains left to convert?), and users' searchers, written by
copying them, import it from here too; `generate_variants` enumerates a
space as Ray's BasicVariantGenerator does, which scripts and their tests
use to list a grid's configs without running it.

The rules, as Ray 2.60's:
- `parse_spec_vars(spec)` walks dicts in insertion order and lists by index
  and returns `(resolved_vars, domain_vars, grid_vars)`, each a list of
  `(path, value)` with `path` a tuple of keys and indices. A domain (any of
  `tune.uniform`, `tune.choice`, `tune.sample_from`..., or a domain built by
  hand) is a domain var, returned as given, but a choice over objects,
  returned as the `sample.Categorical` Ray would hold; a grid
  (`tune.grid_search([...])` or the dict `{"grid_search": [...]}`) is a grid
  var, returned as Ray returns it, `Categorical(values).grid()`, and the
  grid vars are sorted by path; everything else is a resolved var.
- `generate_variants(spec)` yields `(resolved_vars, config)` for each grid
  point, in Ray's order (the first grid var by path changes fastest), the
  random domains drawn afresh for each point (`constant_grid_search=True`:
  drawn once, the same at every point) and the `sample_from` functions
  called on the rest. `resolved_vars` maps each path to the value chosen.
  It draws with tunecore's seeded generator: the same `random_state` gives
  the same variants, though not Ray's numbers. The spec's constants must be
  JSON (an error names the first that is not), as in a param space.
- `format_vars(resolved_vars)` spells `{path: value}` (the first item
  `generate_variants` yields) as Ray's tag of a trial: `name=value` for each
  path in sorted order, the name the path's last key, joined by `,`, with
  the keys `run`, `env` and `resources_per_trial` left out, floats to 4
  decimals and everything else reduced to `[a-zA-Z0-9_-]`. Trial names of
  tunecore's own runs tell same-named keys apart (`a_lr`, `b_lr`); this is
  Ray's spelling, which users' trial-name creators rebuild.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from tunecore._not_provided import not_provided_getattr
from tunecore.core.rng import Rng, seeded
from tunecore.core.schedulers.pbt import clean_tag_value
from tunecore.core.search import domains
from tunecore.core.search.domains import DomainBuilder
from tunecore.core.search.variants import parse_space, resolve
from tunecore.core.search.view import Path
from tunecore.model import JsonDict
from tunecore.search.object_values import ObjectChoice, grid_search
from tunecore.search.sample import Categorical, Domain

PathValues = list[tuple[Path, Any]]


def parse_spec_vars(spec: Mapping[str, Any]) -> tuple[PathValues, PathValues, PathValues]:
    """`(resolved_vars, domain_vars, grid_vars)` of `spec` (see the module doc)."""
    resolved: PathValues = []
    domain_vars: PathValues = []
    grid_vars: PathValues = []

    def walk(value: Any, path: Path) -> None:
        grid = _grid_values(value)
        if grid is not None:
            grid_vars.append((path, Categorical(grid).grid()))
        elif isinstance(value, ObjectChoice):
            domain_vars.append((path, Categorical(value.categories).uniform()))
        elif isinstance(value, Domain):
            domain_vars.append((path, value))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, (*path, key))
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                walk(item, (*path, index))
        else:
            resolved.append((path, value))

    for key, value in spec.items():
        walk(value, (key,))
    grid_vars.sort(key=lambda item: item[0])
    return resolved, domain_vars, grid_vars


def _grid_values(value: Any) -> list[Any] | None:
    """The values of a grid search (tunecore's domain, Ray's dict, or a
    hand-built `Categorical(...).grid()`), or None when `value` is none."""
    if isinstance(value, domains.GridSearch):
        return list(value.values)
    if isinstance(value, Mapping) and len(value) == 1 and "grid_search" in value:
        return list(value["grid_search"])
    # a hand-built one (`tune.choice`'s domain counts as a Categorical too)
    if isinstance(value, DomainBuilder) and isinstance(value, Categorical) and value.is_grid():
        return list(value.categories)
    return None


def generate_variants(
    unresolved_spec: Mapping[str, Any],
    constant_grid_search: bool = False,
    random_state: int | np.random.Generator | np.random.RandomState | None = None,
) -> Iterator[tuple[dict[Path, Any], JsonDict]]:
    """Every variant of `unresolved_spec` (see the module doc)."""
    space = parse_space(unresolved_spec)
    start = _generator(random_state)
    rng = start
    for grid_point in range(space.grid_size):
        rng, variant = resolve(space, grid_point, start if constant_grid_search else rng)
        yield dict(variant.resolved), variant.config


def _generator(random_state: object) -> Rng:
    """tunecore's generator seeded from Ray's `random_state`: a seed, a
    numpy generator (one draw of it), or None (an unseeded start)."""
    if isinstance(random_state, np.random.Generator):
        return seeded(int(random_state.integers(2**63)))
    if isinstance(random_state, np.random.RandomState):
        return seeded(int(random_state.randint(2**31)))
    if random_state is None:
        return seeded(random.getrandbits(64))
    if isinstance(random_state, int) and not isinstance(random_state, bool):
        return seeded(random_state)
    raise TypeError(
        f"random_state={random_state!r} is invalid: expected None, an int seed, a "
        "numpy.random.Generator or a numpy.random.RandomState"
    )


def assign_value(spec: dict[Any, Any], path: Sequence[Any], value: Any) -> None:
    """Set `spec` at `path` (keys and list indices) to `value`, in place."""
    *parents, last = path
    for key in parents:
        spec = spec[key]
    spec[last] = value


def format_vars(resolved_vars: Mapping[Any, Any]) -> str:
    """Ray's `key=value,...` tag of `{path: value}` (see the module doc)."""
    shown = {path: value for path, value in resolved_vars.items() if path not in _NOT_IN_TAG}
    return ",".join(
        f"{clean_tag_value(path[-1])}={clean_tag_value(value)}"
        for path, value in sorted(shown.items())
    )


_NOT_IN_TAG = ("run", "env", "resources_per_trial")
"""Keys Ray's trial runner had already put in the tag (Ray's format_vars
drops them)."""


__all__ = ["assign_value", "format_vars", "generate_variants", "grid_search", "parse_spec_vars"]

__getattr__ = not_provided_getattr(__name__)
