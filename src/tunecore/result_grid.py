"""`ray.tune.result_grid`'s names, for scripts that import them from there
(often only for a type hint: `def summarize(results: ResultGrid) -> Result`)."""

from tunecore.api.results import Result, ResultGrid

__all__ = ["Result", "ResultGrid"]
