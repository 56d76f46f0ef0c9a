"""`ray.tune.logger.logger`: the callback base for loggers, and
`pretty_print`, for scripts that import them from there."""

from tunecore.api.pretty import pretty_print
from tunecore.shell.callbacks import LoggerCallback

__all__ = ["LoggerCallback", "pretty_print"]
