"""`ray.tune.trainable.trainable`, the module Ray's `Trainable` is defined
in, for scripts that import it from there."""

from tunecore.shell.trainable import Trainable

__all__ = ["Trainable"]
