"""`ray.tune.search.hebo.hebo_search`, the module Ray's `HEBOSearch` is defined
in, for scripts that import it from there: the same class as
`tunecore.search.hebo.HEBOSearch`, with the names Ray's module re-exports."""

from tunecore.core.results import DEFAULT_METRIC
from tunecore.search.hebo import HEBOSearch
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
    "HEBOSearch",
]
