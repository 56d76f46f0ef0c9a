"""`ray.tune.search.hyperopt.hyperopt_search`, the module Ray's `HyperOptSearch` is defined
in, for scripts that import it from there: the same class as
`tunecore.search.hyperopt.HyperOptSearch`, with the names Ray's module re-exports."""

from tunecore.core.results import DEFAULT_METRIC
from tunecore.search.hyperopt import HyperOptSearch
from tunecore.search.messages import (
    UNDEFINED_METRIC_MODE,
    UNDEFINED_SEARCH_SPACE,
    UNRESOLVED_SEARCH_SPACE,
)

__all__ = [
    "DEFAULT_METRIC",
    "UNDEFINED_METRIC_MODE",
    "UNDEFINED_SEARCH_SPACE",
    "UNRESOLVED_SEARCH_SPACE",
    "HyperOptSearch",
]
