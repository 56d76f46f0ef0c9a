"""`ray.tune.registry`'s names, for scripts that import them from there
(`from ray.tune.registry import register_trainable`).

`register_env` and Ray's other RLlib registries are not here: tunecore
runs no RLlib algorithms, so nothing would read what they register."""

from tunecore.shell.trainable import register_trainable
from tunecore.shell.trainable import resolve_trainable as get_trainable_cls

__all__ = ["get_trainable_cls", "register_trainable"]
