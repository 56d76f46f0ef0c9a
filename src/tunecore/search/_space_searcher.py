"""What the single-objective searchers over a flat space share.

BayesOpt, HyperOpt, Nevergrad, ZOOpt, HEBO and Ax are the same kind of
searcher to Ray Tune: one objective, a space of
their own or else the Tuner's param space (with the Tuner's metric and
mode), `points_to_evaluate` served first, and a random state that the
experiment's seed fills in where the user gave none, up to the moment the
optimizer begins. That life cycle is written here once, so they cannot
drift apart; a subclass says how it models a parameter (`_dimensions_of`), what
its space must hold (`_searches`) and when its optimizer has begun
(`_begun`). The checks and messages they share are `_contract`'s.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from tunecore.core.results import DEFAULT_METRIC
from tunecore.core.search.variants import ParamSpace
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.search._contract import check_one_metric, require_ready, tuner_objective
from tunecore.search._dimension import Dimension
from tunecore.search.searcher import Searcher
from tunecore.search.spaces import label, point_values, searched_space

SEED_BOUND = 2**31 - 1
"""Seeds drawn for an optimizer are below it (numpy's legacy seeds are 32-bit)."""


class SpaceSearcher(Searcher):
    """The base of a single-objective searcher over a tunecore param space."""

    _name: ClassVar[str]
    """Ray's name for the class, which every message names."""

    _searches: ClassVar[str]
    """What a param space must hold for it (named when it has no space)."""

    _seed: int | None
    """Its random state: the user's, else the experiment's (`use_seed`)."""

    _given_points: list[Any]
    """`points_to_evaluate` as given (a subclass checks them in its order)."""

    _dimensions: list[Dimension[Any]]
    """How its optimizer models each searched parameter, in the space's order."""

    _initial_points: list[Any]
    """`points_to_evaluate`, checked against the space it took."""

    def __init__(
        self, metric: str | None, mode: str | None, *, seed: int | None, seed_given: bool
    ) -> None:
        """`seed_given`: the user chose `seed`, so the experiment's does not
        replace it."""
        super().__init__(metric=metric, mode=mode)
        check_one_metric(self._name, metric)
        self._seed = seed
        self._seed_given = seed_given
        self._space: ParamSpace | None = None
        self._warned_no_spec = False

    # -- what a subclass says ------------------------------------------------------

    def _dimensions_of(self, space: ParamSpace) -> list[Dimension[Any]]:
        """How its optimizer models each of `space`'s searched parameters."""
        raise NotImplementedError

    def _begun(self) -> bool:
        """Whether the optimizer has drawn from its random state already."""
        raise NotImplementedError

    def _has_space(self) -> bool:
        """Whether it has a space to search (one of its own, or taken)."""
        return self._space is not None

    # -- Ray's contract, once ------------------------------------------------------

    def _take_space(self, space: ParamSpace) -> None:
        """Search `space` (and read `_given_points` in it): a space with
        nothing to search is refused."""
        found = self._dimensions_of(space)
        if all(d.entry is None for d in found):
            raise InvalidFieldError(
                "param_space",
                space.skeleton,
                "at least one search domain with more than one value (tune.uniform, ...)",
            )
        self._dimensions = found
        self._space = space
        self._initial_points = self._points_in(space)
        self._default_metric()

    def _take_own_space(self, space: object, accepted: str) -> None:
        """The constructor's `space` when it is not the optimizer's own kind
        (the caller's to take): a dict of tunecore's domains is taken, an
        empty one or None leaves the space to the Tuner, anything else is an
        error saying what is `accepted`."""
        if isinstance(space, Mapping) and space:
            self._take_space(searched_space(self._name, space))
        elif space:
            raise InvalidFieldError(f"{self._name}.space", space, accepted)

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        """Ray's: take the Tuner's metric, mode and param space unless this
        searcher was built with a space of its own."""
        if self._has_space():
            return False
        self._metric, self._mode = tuner_objective(
            self._name, self._metric, self._mode, metric, mode
        )
        self._take_space(searched_space(self._name, config))
        return True

    def use_seed(self, seed: int) -> None:
        """The experiment's seed, unless the user gave one; too late once
        the optimizer has begun."""
        if not self._seed_given and not self._begun():
            self._seed = seed

    def _seed_now(self) -> int:
        """The seed its optimizer begins with: one drawn now if it has none
        (used on its own and unseeded, as Ray allows)."""
        if self._seed is None:
            self._seed = int(np.random.default_rng().integers(SEED_BOUND))
        return self._seed

    def _require_ready(self) -> None:
        """Before a suggestion: a space and the objective (Ray's errors)."""
        require_ready(self._name, self._has_space(), self._metric, self._mode, self._searches)

    def _points_in(self, space: ParamSpace) -> list[dict[Path, JsonValue]]:
        """`points_to_evaluate`, each checked against `space`."""
        return [
            point_values(self._name, f"points_to_evaluate[{i}]", space, point)
            for i, point in enumerate(self._given_points)
        ]

    def _labelled_points(self) -> list[JsonDict]:
        """`points_to_evaluate` as a spec records them: by label."""
        return [
            {label(path): value for path, value in point.items()} for point in self._initial_points
        ]

    def _default_metric(self) -> None:
        """Ray's default metric for a searcher given a mode but no metric."""
        if self._metric is None and self._mode:
            self._metric = DEFAULT_METRIC

    def _no_spec(self, what: str, instead: str) -> None:
        """`to_spec`'s None for a searcher holding `what` (code, not data),
        with one warning saying how a restore gets it (`instead`: how to
        build one the log can rebuild)."""
        if not self._warned_no_spec:
            self._warned_no_spec = True
            warnings.warn(
                f"{self._name} with {what} cannot be rebuilt from the experiment's log: pass it "
                f"again to Tuner.restore(..., search_alg=...), or {instead}",
                stacklevel=3,
            )

    @classmethod
    def _rebuilt(cls, space: ParamSpace | None, **arguments: Any) -> Self:
        """`from_spec`'s searcher: built with `arguments`, then given the
        space it had taken (its own or the Tuner's)."""
        searcher = cls(**arguments)
        if space is not None:
            searcher._take_space(space)
        return searcher


__all__ = ["SEED_BOUND", "SpaceSearcher"]
