"""`ray.tune.search.bayesopt.bayesopt_search`, the module Ray's `BayesOptSearch` is defined
in, for scripts that import it from there: the same class as
`tunecore.search.bayesopt.BayesOptSearch`, with the names Ray's module re-exports."""

from tunecore.core.results import DEFAULT_METRIC
from tunecore.search.bayesopt import BayesOptSearch
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
    "BayesOptSearch",
]
