"""`tunecore.search.create_searcher`: Ray's names, and what Ray 2.60 lacks."""

from __future__ import annotations

import pytest

from tunecore.search import create_searcher
from tunecore.search.registry import SEARCHERS


def test_create_searcher_knows_every_name_rays_does_and_says_so_for_another() -> None:
    """Ray Tune 2.60's `SEARCH_ALG_IMPORT` keys (python/ray/tune/search/__init__.py)."""
    rays = {"variant_generator", "random", "ax", "hyperopt", "bayesopt", "bohb"}
    rays |= {"nevergrad", "optuna", "zoopt", "hebo"}
    assert rays <= set(SEARCHERS.ray_names())
    with pytest.raises(ValueError, match=r"'vizier' is not one of .*Ray 2\.60 ships no vizier"):
        create_searcher("vizier")
