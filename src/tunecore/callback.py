"""`ray.tune.callback`'s names, for scripts that import them from there."""

from tunecore.api.callback_list import CallbackList
from tunecore.shell.callbacks import Callback

__all__ = ["Callback", "CallbackList"]
