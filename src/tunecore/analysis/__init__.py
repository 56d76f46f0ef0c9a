"""`ray.tune.analysis`'s name, for scripts that import it from there."""

from tunecore.api.analysis import ExperimentAnalysis

__all__ = ["ExperimentAnalysis"]
