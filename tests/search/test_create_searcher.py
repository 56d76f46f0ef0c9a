"""`tunecore.search.create_searcher`: Ray's names, and what Ray 2.60 lacks."""

from __future__ import annotations

import pytest

import tunecore as tune
from tunecore.search import SEARCH_ALG_IMPORT, BasicVariantGenerator, create_searcher
from tunecore.search.hyperopt import HyperOptSearch
from tunecore.search.registry import SEARCHERS


def test_create_searcher_knows_every_name_rays_does_and_says_so_for_another() -> None:
    """Ray Tune 2.60's `SEARCH_ALG_IMPORT` keys (python/ray/tune/search/__init__.py)."""
    rays = {"variant_generator", "random", "ax", "hyperopt", "bayesopt", "bohb"}
    rays |= {"nevergrad", "optuna", "zoopt", "hebo"}
    assert rays <= set(SEARCHERS.ray_names())
    with pytest.raises(ValueError, match=r"'vizier' is not one of .*Ray 2\.60 ships no vizier"):
        create_searcher("vizier")


RAYS_SEARCHERS = {
    "variant_generator": "BasicVariantGenerator",
    "random": "BasicVariantGenerator",
    "ax": "AxSearch",
    "hyperopt": "HyperOptSearch",
    "bayesopt": "BayesOptSearch",
    "bohb": "TuneBOHB",
    "nevergrad": "NevergradSearch",
    "optuna": "OptunaSearch",
    "zoopt": "ZOOptSearch",
    "hebo": "HEBOSearch",
}
"""Ray Tune 2.60's `SEARCH_ALG_IMPORT`, each name to its class's name."""


def test_search_alg_import_is_rays_table_of_importers() -> None:
    """Libraries built on Ray Tune (siatune) register every searcher with
    `for func in tune.search.SEARCH_ALG_IMPORT.values(): func()`: the same
    names, each function giving the class (under Ray's name) that
    `tunecore.search` and `create_searcher` give, without its optimizer
    package (Ax's and HEBO's are not installed here)."""
    assert tune.search.SEARCH_ALG_IMPORT is SEARCH_ALG_IMPORT
    classes = {name: importer() for name, importer in SEARCH_ALG_IMPORT.items()}
    assert {name: cls.__name__ for name, cls in classes.items()} == RAYS_SEARCHERS
    assert classes["random"] is BasicVariantGenerator
    assert classes["hyperopt"] is HyperOptSearch
    assert type(create_searcher("hyperopt", metric="loss", mode="min")) is HyperOptSearch
