"""`ray.tune.stopper.timeout`'s names, for scripts that import them from there."""

from tunecore.core.stoppers import TimeoutStopper

__all__ = ["TimeoutStopper"]
