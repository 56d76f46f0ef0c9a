"""`ray.tune.stopper.maximum_iteration`'s names, for scripts that import them from there."""

from tunecore.core.stoppers import MaximumIterationStopper

__all__ = ["MaximumIterationStopper"]
