"""`ray.tune.schedulers.async_hyperband`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.asha import ASHAScheduler

AsyncHyperBandScheduler = ASHAScheduler
"""Ray Tune's other name for ASHA."""

__all__ = ["ASHAScheduler", "AsyncHyperBandScheduler"]
