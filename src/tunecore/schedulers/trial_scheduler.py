"""`ray.tune.schedulers.trial_scheduler`'s names, for scripts that import them from there."""

from tunecore.schedulers import FIFOScheduler, TrialScheduler

__all__ = ["FIFOScheduler", "TrialScheduler"]
