"""Searchers, and the search-space functions, under the names Ray Tune users know.

`Searcher` is Ray Tune's imperative base class (`tunecore.search.searcher`);
the integrations live in `tunecore.search.optuna`, `.bayesopt`, `.hyperopt`,
`.bohb`, `.nevergrad`, `.zoopt`, `.hebo` and `.ax`, each behind its
optional extra.
"""

from tunecore._not_provided import not_provided_getattr
from tunecore.core.search import (
    BasicVariantGenerator,
    Suggestion,
    lograndint,
    loguniform,
    qlograndint,
    qloguniform,
    qrandint,
    qrandn,
    quniform,
    randint,
    randn,
    sample_from,
    uniform,
)
from tunecore.search.concurrency_limiter import ConcurrencyLimiter
from tunecore.search.create import create_searcher
from tunecore.search.messages import (
    UNDEFINED_METRIC_MODE,
    UNDEFINED_SEARCH_SPACE,
    UNRESOLVED_SEARCH_SPACE,
)
from tunecore.search.object_values import choice, grid_search
from tunecore.search.registry import SEARCHERS
from tunecore.search.repeater import Repeater
from tunecore.search.searcher import Searcher

SEARCH_ALG_IMPORT = {name: entry.resolve for name, entry in SEARCHERS.ray_names().items()}
"""Ray Tune's table behind `create_searcher`: each of Ray's names to a
function that imports its searcher class and returns it. Libraries built on
Ray Tune register every searcher through it (siatune's `build_searcher`:
`for func in SEARCH_ALG_IMPORT.values(): register(func())`); a searcher's
optimizer package is needed only to build one, as on Ray."""

__all__ = [
    "SEARCH_ALG_IMPORT",
    "UNDEFINED_METRIC_MODE",
    "UNDEFINED_SEARCH_SPACE",
    "UNRESOLVED_SEARCH_SPACE",
    "BasicVariantGenerator",
    "ConcurrencyLimiter",
    "Repeater",
    "Searcher",
    "Suggestion",
    "choice",
    "create_searcher",
    "grid_search",
    "lograndint",
    "loguniform",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "sample_from",
    "uniform",
]

__getattr__ = not_provided_getattr(__name__)
