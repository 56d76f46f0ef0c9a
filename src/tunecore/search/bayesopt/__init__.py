"""Ray Tune's `BayesOptSearch`: Gaussian-process search with bayes_opt.

The searcher behaves as Ray Tune's (`ray.tune.search.bayesopt`): it searches
continuous ranges (`tune.uniform`, or Ray's native `{"width": (0, 20)}`),
serves `points_to_evaluate` first, then `random_search_steps` random points
whose results it buffers until all are in, and from then on fits a GP on
every suggestion. A config suggested again (to `repeat_float_precision`
decimals, 5 by default) is skipped (`skip_duplicate`), and more than
`patience` repeats of one ends the search.
NaN and infinite results are not registered.

Ray's `utility_kwargs` (bayes_opt 1.x's `UtilityFunction`) become a bayes_opt
3.x acquisition object (`_bayesopt_utility`); bayes_opt 1.x itself, which a
Ray Tune 2.60 environment holds, is refused when the searcher is built.

Determinism and resume. bayes_opt draws every random number (the random
points, the GP's restarts, the acquisition search) from one RandomState
seeded by `random_state`, so the same suggestions and registrations in the
same order give the same run (measured with 3.4.0, as with 1.4 in
docs/search-plan.md section 1; registering alone, without the suggestions,
does not). That is what a resume repeats from the log. Where the user gives
no `random_state`, the experiment's seed is used (`use_seed`); Ray's default
of 42 holds for a searcher used on its own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

import msgspec

from tunecore.core.search.domains import Uniform
from tunecore.core.search.variants import ParamSpace, format_path
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.model.numbers import is_number
from tunecore.search._bayesopt_utility import (
    Utility,
    acquisition_function,
    checked_utility,
    require_acquisition_api,
)
from tunecore.search._contract import (
    check_integer,
    check_points,
    decode_spec,
    encode_spec,
    metric_value,
    require_package,
)
from tunecore.search._space_searcher import SpaceSearcher
from tunecore.search.searcher import Searcher
from tunecore.search.spaces import (
    config_from,
    finite,
    label,
    point_values,
    searched_space,
    uniform_space,
)

if TYPE_CHECKING:
    from bayes_opt import BayesianOptimization

logger = logging.getLogger(__name__)

Params = dict[str, float]
"""A point as bayes_opt takes it: a value per dimension, by `label`."""


class _UnsetSeed(int):
    """Ray's default `random_state` (42), told apart from a 42 the user
    passes: only the default gives way to the experiment's seed."""


_RAY_DEFAULT_STATE = _UnsetSeed(42)


