"""`ray.tune.schedulers.pb2`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.pb2 import PB2

__all__ = ["PB2"]
