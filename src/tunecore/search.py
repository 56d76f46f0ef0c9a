"""Searchers, under the names Ray Tune users know."""

from tunecore.core.search import (
    BasicVariantGenerator,
    ConcurrencyLimiter,
    Repeater,
    Searcher,
    Suggestion,
)

__all__ = ["BasicVariantGenerator", "ConcurrencyLimiter", "Repeater", "Searcher", "Suggestion"]
