"""`ray.tune.schedulers.trial_scheduler`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler

__all__ = ["FIFOScheduler", "TrialScheduler"]
