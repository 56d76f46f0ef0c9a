"""`ray.tune.trainable.util`, the module Ray's `with_parameters` and
`with_resources` are defined in, for scripts that import them from there."""

from tunecore.shell.trainable.wrappers import with_parameters, with_resources

__all__ = ["with_parameters", "with_resources"]
