"""`ray.tune.logger.json`'s callback, for scripts that import it from there."""

from tunecore.shell.callbacks import JsonLoggerCallback

__all__ = ["JsonLoggerCallback"]
