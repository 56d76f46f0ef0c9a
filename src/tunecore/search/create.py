"""Ray Tune's `create_searcher`: a searcher chosen by name, as from a
command-line option."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

SEARCHERS = {
    "variant_generator": "tunecore.core.search:BasicVariantGenerator",
    "random": "tunecore.core.search:BasicVariantGenerator",
    "optuna": "tunecore.search.optuna:OptunaSearch",
    "hyperopt": "tunecore.search.hyperopt:HyperOptSearch",
    "bayesopt": "tunecore.search.bayesopt:BayesOptSearch",
    "bohb": "tunecore.search.bohb:TuneBOHB",
}
"""Each name by import path: a searcher's package is imported only when chosen."""


def create_searcher(search_alg: str, **kwargs: Any) -> Any:
    """The searcher named `search_alg` (any case), built with those of
    `kwargs` its class takes; the rest are dropped, as in Ray Tune. An
    unknown name is a `ValueError` listing the known ones; a missing
    package is an `ImportError` naming the extra to install."""
    target = SEARCHERS.get(search_alg.lower())
    if target is None:
        raise ValueError(
            f"create_searcher: search_alg={search_alg!r} is not one of {sorted(SEARCHERS)} "
            "(Ray Tune's ax, nevergrad, zoopt and hebo are not built in tunecore)"
        )
    module, _, name = target.partition(":")
    kind = getattr(importlib.import_module(module), name)
    takes = inspect.signature(kind).parameters
    return kind(**{key: value for key, value in kwargs.items() if key in takes})
