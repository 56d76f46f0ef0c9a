"""`ray.tune.search.concurrency_limiter`: `ConcurrencyLimiter`, typed for
what Ray Tune users wrap in it.

The limiter is the core's struct (`tunecore.core.search.limiter`), generic
in the `SearchPolicy` it wraps. A user wraps a `Searcher` (`OptunaSearch(
...)`, a subclass of Ray's base class), which the `Tuner` replaces by the
policy standing for it before the limiter runs (`tunecore.api.searching`).
A type checker sees the class declared here, the same struct whose
constructor takes either, with Ray's signature; at run time the name is the
core's class itself, so `isinstance` and the log know one type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tunecore.core.search import limiter

if TYPE_CHECKING:
    from tunecore.core.search import SearchPolicy
    from tunecore.search.searcher import Searcher

    class ConcurrencyLimiter(limiter.ConcurrencyLimiter[Any], frozen=True):
        """Wraps `searcher` so that at most `max_concurrent` of its trials run."""

        def __init__(
            self, searcher: Searcher | SearchPolicy, max_concurrent: int, batch: bool = False
        ) -> None: ...

else:
    ConcurrencyLimiter = limiter.ConcurrencyLimiter

__all__ = ["ConcurrencyLimiter"]
