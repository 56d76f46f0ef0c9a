"""`ray.tune.search.concurrency_limiter`'s name, for scripts that import it from there."""

from tunecore.core.search import ConcurrencyLimiter

__all__ = ["ConcurrencyLimiter"]
