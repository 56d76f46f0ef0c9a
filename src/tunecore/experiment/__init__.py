"""`ray.tune.experiment`'s names, for scripts that import them from there
(`from ray.tune.experiment import Trial` in a callback, `Experiment` for
`run_experiments`), and its submodules `trial` and `experiment`."""

from tunecore.experiment.experiment import Experiment
from tunecore.experiment.trial import Trial

__all__ = ["Experiment", "Trial"]
