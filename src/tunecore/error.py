"""`ray.tune.error`, the module of `TuneError`."""

from tunecore.api.errors import TuneError

__all__ = ["TuneError"]
