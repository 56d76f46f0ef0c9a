"""`ray.tune.schedulers.pbt`'s names, for scripts that import them from there."""

from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.schedulers.pbt_replay import PopulationBasedTrainingReplay

__all__ = ["PopulationBasedTraining", "PopulationBasedTrainingReplay"]
