"""`ray.tune.experiment.experiment`, where Ray keeps `Experiment`."""

from tunecore.api.experiment import Experiment

__all__ = ["Experiment"]
