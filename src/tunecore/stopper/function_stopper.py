"""`ray.tune.stopper.function_stopper`'s names, for scripts that import them from there."""

from tunecore.shell.stoppers import FunctionStopper

__all__ = ["FunctionStopper"]
