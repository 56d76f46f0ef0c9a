"""`ray.tune.search.bohb.bohb_search`, the module Ray's `TuneBOHB` is defined
in, for scripts that import it from there: the same class as
`tunecore.search.bohb.TuneBOHB`, with the names Ray's module re-exports."""

from tunecore.core.results import DEFAULT_METRIC
from tunecore.search.bohb import TuneBOHB
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
    "TuneBOHB",
]
