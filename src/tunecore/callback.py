"""`ray.tune.callback`'s name, for scripts that import it from there."""

from tunecore.shell.callbacks import Callback

__all__ = ["Callback"]
