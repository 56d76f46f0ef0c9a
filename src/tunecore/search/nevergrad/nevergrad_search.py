"""`ray.tune.search.nevergrad.nevergrad_search`, the module Ray's `NevergradSearch` is defined
in, for scripts that import it from there: the same class as
`tunecore.search.nevergrad.NevergradSearch`, with the names Ray's module re-exports."""

from tunecore.core.results import DEFAULT_METRIC
from tunecore.search.messages import (
    UNDEFINED_METRIC_MODE,
    UNDEFINED_SEARCH_SPACE,
    UNRESOLVED_SEARCH_SPACE,
)
from tunecore.search.nevergrad import NevergradSearch

__all__ = [
    "DEFAULT_METRIC",
    "UNDEFINED_METRIC_MODE",
    "UNDEFINED_SEARCH_SPACE",
    "UNRESOLVED_SEARCH_SPACE",
    "NevergradSearch",
]