class _BayesOptSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What `to_spec` records: the constructor's arguments as the searcher
    holds them after set-up, and the points registered before its first
    suggestion (`evaluated`: a point by label, and its signed target)."""

    space: ParamSpace | None
    metric: str | None
    mode: str | None
    points_to_evaluate: list[Params]
    evaluated: list[tuple[Params, float]]
    utility_kwargs: Utility
    random_state: int
    random_search_steps: int
    verbose: int
    patience: int
    skip_duplicate: bool
    repeat_float_precision: int = 5


class BayesOptSearch(SpaceSearcher):
    """Bayesian optimisation with fmfn/BayesianOptimization (`pip install
    'tunecore[bayesopt]'`), as Ray Tune's `BayesOptSearch`; see
    `_bayesopt_utility` for what `utility_kwargs` maps to in bayes_opt 3.x.

    `analysis` (an `ExperimentAnalysis` of an earlier run) is registered
    before the first suggestion, as in Ray; `warm_start(from_experiment=...)`
    does the same through the log."""

    _name = "BayesOptSearch"
    _searches = "tune.uniform(...) values"
    _seed: int
    """Never None: Ray's default of 42 stands where nothing else is given."""

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        space: Mapping[str, object] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        utility_kwargs: dict[str, Any] | None = None,
        random_state: int = _RAY_DEFAULT_STATE,
        random_search_steps: int = 10,
        verbose: int = 0,
        patience: int = 5,
        skip_duplicate: bool = True,
        analysis: Any = None,
        repeat_float_precision: int = 5,
    ) -> None:
        require_package("BayesOptSearch", "bayes_opt", "bayesopt")
        require_acquisition_api()
        super().__init__(
            metric, mode, seed=random_state, seed_given=not isinstance(random_state, _UnsetSeed)
        )
        check_integer("BayesOptSearch", "random_state", random_state)
        check_integer("BayesOptSearch", "random_search_steps", random_search_steps, minimum=0)
        check_integer("BayesOptSearch", "verbose", verbose, minimum=0)
        check_integer("BayesOptSearch", "patience", patience, minimum=1)
        if not isinstance(skip_duplicate, bool):
            raise InvalidFieldError("BayesOptSearch.skip_duplicate", skip_duplicate, "a bool")
        self._repeat_float_precision = _precision(repeat_float_precision)
        self._utility = checked_utility(utility_kwargs)
        self._random_search_steps = random_search_steps
        self._verbose = verbose
        self._patience = patience
        self._skip_duplicate = skip_duplicate
        self._given_points = check_points("BayesOptSearch", points_to_evaluate)
        self._analysis = analysis
        self._initial_points: list[Params] = []
        self._evaluated: list[tuple[Params, float]] = []  # registered before the first ask
        self._optimizer: BayesianOptimization | None = None
        self._points: list[Params] = []
        self._config_counter: dict[str, int] = {}
        self._live: dict[str, Params] = {}
        self._buffered: list[tuple[Params, float | None]] = []
        self._random_issued = 0
        if space:
            self._take_space(_as_space(space))

    # -- set-up ------------------------------------------------------------------

    def _take_space(self, space: ParamSpace) -> None:
        if not space.sampled:
            raise InvalidFieldError(
                "param_space", space.skeleton, "at least one tune.uniform(low, high) to search"
            )
        for parameter in space.sampled:
            if not isinstance(parameter.domain, Uniform):
                raise InvalidFieldError(
                    format_path(parameter.path),
                    parameter.domain,
                    "tune.uniform(low, high): BayesOptSearch searches continuous ranges only",
                )
        self._space = space
        self._initial_points = [_params(point) for point in self._points_in(space)]
        self._points = list(self._initial_points)
        self._default_metric()
        if self._analysis is not None:
            self.register_analysis(self._analysis)
            self._analysis = None

    def _begun(self) -> bool:
        return self._optimizer is not None

    @property
    def optimizer(self) -> BayesianOptimization | None:
        """The bayes_opt optimizer (built at the first suggestion)."""
        return self._optimizer

    def _built(self) -> BayesianOptimization:
        if self._optimizer is None:
            assert self._space is not None
            from bayes_opt import BayesianOptimization  # noqa: PLC0415 - optional package

            bounds = {
                label(p.path): (_uniform(p.domain).low, _uniform(p.domain).high)
                for p in self._space.sampled
            }
            self._optimizer = BayesianOptimization(
                f=None,
                pbounds=bounds,
                acquisition_function=acquisition_function(self._utility),
                random_state=int(self._seed),
                verbose=self._verbose,
            )
            for params, target in self._evaluated:
                self._register(params, target)
        return self._optimizer

    # -- Ray's Searcher API ------------------------------------------------------------

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self._require_ready()
        optimizer = self._built()
        params = self._points.pop(0) if self._points else self._clamped(optimizer.suggest())
        key = json.dumps(
            {k: f"{v:.{self._repeat_float_precision}f}" for k, v in params.items()},
            sort_keys=True,
        )
        already_seen = key in self._config_counter
        self._config_counter[key] = self._config_counter.get(key, 0) + 1
        if max(self._config_counter.values()) > self._patience:
            return Searcher.FINISHED
        if already_seen and self._skip_duplicate:
            logger.info("BayesOptSearch skips a duplicate config: %s", params)
            return None
        if len(self._buffered) < self._random_search_steps:
            if self._random_issued == self._random_search_steps:
                return None  # wait for the random points' results
            self._random_issued += 1
        self._live[trial_id] = params
        return self._config(params)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        params = self._live.pop(trial_id, None)
        if result is None or params is None or error:
            return
        target = self._target(result)
        if len(self._buffered) >= self._random_search_steps:
            self._register(params, target)
            return
        self._buffered.append((params, target))
        if len(self._buffered) == self._random_search_steps:
            for buffered, value in self._buffered:
                self._register(buffered, value)

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """Register a point evaluated elsewhere (a warm start, a trial added
        from outside); an errored or pruned one tells a GP nothing."""
        if self._space is None:
            raise RuntimeError("BayesOptSearch.add_evaluated_point needs the search space first")
        if error or pruned:
            return
        params = _params(point_values("BayesOptSearch", "parameters", self._space, parameters))
        self._register(params, self._signed(value))

    def register_analysis(self, analysis: Any) -> None:
        """Register every trial of an earlier experiment (Ray's API): its
        config and its best value of the metric."""
        if self._space is None or not self._metric or not self._mode:
            raise RuntimeError(
                "BayesOptSearch.register_analysis needs the search space, metric and mode"
            )
        configs = analysis.get_all_configs()
        frame = analysis.dataframe(metric=self._metric, mode=self._mode)
        for row in frame.to_dict("records"):
            config = configs.get(row.get("trial_id"))
            if config is None:
                continue
            params = _params(point_values("BayesOptSearch", "analysis", self._space, config))
            target = self._signed(row.get(self._metric))
            if target is None:
                continue
            self._evaluated.append((params, target))
            if self._optimizer is not None:
                self._register(params, target)

    # -- tunecore's additions ------------------------------------------------------------

    def to_spec(self) -> JsonDict | None:
        spec = _BayesOptSpec(
            space=self._space,
            metric=self._metric,
            mode=self._mode,
            points_to_evaluate=self._initial_points,
            evaluated=self._evaluated,
            utility_kwargs=self._utility,
            random_state=int(self._seed),
            random_search_steps=self._random_search_steps,
            verbose=self._verbose,
            patience=self._patience,
            skip_duplicate=self._skip_duplicate,
            repeat_float_precision=self._repeat_float_precision,
        )
        return encode_spec(spec)

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        decoded = decode_spec("BayesOptSearch", spec, _BayesOptSpec)
        searcher = cls._rebuilt(
            decoded.space,
            metric=decoded.metric,
            mode=decoded.mode,
            points_to_evaluate=[dict(point) for point in decoded.points_to_evaluate],
            utility_kwargs=msgspec.structs.asdict(decoded.utility_kwargs),
            random_state=decoded.random_state,
            random_search_steps=decoded.random_search_steps,
            verbose=decoded.verbose,
            patience=decoded.patience,
            skip_duplicate=decoded.skip_duplicate,
            repeat_float_precision=decoded.repeat_float_precision,
        )
        searcher._evaluated = list(decoded.evaluated)
        return searcher

    # -- helpers ---------------------------------------------------------------------------

    def _target(self, result: Mapping[str, Any]) -> float | None:
        return self._signed(metric_value("BayesOptSearch", self._metric, result))

    def _signed(self, value: object) -> float | None:
        """The value as bayes_opt maximises it; None if not a finite number."""
        number = finite(value)
        if number is None:
            return None
        return number if self._mode == "max" else -number

    def _register(self, params: Params, target: float | None) -> None:
        """Register an observation; NaN, inf and a point already registered
        (bayes_opt refuses duplicates) are left out."""
        if target is None:
            return
        from bayes_opt.exception import NotUniqueError  # noqa: PLC0415 - optional package

        try:
            self._built().register(params, target)
        except NotUniqueError:
            logger.info("BayesOptSearch: %s was registered already", params)

    def _clamped(self, suggested: Mapping[str, Any]) -> Params:
        """bayes_opt's point as plain floats inside the bounds."""
        assert self._space is not None
        params: Params = {}
        for parameter in self._space.sampled:
            domain = _uniform(parameter.domain)
            name = label(parameter.path)
            params[name] = min(max(float(suggested[name]), domain.low), domain.high)
        return params

    def _config(self, params: Params) -> dict[str, Any]:
        assert self._space is not None
        values: dict[Path, JsonValue] = {p.path: params[label(p.path)] for p in self._space.sampled}
        return config_from(self._space, values)


