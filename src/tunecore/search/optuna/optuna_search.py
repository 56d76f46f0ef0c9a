"""`ray.tune.search.optuna.optuna_search`, the module Ray's `OptunaSearch` is defined
in, for scripts that import it from there: the same class as
`tunecore.search.optuna.OptunaSearch`, with the names Ray's module re-exports."""

from tunecore.core.results import DEFAULT_METRIC
from tunecore.search.messages import (
    UNDEFINED_METRIC_MODE,
    UNDEFINED_SEARCH_SPACE,
    UNRESOLVED_SEARCH_SPACE,
)
from tunecore.search.optuna import OptunaSearch

__all__ = [
    "DEFAULT_METRIC",
    "UNDEFINED_METRIC_MODE",
    "UNDEFINED_SEARCH_SPACE",
    "UNRESOLVED_SEARCH_SPACE",
    "OptunaSearch",
]
