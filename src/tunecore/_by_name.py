"""Ray Tune's `create_searcher` and `create_scheduler`: an object chosen
by name, as from a command-line option."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any


def create_by_name(
    what: str, table: Mapping[str, str], chosen: str, kwargs: Mapping[str, Any], missing: str
) -> Any:
    """The class `table` names `chosen` (any case; each by its import path,
    `module:Class`, so a package is imported only when chosen), built with
    those of `kwargs` it takes: the rest are dropped, as in Ray Tune. An
    unknown name is a `ValueError` naming `what`, the value and the known
    names, then `missing` (what Ray has that tunecore does not)."""
    target = table.get(chosen.lower())
    if target is None:
        raise ValueError(f"{what}={chosen!r} is not one of {sorted(table)} ({missing})")
    module, _, name = target.partition(":")
    kind = getattr(importlib.import_module(module), name)
    takes = inspect.signature(kind).parameters
    return kind(**{key: value for key, value in kwargs.items() if key in takes})
