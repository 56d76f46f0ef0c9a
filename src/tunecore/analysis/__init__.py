"""`ray.tune.analysis`'s name, for scripts that import it from there (or
reach its module as `tune.analysis.experiment_analysis.ExperimentAnalysis`,
as Ray's package imports it)."""

from tunecore._not_provided import not_provided_getattr
from tunecore.analysis import experiment_analysis as experiment_analysis
from tunecore.api.analysis import ExperimentAnalysis

__all__ = ["ExperimentAnalysis", "experiment_analysis"]

__getattr__ = not_provided_getattr(__name__)
