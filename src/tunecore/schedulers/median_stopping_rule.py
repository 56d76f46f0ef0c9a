"""`ray.tune.schedulers.median_stopping_rule`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.median import MedianStoppingRule

__all__ = ["MedianStoppingRule"]
