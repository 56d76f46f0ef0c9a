"""Stand-ins for the param space's objects, which the log cannot hold.

A `param_space` value that is not JSON (a `ray.put` ref, a model, a
`Checkpoint`, a function), as a constant or as a grid value or choice
category, is replaced before the space reaches the core by a placeholder
string naming its kind and its place: `"<LargeModel model>"` for a
constant at `model`, `"<ObjectRef model_ref[1]>"` for the second value of
a grid (or category of a choice) at `model_ref`. The shell keeps the
objects by place and hands the real one to the trial
(`tunecore.shell.config_objects`); the core, the log, trial names and
result files only ever see the string.

Invariants
- A string is a placeholder only where it stands: its path part names the
  path it sits at (the path's keys joined by `/`, as Ray flattens keys),
  and its index, if any, is the position it holds in its grid or choice.
  So a user's string cannot be taken for one by accident, and a place is
  found from the logged space alone, without the user's code (which a
  restore checks against the objects it is given again).
- The kind is for reading only: a place is (path, index), so an object
  given again to a restore may be of another type.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeAlias

from tunecore.core.search.domains import Choice, GridSearch
from tunecore.core.search.variants import ParamSpace
from tunecore.core.search.view import Path
from tunecore.model import JsonValue

Place: TypeAlias = tuple[Path, int | None]
"""Where an object goes: its path in the space and, for a grid value or a
choice category, its index (None for a constant)."""


def path_text(path: Path) -> str:
    """The path as Ray's flattened key: `optimizer/lr`, `layers/0`."""
    return "/".join(str(part) for part in path)


def placeholder(kind: str, place: Place) -> str:
    """The string that stands for an object of type `kind` at `place`."""
    path, index = place
    shown = "" if index is None else f"[{index}]"
    return f"<{kind} {path_text(path)}{shown}>"


def place_of(value: JsonValue, path: Path) -> Place | None:
    """The place `value` stands for when it is a placeholder sitting at
    `path` (see the invariants), else None."""
    if not (isinstance(value, str) and value.startswith("<") and value.endswith(">")):
        return None
    kind, space, rest = value[1:-1].partition(" ")
    text = path_text(path)
    if not kind or not space or not rest.startswith(text):
        return None
    tail = rest[len(text) :]
    if not tail:
        return (path, None)
    if tail.startswith("[") and tail.endswith("]") and tail[1:-1].isdigit():
        return (path, int(tail[1:-1]))
    return None


def places_in_config(value: JsonValue, path: Path = ()) -> Iterator[Place]:
    """Every placeholder's place in a config (or in a constant at `path`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places_in_config(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places_in_config(item, (*path, index))
    else:
        place = place_of(value, path)
        if place is not None:
            yield place


def places_in_space(space: ParamSpace) -> Iterator[Place]:
    """Every placeholder's place in a parsed space: its constants, and the
    values of its grids and the categories of its choices."""
    yield from places_in_config(space.skeleton)
    for parameter in (*space.grid, *space.sampled):
        domain = parameter.domain
        values = domain.values if isinstance(domain, GridSearch) else None
        if isinstance(domain, Choice):
            values = domain.categories
        for index, value in enumerate(values or ()):
            place = place_of(value, parameter.path)
            if place == (parameter.path, index):
                yield place
