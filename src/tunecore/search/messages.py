"""The error-message templates Ray's `ray.tune.search` exports for search
algorithms of one's own, with the same placeholders, so a searcher that
formats them (`UNDEFINED_SEARCH_SPACE.format(cls=..., space=...)`) runs."""

UNRESOLVED_SEARCH_SPACE = (
    "{cls} was given a `{par}` argument holding search-space definitions "
    "(tune.uniform, tune.choice, ...), which it cannot resolve itself: give {cls} "
    "a space already in its own format, or pass these definitions as "
    "`param_space` to `tunecore.Tuner()`, which converts them."
)
UNDEFINED_SEARCH_SPACE = (
    "{cls} was asked for a configuration but has no search space: pass the "
    "`{space}` argument when creating it, or a `param_space` to `tunecore.Tuner()`."
)
UNDEFINED_METRIC_MODE = (
    "{cls} was asked for a configuration but its `metric` ({metric}) or `mode` "
    "({mode}) is not set: pass them when creating it, or to `tunecore.TuneConfig()`."
)

__all__ = ["UNDEFINED_METRIC_MODE", "UNDEFINED_SEARCH_SPACE", "UNRESOLVED_SEARCH_SPACE"]
