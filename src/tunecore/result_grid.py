"""`ray.tune.result_grid`'s name, for scripts that import it from there (often
only for a type hint: `def summarize(results: ResultGrid)`)."""

from tunecore.api.results import ResultGrid

__all__ = ["ResultGrid"]
