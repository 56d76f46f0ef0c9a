"""Ray's `points_to_evaluate`: a config to try first, laid over the space.

A point is a dict of values by name, nested like the param space. Each of
its leaves (a value that is not a dict: a number, a string, a list...)
replaces what the space has at that path: a constant, a domain, or a whole
sub-tree of domains. What the point does not set stays as the space has it,
so a partial point is completed from the space (its grids walked, its
random values drawn), as Ray's BasicVariantGenerator does.

Invariants
- The result is an ordinary `ParamSpace`: the point's values are constants
  in its skeleton, and no parameter remains at or below a path the point
  sets.
- A point cannot set a value inside a domain (`{"opt": {"lr": 1}}` when
  `opt` is a `choice`): that is an error naming the point and the path.
- The point's values come back by path, for the experiment tag.
"""

from __future__ import annotations

import msgspec

from tunecore.core.search.domains import copy_json
from tunecore.core.search.variants import Parameter, ParamSpace
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue


def apply_point(
    space: ParamSpace, point: JsonDict, where: str
) -> tuple[ParamSpace, tuple[tuple[Path, JsonValue], ...]]:
    """`space` with `point`'s values in place, and those values by path."""
    leaves = list(_leaves(point, ()))
    skeleton = copy_json(space.skeleton)
    assert isinstance(skeleton, dict)
    for path, value in leaves:
        _put(skeleton, path, copy_json(value), where)

    def kept(parameter: Parameter) -> bool:
        for path, _ in leaves:
            if parameter.path[: len(path)] == path:
                return False  # the point sets it, or a dict above it
            if path[: len(parameter.path)] == parameter.path:
                shown = "".join(f"[{part!r}]" for part in path)
                raise InvalidFieldError(
                    f"{where}{shown}", point, "a value outside every search domain of the space"
                )
        return True

    applied = msgspec.structs.replace(
        space,
        skeleton=skeleton,
        grid=tuple(p for p in space.grid if kept(p)),
        sampled=tuple(p for p in space.sampled if kept(p)),
        derived=tuple(p for p in space.derived if kept(p)),
    )
    return applied, tuple(leaves)


def _leaves(value: JsonDict, path: Path) -> list[tuple[Path, JsonValue]]:
    found: list[tuple[Path, JsonValue]] = []
    for key, item in value.items():
        if isinstance(item, dict) and item:
            found.extend(_leaves(item, (*path, key)))
        else:
            found.append(((*path, key), item))
    return found


def _put(skeleton: JsonDict, path: Path, value: JsonValue, where: str) -> None:
    """Set `path` in the skeleton, making the dicts on the way (a None on
    the way, a domain's place, is replaced: `kept` reports a domain)."""
    container: JsonDict = skeleton
    for index, part in enumerate(path[:-1]):
        assert isinstance(part, str)
        child = container.get(part)
        if child is None:
            child = container[part] = {}
        if not isinstance(child, dict):
            shown = "".join(f"[{p!r}]" for p in path[: index + 1])
            raise InvalidFieldError(f"{where}{shown}", child, "a dict in the space to set keys in")
        container = child
    last = path[-1]
    assert isinstance(last, str)
    container[last] = value
