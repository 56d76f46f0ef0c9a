"""`ray.tune.analysis.experiment_analysis`, the module Ray's
`ExperimentAnalysis` is defined in, for scripts that import it from there."""

from tunecore.api.analysis import ExperimentAnalysis
from tunecore.result import (
    CONFIG_PREFIX,
    DEFAULT_METRIC,
    EXPR_PROGRESS_FILE,
    EXPR_RESULT_FILE,
    TRAINING_ITERATION,
)

__all__ = [
    "CONFIG_PREFIX",
    "DEFAULT_METRIC",
    "EXPR_PROGRESS_FILE",
    "EXPR_RESULT_FILE",
    "TRAINING_ITERATION",
    "ExperimentAnalysis",
]
