"""`ray.tune.stopper.experiment_plateau`'s names, for scripts that import them from there."""

from tunecore.core.stoppers import ExperimentPlateauStopper

__all__ = ["ExperimentPlateauStopper"]
