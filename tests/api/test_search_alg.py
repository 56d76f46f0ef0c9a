"""A searcher written with Ray Tune's imperative API is refused at once."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from tunecore import TuneConfig
from tunecore.search import ConcurrencyLimiter, Searcher


class RayStyle(Searcher):
    def suggest(self, trial_id: str) -> Any:
        return {"x": 1}


def test_a_ray_style_searcher_is_named_in_a_clear_error() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"search_alg=RayStyle\(...\) is written"):
        TuneConfig(search_alg=ConcurrencyLimiter(RayStyle(), max_concurrent=1))  # type: ignore[abstract]  # what mypy says too
