"""Ray Tune's `create_searcher` and `create_scheduler`: an object chosen
by name, as from a command-line option."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from tunecore.core.registry import Registry


def create_by_name(
    what: str, registry: Registry, chosen: str, kwargs: Mapping[str, Any], missing: str
) -> Any:
    """The policy of Ray's name `chosen` (any case) in `registry`, built
    with those of `kwargs` it takes: the rest are dropped, as in Ray Tune.
    An unknown name is a `ValueError` naming `what`, the value and the known
    names, then `missing` (what Ray has that tunecore does not)."""
    table = registry.ray_names()
    entry = table.get(chosen.lower())
    if entry is None:
        raise ValueError(f"{what}={chosen!r} is not one of {sorted(table)} ({missing})")
    kind = entry.resolve()
    takes = inspect.signature(kind).parameters
    return kind(**{key: value for key, value in kwargs.items() if key in takes})
