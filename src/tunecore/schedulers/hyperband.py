"""`ray.tune.schedulers.hyperband`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.hyperband import HyperBandScheduler

__all__ = ["HyperBandScheduler"]
