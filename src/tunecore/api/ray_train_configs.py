"""tunecore's config objects handed to Ray Train's trainers.

After a script's imports are rewritten, `ray.train.ScalingConfig`,
`RunConfig`, `FailureConfig`, `CheckpointConfig` and `Checkpoint` are
tunecore's, which Ray Train's trainers refuse ("Invalid `RunConfig`
type"). The trainers tunecore passes through (`tunecore.torch.TorchTrainer`
and the rest, see tunecore._ray_train_modules) are subclasses of Ray's
that convert every such argument with `to_ray_train` first.

A config converts to Ray Train's class of the same name (the one
`ray.train` exports: V2's unless `RAY_TRAIN_V2_ENABLED=0`) with exactly the
fields the user set, nested configs converted too, so Ray Train applies its
own defaults and its own checks (V2 refusing `RunConfig(verbose=...)` as
it does on Ray). tunecore's defaults never leak in: its
`CheckpointConfig.checkpoint_score_attribute` default is not Ray Train's.
A field only tunecore has cannot be converted: `NotConvertibleError`
names it. Ray Train V2's own fields (`RunConfig.worker_runtime_env`,
`logging_config`, `FailureConfig.max_preemption_failures`, ...,
`ScalingConfig.label_selector`, `use_tpu`, elastic `num_workers=(2, 4)`,
...) are fields of tunecore's configs too, which only the conversion reads
(tunecore's Tuner refuses them); under Ray Train V1
(`RAY_TRAIN_V2_ENABLED=0`), which lacks them, one is a
`NotConvertibleError` as well.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from tunecore.api.config import CheckpointConfig, FailureConfig, RunConfig, SyncConfig
from tunecore.shell.trainable.checkpoint import Checkpoint
from tunecore.shell.trainable.scaling_config import ScalingConfig

_RAY_NAMES: dict[type, str] = {
    ScalingConfig: "ScalingConfig",
    RunConfig: "RunConfig",
    FailureConfig: "FailureConfig",
    CheckpointConfig: "CheckpointConfig",
    SyncConfig: "SyncConfig",
}
"""tunecore's config classes, by the name of Ray Train's counterpart."""

_TUNECORE_ONLY = {
    "address": "the Ray address tunecore's driver joins",
    "executor": "tunecore's choice of trial executor",
    "fsync_interval_ms": "how often tunecore syncs its event log",
    "export_formats": "tunecore's model export after a trial",
}
"""RunConfig fields Ray Train has no counterpart for, and what they are."""


class NotConvertibleError(ValueError):
    """A tunecore config field that Ray Train's config has no counterpart for."""


def set_fields(config: BaseModel | ScalingConfig) -> dict[str, Any]:
    """The fields of a tunecore config that the user set: a pydantic
    config's given fields, a `ScalingConfig`'s fields that differ from their
    default (a frozen dataclass does not record which were given)."""
    if isinstance(config, BaseModel):
        return {name: getattr(config, name) for name in sorted(config.model_fields_set)}
    return {
        field.name: getattr(config, field.name)
        for field in dataclasses.fields(config)
        if getattr(config, field.name) != field.default
    }


def to_ray_train(value: object, train: ModuleType) -> object:
    """`value` as Ray Train takes it: a tunecore config as Ray Train's
    config of the same name in `train` (the `ray.train` module) with the
    fields the user set, a tunecore `Checkpoint` as Ray Train's of the same
    directory; anything else as it is."""
    if isinstance(value, Checkpoint):
        return train.Checkpoint(value.path, value.filesystem)
    name = _RAY_NAMES.get(type(value))
    if name is None:
        return value
    assert isinstance(value, BaseModel | ScalingConfig)  # the classes _RAY_NAMES holds
    fields = set_fields(value)
    unconvertible = sorted(fields.keys() & _TUNECORE_ONLY)
    if unconvertible:
        given = ", ".join(f"{field}={fields[field]!r}" for field in unconvertible)
        what = "; ".join(f"{field} is {_TUNECORE_ONLY[field]}" for field in unconvertible)
        raise NotConvertibleError(
            f"{name}({given}) cannot be handed to Ray Train, whose ray.train.{name} has no "
            f"such field ({what}); leave it out of the config given to the trainer"
        )
    ray_class = getattr(train, name)
    lacking = _not_taken(ray_class, fields)
    if lacking:
        given = ", ".join(f"{field}={fields[field]!r}" for field in lacking)
        raise NotConvertibleError(
            f"{name}({given}) is Ray Train V2's, and this process runs Ray Train V1 "
            f"(RAY_TRAIN_V2_ENABLED=0), whose ray.train.{name} has no such field; unset "
            "RAY_TRAIN_V2_ENABLED, or leave it out"
        )
    converted = {field: to_ray_train(given, train) for field, given in fields.items()}
    made: object = ray_class(**converted)
    return made


def _not_taken(ray_class: Callable[..., object], fields: dict[str, Any]) -> list[str]:
    """The fields Ray's config class has no keyword argument for."""
    parameters = inspect.signature(ray_class).parameters.values()
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return []
    return sorted(fields.keys() - {parameter.name for parameter in parameters})


def accepting_tunecore_configs(trainer: type, module: str, name: str) -> type:
    """A subclass of Ray Train's `trainer` class whose constructor converts
    its tunecore config arguments (`to_ray_train`), published as
    `module.name` (where pickling by reference finds it again). Its
    signature is Ray's, which Ray Train's V1 trainers read to record their
    arguments."""
    ray_init: Callable[..., None] = trainer.__init__  # type: ignore[misc]

    @functools.wraps(ray_init)
    def __init__(self: object, *args: object, **kwargs: object) -> None:
        import ray.train  # noqa: PLC0415 - loaded already: `trainer` is Ray Train's

        ray_init(
            self,
            *(to_ray_train(arg, ray.train) for arg in args),
            **{key: to_ray_train(arg, ray.train) for key, arg in kwargs.items()},
        )

    namespace = {"__init__": __init__, "__module__": module, "__qualname__": name}
    return type(name, (trainer,), {**namespace, "__doc__": trainer.__doc__})
