"""`ray.tune.registry`'s names, for scripts that import them from there
(`from ray.tune.registry import register_trainable, register_env`).

`register_env` and `register_input` keep what RLlib scripts register, so
they run up to their tuning call: tunecore runs no RLlib algorithm (a
string trainable such as `"PPO"` is not one of tunecore's), so only
`get_env_creator` and `registry_get_input` read them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tunecore.shell.trainable import register_trainable, resolve_trainable
from tunecore.shell.trainable.registry import TrainableTarget

EnvCreator = Callable[..., Any]
InputCreator = Callable[..., Any]

_envs: dict[str, EnvCreator] = {}
_inputs: dict[str, InputCreator] = {}
_lock = threading.Lock()


def get_trainable_cls(trainable_name: str) -> TrainableTarget:
    """The trainable registered as `trainable_name` (or imported from an
    import path `"package.module:function"`), under Ray's argument name."""
    return resolve_trainable(trainable_name)


def _register(call: str, table: dict[str, Callable[..., Any]], name: str, creator: object) -> None:
    """Keep `creator` as `name` in `table`, replacing what was there, as
    Ray's registry does; an empty name or a creator that cannot be called
    is a `TypeError` naming the call (`call`) and the value, as in Ray."""
    if not name:
        raise TypeError(f"{call}(name={name!r}): the name must not be empty")
    if not callable(creator):
        raise TypeError(f"{call}({name!r}, {creator!r}): the creator must be callable")
    with _lock:
        table[name] = creator


def _registered(kind: str, table: dict[str, Callable[..., Any]], name: str) -> Callable[..., Any]:
    with _lock:
        creator = table.get(name)
        known = sorted(table)
    if creator is None:
        raise ValueError(f"unknown {kind} {name!r} (registered: {known})")
    return creator


def register_env(name: str, env_creator: EnvCreator) -> None:
    """Register `env_creator` (a function of the env config returning an
    environment) as `name`."""
    _register("register_env", _envs, name, env_creator)


def get_env_creator(name: str) -> EnvCreator:
    """What `register_env` registered as `name`; an unknown name is a
    `ValueError` naming it and the registered ones."""
    return _registered("environment", _envs, name)


def register_input(name: str, input_creator: InputCreator) -> None:
    """Register `input_creator` (RLlib's custom input reader factory) as `name`."""
    _register("register_input", _inputs, name, input_creator)


def registry_contains_input(name: str) -> bool:
    """Whether `register_input` registered `name`."""
    with _lock:
        return name in _inputs


def registry_get_input(name: str) -> InputCreator:
    """What `register_input` registered as `name`; an unknown name is a
    `ValueError` naming it and the registered ones."""
    return _registered("input", _inputs, name)


__all__ = [
    "get_env_creator",
    "get_trainable_cls",
    "register_env",
    "register_input",
    "register_trainable",
    "registry_contains_input",
    "registry_get_input",
]
