"""`ray.tune.schedulers.hb_bohb`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.hb_bohb import HyperBandForBOHB

__all__ = ["HyperBandForBOHB"]
