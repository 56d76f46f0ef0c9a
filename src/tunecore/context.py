"""`ray.tune.context`, the module of `TuneContext` and `get_context`;
`TrainContext` is `ray.train`'s name for the same object, which
`ray.train.get_context()` returns inside a Tune trial."""

from tunecore.shell.trainable import get_context
from tunecore.shell.trainable.worker import TuneContext

TrainContext = TuneContext

__all__ = ["TrainContext", "TuneContext", "get_context"]
