"""Ray Tune's `create_searcher`: a searcher chosen by name, as from a
command-line option."""

from __future__ import annotations

from typing import Any

from tunecore._by_name import create_by_name
from tunecore.search.registry import SEARCHERS


def create_searcher(search_alg: str, **kwargs: Any) -> Any:
    """The searcher named `search_alg` (any case), built with those of
    `kwargs` its class takes; the rest are dropped, as in Ray Tune. An
    unknown name is a `ValueError` listing the known ones; a missing
    package is an `ImportError` naming the extra to install."""
    return create_by_name(
        "create_searcher: search_alg",
        SEARCHERS,
        search_alg,
        kwargs,
        "every name Ray Tune 2.60's create_searcher knows builds here; Ray 2.60 ships no vizier",
    )
