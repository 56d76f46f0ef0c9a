"""Refuse a search algorithm tunecore cannot drive, where it is passed.

`TuneConfig(search_alg=...)` (and `Tuner.restore(..., search_alg=...)`)
takes a `tunecore.search.Searcher` (the searchers tunecore ships, or a
subclass of the user's), which the shell
drives through the core's `ExternalSearcher`, or one of the core's search
policies (`BasicVariantGenerator`), either of them inside a
`ConcurrencyLimiter` or `Repeater`. Anything else used to reach the core,
which called a policy method on it mid-setup and failed with an
AttributeError far from its cause: most often a searcher built on Ray
Tune's own base class, such as FLAML's `BlendSearch` and `CFO` (the classes
Ray's FLAML notebooks use since Ray dropped `ray.tune.search.flaml`), which
subclass `ray.tune.search.Searcher`. Such an object is refused here,
naming the field, the object and, for Ray's base class, why.
"""

from __future__ import annotations

from tunecore.core.search.base import unwrapped
from tunecore.model import InvalidFieldError
from tunecore.model.foreign_class import foreign_base
from tunecore.search.searcher import Searcher

_ACCEPTED = (
    "a tunecore.search.Searcher (OptunaSearch, HyperOptSearch, BayesOptSearch, ... or a "
    "subclass of your own with suggest and on_trial_complete) or BasicVariantGenerator, "
    "alone or in a ConcurrencyLimiter or Repeater"
)


def _is_policy(candidate: object) -> bool:
    """Whether `candidate` has the core's `SearchPolicy` methods."""
    return all(callable(getattr(candidate, name, None)) for name in ("with_objective", "suggest"))


def _ray_base(cls: type) -> str | None:
    """The dotted name of the first class in `cls`'s bases from Ray Tune's
    own modules, if any."""
    base = foreign_base(cls, "ray.tune")
    return None if base is None else f"{base.__module__}.{base.__qualname__}"


def refuse_foreign_searcher(search_alg: object, field: str = "TuneConfig.search_alg") -> object:
    """Return `search_alg`, or raise `InvalidFieldError` naming `field` (where
    it was passed) if what it holds is neither a `tunecore.search.Searcher`
    nor one of the core's policies. Every entry point that takes a search
    algorithm calls it: `TuneConfig` (so `tune.run` and `run_experiments`
    too) and `Tuner.restore`."""
    inner = unwrapped(search_alg)
    if inner is None or isinstance(inner, Searcher) or _is_policy(inner):
        return search_alg
    cls = type(inner)
    ray_base = _ray_base(cls)
    expected = _ACCEPTED
    if ray_base is not None:
        expected += (
            f"; {cls.__module__}.{cls.__qualname__} is built on Ray Tune's own {ray_base}, "
            "which only Ray Tune runs"
        )
    raise InvalidFieldError(field, inner, expected)
