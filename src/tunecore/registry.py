"""`ray.tune.registry`'s names, for scripts that import them from there
(`from ray.tune.registry import register_trainable, register_env`).

`register_env` keeps what RLlib scripts register, so they run up to their
tuning call: tunecore runs no RLlib algorithm (a string trainable such as
`"PPO"` is not one of tunecore's), so only `get_env_creator` reads it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tunecore.shell.trainable import register_trainable
from tunecore.shell.trainable import resolve_trainable as get_trainable_cls

EnvCreator = Callable[..., Any]

_envs: dict[str, EnvCreator] = {}
_lock = threading.Lock()


def register_env(name: str, env_creator: EnvCreator) -> None:
    """Register `env_creator` (a function of the env config returning an
    environment) as `name`, replacing what was registered there, as Ray's
    does. Something not callable is a `TypeError`, as in Ray."""
    if not name:
        raise TypeError(f"register_env(name={name!r}): the name must not be empty")
    if not callable(env_creator):
        raise TypeError(
            f"register_env({name!r}, env_creator={env_creator!r}): the creator must be callable"
        )
    with _lock:
        _envs[name] = env_creator


def get_env_creator(name: str) -> EnvCreator:
    """What `register_env` registered as `name`; an unknown name is a
    `ValueError` naming it and the registered ones."""
    with _lock:
        creator = _envs.get(name)
        known = sorted(_envs)
    if creator is None:
        raise ValueError(f"unknown environment {name!r} (registered: {known})")
    return creator


__all__ = ["get_env_creator", "get_trainable_cls", "register_env", "register_trainable"]
