"""`ray.tune.syncer`, the module of `SyncConfig`; its `Syncer` classes,
which Ray 2.60 no longer has either, are refused saying what replaced them."""

from tunecore._not_provided import not_provided_getattr
from tunecore.api.config import SyncConfig

__all__ = ["SyncConfig"]

__getattr__ = not_provided_getattr(__name__)
