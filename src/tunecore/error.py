"""`ray.tune.error`, the module of `TuneError`."""

from tunecore._not_provided import not_provided_getattr
from tunecore.api.errors import TuneError

__all__ = ["TuneError"]

__getattr__ = not_provided_getattr(__name__)
