"""The values of a reported result that JSON cannot hold, carried as the
objects the trainable reported from the worker to the driver.

Everything tunecore records of a result is its JSON form (`json_result`:
an `argparse.Namespace` becomes its `str()`, a NumPy array a list, a tuple
a list). Ray Tune keeps a result in the driver's memory as the Python
objects the trainable reported, so while the driver lives
`result.metrics["args"].lr` works there; only its files hold the text.
For that, a result with such values travels as a `ReportedResult`: the
JSON form as a dict (which is all anything but the driver's views reads),
and the reported objects of its top-level keys whose value JSON could not
hold as it was (`objects`). A result whose values are all plain JSON (the
common case) stays a plain dict and costs nothing more.

The objects cross to the driver as a pickle of their own, made when the
result is pickled (`__reduce__`): an object that cannot be pickled (a
lock, a generator) is left out there, and the driver shows its JSON form,
as before; the result is never refused for it. Nothing here is persisted:
the driver strips the objects before the result is logged
(`shell.reported_objects`).
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping

import cloudpickle

from tunecore.model import JsonDict

logger = logging.getLogger(__name__)

JSON_SCALARS = frozenset({bool, int, float, str, type(None)})
"""The types of JSON's scalars as a result holds them (not their subclasses)."""


class ReportedResult(dict):  # type: ignore[type-arg] # a JsonDict, as results are
    """A result's JSON form (the dict) and the objects it was made from
    (`objects`, by top-level key). See the module docstring."""

    __slots__ = ("objects",)

    def __init__(self, plain: JsonDict, objects: dict[str, object]) -> None:
        super().__init__(plain)
        self.objects = objects

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuilt, (dict(self), _pickled(self.objects)))


def with_objects(plain: JsonDict, reported: Mapping[str, object]) -> JsonDict:
    """`plain` (the JSON form of `reported`, key for key) as it leaves the
    worker: a `ReportedResult` when some value of `reported` is no plain
    JSON, else `plain` itself (`json_result` calls it only when some value
    is no JSON scalar)."""
    objects = {
        key: value for key, value in reported.items() if str(key) in plain and not _is_json(value)
    }
    if not objects:
        return plain
    return ReportedResult(plain, {str(key): value for key, value in objects.items()})


def without(result: JsonDict, keys: Mapping[str, object]) -> None:
    """Forget the objects of `keys` (values tunecore sets, replacing the
    user's): their JSON form is the value now."""
    if isinstance(result, ReportedResult):
        for key in keys:
            result.objects.pop(key, None)


def _is_json(value: object) -> bool:
    """Whether `value` is plain JSON as it is: JSON's own types all the way
    down (not their subclasses, not tuples), with string keys."""
    kind = type(value)
    if kind in JSON_SCALARS:
        return True
    if kind is list:
        return all(_is_json(item) for item in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(
            type(key) is str and _is_json(item)
            for key, item in value.items()  # type: ignore[attr-defined]
        )
    return False


def _pickled(objects: dict[str, object]) -> bytes | None:
    """`objects` as one pickle (cloudpickle where plain pickle cannot: a
    class defined in the user's script), or None if neither can."""
    try:
        return pickle.dumps(objects, protocol=5)
    except Exception:
        pass
    try:
        return cloudpickle.dumps(objects, protocol=5)
    except Exception as error:
        logger.debug("The reported objects %s cannot be pickled: %s", list(objects), error)
        return None


def _rebuilt(plain: JsonDict, pickled: bytes | None) -> JsonDict:
    """The result on the driver: with its objects when they arrived whole
    and unpickle here (a class the driver cannot import does not), else
    the plain JSON form."""
    if pickled is None:
        return plain
    try:
        objects = pickle.loads(pickled)
    except Exception as error:
        logger.debug("The reported objects of a result cannot be unpickled: %s", error)
        return plain
    return ReportedResult(plain, objects)
