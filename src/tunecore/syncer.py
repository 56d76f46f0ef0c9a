"""`ray.tune.syncer`, the module of `SyncConfig`."""

from tunecore.api.config import SyncConfig

__all__ = ["SyncConfig"]
