"""`ray.tune.stopper.noop`'s names, for scripts that import them from there."""

from tunecore.core.stoppers import NoopStopper

__all__ = ["NoopStopper"]