def _as_space(space: Mapping[str, object]) -> ParamSpace:
    """The constructor's `space`: tunecore domains, or Ray's native bounds."""
    if not isinstance(space, Mapping):
        raise InvalidFieldError("BayesOptSearch.space", space, "a dict")
    parsed = searched_space("BayesOptSearch", space)
    if parsed.sampled:
        return parsed
    return searched_space("BayesOptSearch", uniform_space("BayesOptSearch", space))


def _uniform(domain: object) -> Uniform:
    assert isinstance(domain, Uniform)
    return domain


def _params(values: Mapping[Path, JsonValue]) -> Params:
    params: Params = {}
    for path, value in values.items():
        assert is_number(value)  # point_values checked it against a Uniform
        params[label(path)] = float(value)
    return params


def _precision(repeat_float_precision: object) -> int:
    """Ray's check of `repeat_float_precision`, the decimals to which two
    configs must agree to count as the same: an integer (TypeError
    otherwise, a bool too), not negative (ValueError)."""
    if isinstance(repeat_float_precision, bool) or not isinstance(repeat_float_precision, int):
        raise TypeError(
            f"BayesOptSearch.repeat_float_precision={repeat_float_precision!r}: "
            "repeat_float_precision must be an integer."
        )
    if repeat_float_precision < 0:
        raise InvalidFieldError(
            "BayesOptSearch.repeat_float_precision",
            repeat_float_precision,
            "a non-negative integer (the decimals to which two configs must agree)",
        )
    return repeat_float_precision
