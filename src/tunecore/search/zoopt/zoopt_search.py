"""`ray.tune.search.zoopt.zoopt_search`, the module Ray's `ZOOptSearch` is defined
in, for scripts that import it from there: the same class as
`tunecore.search.zoopt.ZOOptSearch`, with the names Ray's module re-exports."""

from tunecore.core.results import DEFAULT_METRIC
from tunecore.search.messages import (
    UNDEFINED_METRIC_MODE,
    UNDEFINED_SEARCH_SPACE,
    UNRESOLVED_SEARCH_SPACE,
)
from tunecore.search.zoopt import ZOOptSearch

__all__ = [
    "DEFAULT_METRIC",
    "UNDEFINED_METRIC_MODE",
    "UNDEFINED_SEARCH_SPACE",
    "UNRESOLVED_SEARCH_SPACE",
    "ZOOptSearch",
]
