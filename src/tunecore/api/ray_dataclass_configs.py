"""Ray's own config objects handed to tunecore's, read as tunecore's.

A module that still imports `from ray import tune` or `ray.train` (a
helper of the user's, a library built on Ray Tune) builds Ray's
`RunConfig`, `TuneConfig`, `CheckpointConfig`, `FailureConfig` or
`SyncConfig`, and a rewritten script hands it to tunecore's
`RunConfig(checkpoint_config=...)` or `Tuner(run_config=...)`. Each is
read as tunecore's config of the same name with exactly the fields set on
it: those that differ from a default instance of Ray's class. So Ray's
defaults, which are not always tunecore's (its `checkpoint_score_attribute`
of None, the "DEPRECATED" markers of its removed fields, its resolved
`storage_path`), never replace tunecore's; a config nested in one is read
the same way by the field that takes it. A field set that tunecore's
config has no counterpart for is an error naming it and its value.

Ray's configs are dataclasses; their class is found by name in the MRO
(tunecore never imports `ray.tune` for this), and read through
`dataclasses.fields` and their public attributes: a field whose name starts
with `_` is Ray's private one, never read.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from pydantic import BaseModel

from tunecore.model import InvalidFieldError
from tunecore.model.foreign_class import foreign_base

Config = TypeVar("Config", bound=BaseModel)


def _is_ray_config_of(value: object, config: type[BaseModel]) -> bool:
    """Whether `value` is an instance of Ray's dataclass named as `config`."""
    return (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and foreign_base(type(value), "ray", (config.__name__,)) is not None
    )


def _fields_set(value: Any) -> dict[str, object]:
    """The public fields of Ray's dataclass `value` that differ from those
    of a default instance of its class."""
    default = type(value)()
    public = (field.name for field in dataclasses.fields(value) if not field.name.startswith("_"))
    return {
        name: getattr(value, name)
        for name in public
        if getattr(value, name) != getattr(default, name)
    }


def from_ray_config(value: object, config: type[Config]) -> Config | object:
    """`value` as tunecore's `config` when it is Ray's config of the same
    name (only its fields set), else `value` unchanged."""
    if not _is_ray_config_of(value, config):
        return value
    given = _fields_set(value)
    for name, field_value in given.items():
        if name not in config.model_fields:
            raise InvalidFieldError(
                f"{type(value).__name__}.{name}",
                field_value,
                f"it unset: tunecore's {config.__name__} has no field {name} to take it",
            )
    return config(**given)
