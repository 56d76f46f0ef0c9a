"""Ray Tune's `HEBOSearch`: Heteroscedastic Evolutionary Bayesian Optimisation.

The searcher behaves as Ray Tune's (`ray.tune.search.hebo`): the space is
tunecore's domains (converted as `_hebo_space` says), its own or the
Tuner's, or a HEBO `DesignSpace`, searched as given; `points_to_evaluate`
come first, or with `evaluated_rewards` are told to HEBO as already
evaluated; `**kwargs` go to `hebo.optimizers.hebo.HEBO`. HEBO suggests
`max_concurrent` points at a time (a `ConcurrencyLimiter`'s bound replaces
it, as in Ray) and the searcher hands out a whole batch before it asks for
the next, once every trial of the batch has ended. HEBO minimises, so a
"max" metric is negated; a trial that failed, ended without a result or
reported a NaN or infinite value is not told.

Determinism and resume. HEBO draws from numpy's and torch's global
generators, and scrambles its first Sobol points from a fresh torch
generator seeded from the clock unless it is given `scramble_seed`. Ray
seeds the global generators once (`random_state_seed`), so its first
points still differ from run to run. tunecore seeds all of it from
`random_state_seed` or else the experiment's seed (`use_seed`): HEBO gets
that `scramble_seed` unless the user gives one, and the searcher keeps
global states of its own that it lends HEBO around each call
(`_global_random`), so the same tells in the same order give the same
suggestions in any process. `to_spec` describes the searcher by its
arguments; a `DesignSpace` or kwargs that are not JSON (an `acq_cls`) are
code, not data: `to_spec` is None (with one warning) and `Tuner.restore`
needs the searcher passed again (`search_alg=`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import msgspec
import numpy as np

from tunecore.core.search.variants import ParamSpace
from tunecore.model import InvalidFieldError, JsonDict
from tunecore.search._contract import (
    check_integer,
    check_points,
    decode_spec,
    encode_spec,
    json_kwargs,
    metric_value,
    require_package,
)
from tunecore.search._dimension import by_label, config_values
from tunecore.search._global_random import GlobalRandom
from tunecore.search._hebo_space import Dimension, design_space, dimensions
from tunecore.search._space_searcher import SpaceSearcher
from tunecore.search.spaces import (
    config_from,
    finite,
    point_values,
    unflattened,
)


class _HEBOSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What `to_spec` records: the constructor's arguments as the searcher
    holds them after set-up (a point by label, the seed it uses)."""

    space: ParamSpace | None
    metric: str | None
    mode: str | None
    points_to_evaluate: list[JsonDict]
    evaluated_rewards: list[float] | None
    seed: int | None
    max_concurrent: int
    kwargs: JsonDict


