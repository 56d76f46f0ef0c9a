"""`ray.tune.schedulers.pbt`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.pbt import PopulationBasedTraining

__all__ = ["PopulationBasedTraining"]
