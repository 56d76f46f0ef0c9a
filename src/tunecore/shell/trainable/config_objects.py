"""The param space's objects, handed to each trial in place of their
placeholders (`tunecore.core.search.placeholders`).

The driver holds them by place; with Ray, `publish` puts each once in
Ray's object store (as `with_parameters` objects are), and what is pickled
to a worker is the refs, never the objects; the worker fetches an object
when a trial's config names its place, so each trial gets its own copy, as
each Ray Tune trial deserialises its own config. In-process, trials share
the driver's objects. Nothing here is persisted: a restore is given the
objects again (`Tuner.restore(param_space=...)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tunecore.core.search.placeholders import Place, path_text, place_of, places_in_config
from tunecore.core.search.view import Path
from tunecore.model import JsonDict, JsonValue


class MissingObjectError(ValueError):
    """A config names an object of the param space that was not given."""


class ConfigObjects:
    """The objects by place, in the driver and in each worker."""

    def __init__(self, objects: Mapping[Place, object] | None = None) -> None:
        self._values: dict[Place, object] | None = dict(objects or {})
        self._refs: dict[Place, Any] | None = None
        self._places = frozenset(self._values)
        self._session: str | None = None  # the Ray session the refs belong to

    @property
    def places(self) -> frozenset[Place]:
        return self._places

    def publish(self) -> None:
        """Put the objects in Ray's object store (Ray must be running), once
        per Ray session. Each goes in a 1-tuple: Ray refuses to `put` a ref
        itself, and a `ray.put` ref is the commonest object here."""
        if self._values is None or not self._values:
            return
        import ray  # noqa: PLC0415 - only the Ray executor publishes

        context = ray.get_runtime_context()
        session = f"{context.get_node_id()}/{context.get_job_id()}"
        if self._refs is None or session != self._session:
            self._refs = {place: ray.put((value,)) for place, value in self._values.items()}
            self._session = session

    def named_in(self, config: JsonDict) -> bool:
        """Whether `config` names any object (holds a placeholder)."""
        return bool(self._places) and next(places_in_config(config), None) is not None

    def resolve(self, config: JsonDict) -> dict[str, Any]:
        """A copy of `config` with each placeholder replaced by its object
        (the JSON around them copied, the objects not). Without objects no
        string is taken for a placeholder."""
        resolved = self._resolved(config, ())
        assert isinstance(resolved, dict)
        return resolved

    def _resolved(self, value: JsonValue, path: Path) -> object:
        if isinstance(value, dict):
            return {key: self._resolved(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [self._resolved(item, (*path, index)) for index, item in enumerate(value)]
        place = place_of(value, path) if self._places else None
        if place is None:
            return value
        if place not in self._places:
            raise MissingObjectError(
                f"the config's {path_text(path)!r} is {value!r}, an object of the param "
                "space that was not given (Tuner.restore needs it again: "
                "param_space=... with the same keys)"
            )
        return self._object(place)

    def _object(self, place: Place) -> object:
        if self._values is not None:
            return self._values[place]
        import ray  # noqa: PLC0415 - a worker that received refs has Ray

        assert self._refs is not None
        (value,) = ray.get(self._refs[place])
        return value

    def __getstate__(self) -> dict[str, Any]:
        if self._refs is not None:
            return {"places": self._places, "refs": self._refs}
        return {"places": self._places, "values": self._values}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._places = state["places"]
        self._refs = state.get("refs")
        self._values = state.get("values")
        self._session = None
