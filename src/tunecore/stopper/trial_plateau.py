"""`ray.tune.stopper.trial_plateau`'s names, for scripts that import them from there."""

from tunecore.core.stoppers import TrialPlateauStopper

__all__ = ["TrialPlateauStopper"]
