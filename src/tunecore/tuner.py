"""`ray.tune.tuner`, the module of `Tuner` (`from ray.tune.tuner import
Tuner`, as Ray's trainable guide writes)."""

from tunecore.api.tuner import Tuner

__all__ = ["Tuner"]
