"""`choice` and `grid_search` as Ray Tune users call them: over objects too.

Ray Tune lets a grid or a choice range over anything (`tune.grid_search(
[ray.put(model_1), ray.put(model_2)])`). The core's domains hold JSON
only, because they are logged; so over values that are not JSON these
functions return what the `Tuner` splits before the space is logged
(`tunecore.api.config_objects`): for a grid Ray's own form, the dict
`{"grid_search": values}`, and for a choice an `ObjectChoice`. Over JSON
values they return the core's domains, as before. A searcher given such a
space directly (not through `Tuner(param_space=...)`) refuses it, naming
the key, as Ray's model-based searchers refuse objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from tunecore.core.search import domains
from tunecore.model import InvalidFieldError, JsonValue


@dataclass(frozen=True)
class ObjectChoice:
    """A choice among categories some of which are not JSON; the `Tuner`
    turns it into a `Choice` of placeholders and keeps the objects."""

    categories: tuple[object, ...]


def is_loggable(value: object) -> bool:
    """Whether `value` is plain JSON (or a domain: misplaced domains are
    the core's error to report, not an object to keep)."""
    if isinstance(value, domains.DOMAIN_TYPES):
        return True
    try:
        domains.plain_json("value", value)
    except InvalidFieldError:
        return False
    return True


@overload
def choice(categories: Sequence[JsonValue]) -> domains.Choice: ...
@overload
def choice(categories: Sequence[object]) -> domains.Choice | ObjectChoice: ...
def choice(categories: Sequence[object]) -> domains.Choice | ObjectChoice:
    """One of the categories, uniformly; they may be objects (see the module doc)."""
    values: list[object] = domains.listed("choice(categories)", categories)
    if all(is_loggable(value) for value in values):
        return domains.choice(values)  # type: ignore[arg-type]  # checked: JSON
    return ObjectChoice(tuple(values))


@overload
def grid_search(values: Sequence[JsonValue]) -> domains.GridSearch: ...
@overload
def grid_search(values: Sequence[object]) -> domains.GridSearch | dict[str, list[object]]: ...
def grid_search(values: Sequence[object]) -> domains.GridSearch | dict[str, list[object]]:
    """Every value, crossed with every other grid; they may be objects (see
    the module doc)."""
    listed: list[object] = domains.listed("grid_search(values)", values)
    if all(is_loggable(value) for value in listed):
        return domains.grid_search(listed)  # type: ignore[arg-type]  # checked: JSON
    return {"grid_search": listed}
