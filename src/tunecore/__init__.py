"""tunecore: a typed trial-execution engine for hyperparameter tuning.

The search-space functions are here under the names Ray Tune users know;
schedulers are in `tunecore.schedulers`, searchers in `tunecore.search`.
The pure core (`tunecore.core`) and its data (`tunecore.model`) can be used
on their own: they need no Ray and no clock.
"""

from tunecore.core.search.domains import (
    choice,
    grid_search,
    loguniform,
    qloguniform,
    qrandint,
    quniform,
    randint,
    randn,
    sample_from,
    uniform,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "choice",
    "grid_search",
    "loguniform",
    "qloguniform",
    "qrandint",
    "quniform",
    "randint",
    "randn",
    "sample_from",
    "uniform",
]
