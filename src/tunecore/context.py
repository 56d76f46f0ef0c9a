"""`ray.tune.context`, the module of `TuneContext` and `get_context`."""

from tunecore.shell.trainable import get_context
from tunecore.shell.trainable.worker import TuneContext

__all__ = ["TuneContext", "get_context"]
