"""`ray.tune.logger.tensorboardx`'s callback, for scripts that import it from there."""

from tunecore.shell.callbacks import TensorBoardCallback as TBXLoggerCallback

__all__ = ["TBXLoggerCallback"]
