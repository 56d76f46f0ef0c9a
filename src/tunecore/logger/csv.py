"""`ray.tune.logger.csv`'s callback, for scripts that import it from there."""

from tunecore.shell.callbacks import CSVLoggerCallback

__all__ = ["CSVLoggerCallback"]
