"""`ray.tune.search.variant_generator`'s `generate_variants` and `grid_search`.

Scripts call `generate_variants(space)` to list the configs a space stands
for without running anything (how many trials a grid makes, a config to
try by hand). It yields what Ray's does: for each grid point, in the order
Ray's `BasicVariantGenerator` runs them, the pair `(resolved_vars,
config)`, where `resolved_vars` maps each searched value's path (a tuple of
keys and list indexes, `("optimizer", "lr")`) to its value, `sample_from`
values included, and `config` is the space with every domain resolved. The
configs are tunecore's own, drawn by the same resolution `Tuner` uses
(`tunecore.core.search.variants`), so they hold plain JSON.

Ray's other helpers here (`parse_spec_vars`, `format_vars`,
`assign_value`) read and write Ray's own domain objects, which tunecore's
domains are not; they are refused with an error saying so.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Iterator, Mapping
from typing import Any, TypeAlias

import numpy as np

from tunecore._not_provided import not_provided_getattr
from tunecore.core.rng import seeded
from tunecore.core.search.variants import parse_space, resolve
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError
from tunecore.search.object_values import grid_search

__all__ = ["generate_variants", "grid_search"]

_SEED_BOUND = 2**63

Variant: TypeAlias = tuple[dict[Path, Any], dict[str, Any]]
"""`(resolved_vars, config)`: plain JSON, typed `Any` as Ray leaves it, so a
script reads `config["lr"] * 2` without casts."""


def generate_variants(
    unresolved_spec: Mapping[str, object],
    constant_grid_search: bool = False,
    random_state: int | np.random.Generator | np.random.RandomState | None = None,
) -> Iterator[Variant]:
    """Each grid point of `unresolved_spec` resolved: `(resolved_vars,
    config)` (see the module doc). Random values are drawn afresh for each
    grid point, or once for the whole grid with `constant_grid_search`.

    `random_state` seeds the draws as in Ray: an int (with which, as in
    Ray, every grid point draws the same values), or a numpy `Generator` /
    `RandomState` a seed is taken from; None takes the seed from numpy's
    global generator, so `np.random.seed(...)` before the call repeats the
    configs. A space that is not valid raises
    `InvalidFieldError` naming the parameter, before anything is yielded."""
    space = parse_space(unresolved_spec)
    rng = seeded(_seed_from(random_state))
    # Ray hands `random_state` to every draw as given, and an int seeds a
    # fresh generator each time: every grid point then draws the same values.
    same_draws = constant_grid_search or _is_int(random_state)
    for grid_point in range(space.grid_size):
        drawn, variant = resolve(space, grid_point, rng)
        if not same_draws:
            rng = drawn
        yield dict(variant.resolved), variant.config


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _seed_from(random_state: object) -> int:
    if _is_int(random_state):
        return operator.index(random_state)  # type: ignore[arg-type]
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_SEED_BOUND))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31))
    if random_state is None:
        return int(np.random.randint(2**31))
    raise InvalidFieldError(
        "random_state",
        random_state,
        "an int, a numpy Generator or RandomState, or None",
    )


__getattr__ = not_provided_getattr(__name__)
