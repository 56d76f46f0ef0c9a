"""A param space's objects taken out before it is logged, and required
again by a restore.

`split_objects` walks the user's space (as `parse_space` will): a value
that is not JSON, as a constant, a grid value (`tune.grid_search` over
objects returns Ray's form, `{"grid_search": [...]}`) or a choice
category (`ObjectChoice`), is replaced by its placeholder
(`tunecore.core.search.placeholders`) and kept in a `ConfigObjects`,
which the executor hands to each trial. A restore's space is split the
same way; `require_objects` then checks, before any trial runs, that every
place the logged experiment holds an object at (its search space's and
its trials' configs) was given one again, as Ray's fault-tolerance guide
does with `Tuner.restore(path, trainable, param_space=...)`.
"""

from __future__ import annotations

from collections.abc import Mapping

from tunecore.core.experiment import ExperimentState
from tunecore.core.search import BasicVariantGenerator
from tunecore.core.search.base import unwrapped
from tunecore.core.search.domains import DOMAIN_TYPES, Choice
from tunecore.core.search.placeholders import (
    Place,
    placeholder,
    places_in_config,
    places_in_space,
)
from tunecore.core.search.variants import ParamSpace, format_path
from tunecore.core.search.view import Path
from tunecore.model.storable import MAX_DEPTH
from tunecore.search.object_values import ObjectChoice, is_loggable
from tunecore.search.sample import param_value
from tunecore.shell.trainable.config_objects import ConfigObjects, MissingObjectError


def split_objects(param_space: Mapping[str, object]) -> tuple[dict[str, object], ConfigObjects]:
    """The space with each object replaced by its placeholder, and the objects."""
    objects: dict[Place, object] = {}

    def kept(value: object, path: Path, index: int | None) -> object:
        if is_loggable(value):
            return value
        place = (path, index)
        objects[place] = value
        return placeholder(type(value).__name__, place)

    def walk(value: object, path: Path) -> object:
        if len(path) > MAX_DEPTH:
            return value  # too deep for the log: `check_storable` says so, naming it
        value = param_value(value)
        if isinstance(value, ObjectChoice):
            return Choice([kept(item, path, i) for i, item in enumerate(value.categories)])  # type: ignore[misc]
        if path and _is_grid_literal(value):
            assert isinstance(value, Mapping)
            values = value["grid_search"]
            return {"grid_search": [kept(item, path, i) for i, item in enumerate(values)]}
        if isinstance(value, DOMAIN_TYPES):
            return value
        if isinstance(value, Mapping):
            return {key: walk(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [walk(item, (*path, index)) for index, item in enumerate(value)]
        return kept(value, path, None)

    space = walk(param_space, ())
    assert isinstance(space, dict)  # a Mapping walks to a dict
    return space, ConfigObjects(objects)


def _is_grid_literal(value: object) -> bool:
    return (
        isinstance(value, Mapping)
        and len(value) == 1
        and isinstance(value.get("grid_search"), list | tuple)
    )


def require_objects(state: ExperimentState, objects: ConfigObjects) -> None:
    """Raise `MissingObjectError` naming the first place of the logged
    experiment that holds an object `objects` lacks."""
    needed: set[Place] = set()
    searcher = unwrapped(state.searcher)
    if isinstance(searcher, BasicVariantGenerator) and isinstance(searcher.param_space, ParamSpace):
        needed.update(places_in_space(searcher.param_space))
    for trial in state.trials.values():
        needed.update(places_in_config(trial.spec.config))
    missing = sorted(needed - objects.places, key=repr)
    if missing:
        path, index = missing[0]
        which = "" if index is None else f" (value {index} of its grid or choice)"
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise MissingObjectError(
            f"{format_path(path)}{which}{more} was an object, which the log cannot hold: pass "
            "it again, Tuner.restore(path, trainable=..., param_space={...}) with the objects "
            "at the same keys, as the experiment was given them"
        )
