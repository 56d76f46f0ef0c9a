"""A searcher written with Ray Tune's imperative API runs in the shell."""

from __future__ import annotations

from typing import Any

from tunecore import TuneConfig
from tunecore.search import ConcurrencyLimiter, Searcher


class RayStyle(Searcher):
    def suggest(self, trial_id: str) -> Any:
        return {"x": 1}


def test_a_ray_style_searcher_is_accepted_inside_a_limiter() -> None:
    # The limiter's type parameter is the core's searcher protocol: an object
    # it holds until fit() replaces it is outside what mypy can see.
    searcher = ConcurrencyLimiter(RayStyle(), max_concurrent=1)
    assert TuneConfig(search_alg=searcher).search_alg is searcher
