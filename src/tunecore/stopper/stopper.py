"""`ray.tune.stopper.stopper`'s names, for scripts that import them from there."""

from tunecore.shell.stoppers import CombinedStopper, Stopper

__all__ = ["CombinedStopper", "Stopper"]
