"""`ray.tune.trainable`'s names, for scripts that import them from there
(and from its modules `ray.tune.trainable.trainable` and `.util`).

Ray's `FunctionTrainable` and `wrap_function` are not here: a function is
passed to the `Tuner` as it is, and never wrapped into a class."""

from tunecore._not_provided import not_provided_getattr
from tunecore.shell.trainable import Trainable
from tunecore.shell.trainable.wrappers import with_parameters

__all__ = ["Trainable", "with_parameters"]

__getattr__ = not_provided_getattr(__name__)
