"""`ray.tune.schedulers.pbt`'s names, for scripts that import them from there."""

from tunecore._not_provided import not_provided_getattr
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.schedulers.pbt_replay import PopulationBasedTrainingReplay

__all__ = ["PopulationBasedTraining", "PopulationBasedTrainingReplay"]

__getattr__ = not_provided_getattr(__name__)
