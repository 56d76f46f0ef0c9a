"""`ray.tune.experiment.trial`, the module Ray's guides import `Trial`
from (`from ray.tune.experiment.trial import Trial`)."""

from tunecore.shell.trial_view import Trial

__all__ = ["Trial"]