class HEBOSearch(SpaceSearcher):
    """HEBO's Bayesian optimisation (`pip install 'tunecore[hebo]'`), as Ray
    Tune's `HEBOSearch`; see the module docstring."""

    _name = "HEBOSearch"
    _searches = "search domains (tune.uniform, tune.loguniform, tune.randint, tune.choice, ...)"

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        space: Mapping[str, object] | Any = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        evaluated_rewards: list[float] | None = None,
        random_state_seed: int | None = None,
        max_concurrent: int = 8,
        **kwargs: Any,
    ) -> None:
        require_package("HEBOSearch", "hebo", "hebo")
        from hebo.design_space.design_space import DesignSpace  # noqa: PLC0415 - optional

        super().__init__(
            metric, mode, seed=random_state_seed, seed_given=random_state_seed is not None
        )
        check_integer("HEBOSearch", "random_state_seed", random_state_seed, optional=True)
        check_integer("HEBOSearch", "max_concurrent", max_concurrent, minimum=1)
        self._given_points = check_points("HEBOSearch", points_to_evaluate)
        self._rewards = _checked_rewards(evaluated_rewards, len(self._given_points))
        self._max_concurrent = max_concurrent
        self._kwargs = kwargs
        self._native: Any = None  # a DesignSpace, as given
        self._optimizer: Any = None  # HEBO, built at the first use
        self._random: GlobalRandom | None = None  # the global states HEBO draws from
        self._queue: list[tuple[JsonDict, dict[str, Any]]] = []  # (config, row) to hand out
        self._cache: list[dict[str, Any]] = []  # rows of HEBO's batch not handed out yet
        self._live: dict[str, dict[str, Any]] = {}  # trial id -> its row
        self._batch_filled = False
        if isinstance(space, DesignSpace):
            self._native = space
            self._default_metric()
        else:
            self._take_own_space(space, "a dict of search domains or a HEBO DesignSpace")

    # -- set-up ------------------------------------------------------------------

    def _has_space(self) -> bool:
        return self._space is not None or self._native is not None

    def _begun(self) -> bool:
        return self._optimizer is not None

    def _dimensions_of(self, space: ParamSpace) -> list[Dimension]:
        return dimensions(space)

    def set_max_concurrency(self, max_concurrent: int) -> bool:
        """Ray's: a `ConcurrencyLimiter`'s bound is HEBO's batch size."""
        check_integer("HEBOSearch", "max_concurrent", max_concurrent, minimum=1)
        self._max_concurrent = max_concurrent
        return True

    def _started(self) -> Any:
        """HEBO (built at the first use, once the seed is known), told the
        evaluated points or holding `points_to_evaluate` to hand out first."""
        if self._optimizer is None:
            from hebo.optimizers.hebo import HEBO  # noqa: PLC0415 - optional package

            self._random = GlobalRandom(self._seed_now(), torch=True)
            space = self._native if self._native is not None else design_space(self._dimensions)
            kwargs = {"scramble_seed": self._seed, **self._kwargs}
            points = self._points()
            with self._random.lent():
                self._optimizer = HEBO(space, **kwargs)
                if self._rewards is not None:
                    for (_, row), reward in zip(points, self._rewards, strict=True):
                        self._observe(row, reward)
            if self._rewards is None:
                self._queue = points
        return self._optimizer

    def _points(self) -> list[tuple[JsonDict, dict[str, Any]]]:
        """`points_to_evaluate` as (config, HEBO row) pairs."""
        if self._space is not None:
            return [
                (config_from(self._space, values), by_label(self._dimensions, values))
                for values in self._initial_points
            ]
        return [
            (unflattened(point, "HEBOSearch point"), dict(point)) for point in self._given_points
        ]

    # -- Ray's Searcher API ------------------------------------------------------------

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self._require_ready()
        optimizer = self._started()
        if not self._live:
            self._batch_filled = False
        if self._queue:
            config, row = self._queue.pop(0)
        else:
            if self._batch_filled or len(self._live) >= self._max_concurrent:
                return None
            if not self._cache:
                assert self._random is not None
                with self._random.lent():
                    batch = optimizer.suggest(n_suggestions=self._max_concurrent)
                self._cache = batch.to_dict("records")
            row = self._cache.pop(0)
            config = self._config(row)
        self._live[trial_id] = row
        if len(self._live) >= self._max_concurrent:
            self._batch_filled = True
        return config

    def _config(self, row: Mapping[str, Any]) -> JsonDict:
        if self._space is not None:
            return config_from(self._space, config_values(self._dimensions, row))
        return unflattened(row, "HEBOSearch suggestion")

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """A result tells HEBO its loss; an error, a trial that ended
        without a result or a NaN or infinite value tells it nothing."""
        row = self._live.pop(trial_id, None)
        if row is None or error or not result:
            return
        number = finite(metric_value("HEBOSearch", self._metric, result))
        if number is not None:
            assert self._random is not None
            with self._random.lent():
                self._observe(row, number)

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """A point evaluated elsewhere (a warm start, a trial added from
        outside), told to HEBO; an errored or pruned one is not."""
        self._require_ready()
        self._started()
        if error or pruned:
            return
        number = finite(value)
        if number is None:
            return
        if self._space is not None:
            values = point_values("HEBOSearch", "parameters", self._space, parameters)
            row = by_label(self._dimensions, values)
        else:
            row = {k: v for k, v in parameters.items() if k in self._native.para_names}
        assert self._random is not None
        with self._random.lent():
            self._observe(row, number)

    def _observe(self, row: Mapping[str, Any], value: float) -> None:
        import pandas as pd  # noqa: PLC0415 - HEBO's own data type

        loss = -value if self._mode == "max" else value
        self._optimizer.observe(pd.DataFrame([dict(row)]), np.array([[loss]]))

    # -- tunecore's additions ------------------------------------------------------------

    def to_spec(self) -> JsonDict | None:
        """None for what is code, not data (see the module docstring): a
        restore then needs the searcher passed again, which it warns of once."""
        kwargs = json_kwargs(self._kwargs)
        if self._native is not None or kwargs is None:
            what = "a HEBO DesignSpace" if self._native is not None else "kwargs that are not JSON"
            self._no_spec(what, "build it from tunecore's domains and JSON kwargs")
            return None
        spec = _HEBOSpec(
            space=self._space,
            metric=self._metric,
            mode=self._mode,
            points_to_evaluate=self._labelled_points(),
            evaluated_rewards=self._rewards,
            seed=self._seed,
            max_concurrent=self._max_concurrent,
            kwargs=kwargs,
        )
        return encode_spec(spec)

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        decoded = decode_spec("HEBOSearch", spec, _HEBOSpec)
        searcher = cls._rebuilt(
            decoded.space,
            metric=decoded.metric,
            mode=decoded.mode,
            points_to_evaluate=decoded.points_to_evaluate,
            evaluated_rewards=decoded.evaluated_rewards,
            max_concurrent=decoded.max_concurrent,
            **decoded.kwargs,
        )
        if decoded.seed is not None:
            searcher.use_seed(decoded.seed)
        return searcher


def _checked_rewards(rewards: object, points: int) -> list[float] | None:
    """`evaluated_rewards`: one finite number per point to evaluate (Ray's
    `validate_warmstart`)."""
    if rewards is None:
        return None
    if not isinstance(rewards, list | tuple) or len(rewards) != points:
        raise InvalidFieldError(
            "HEBOSearch.evaluated_rewards",
            rewards,
            f"a list of {points} numbers, one per point of points_to_evaluate",
        )
    numbers = [finite(reward) for reward in rewards]
    if any(number is None for number in numbers):
        raise InvalidFieldError("HEBOSearch.evaluated_rewards", rewards, "finite numbers")
    return [number for number in numbers if number is not None]


__all__ = ["HEBOSearch"]
