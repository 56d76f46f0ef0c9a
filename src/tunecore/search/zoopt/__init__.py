"""Ray Tune's `ZOOptSearch`: derivative-free optimization with ZOOpt's ASRacos.

The searcher behaves as Ray Tune's (`ray.tune.search.zoopt`): `algo` is
"asracos" or "sracos" (any case; both run ZOOpt's `SRacosTune`), `budget`
is required (Ray: it must match `num_samples`), the space is tunecore's
domains (converted as `_zoopt_space` says), its own (`dim_dict`) or the
Tuner's, or a `dim_dict` of ZOOpt's own `(ValueType, ...)` tuples,
searched as given. `points_to_evaluate` are ZOOpt's initial samples;
`parallel_num` is how many trials it has out at once; ZOOpt minimises, so
a "max" metric is negated. Two differences from Ray: `**kwargs` go to
`zoopt.Parameter` (Ray passes them to `SRacosTune`, which reads none of
them); and a trial that failed, ended without a result or reported a NaN
or infinite value is told as the worst loss, +inf (Ray tells ZOOpt
nothing, and ZOOpt then waits for it forever).

ZOOpt waits once, between its initial samples and its model, for every
initial sample to finish (its `suggest` returns None); it only ends that
wait at the completion of the last one. Asked after that completion (as
one trial at a time asks it), it would wait forever: the searcher makes
that one call right after it hands out the last initial sample.

ZOOpt also gives up early. Its model draws a new point from a region
around its best point that may hold none it has not tried (one with a
choice or an integer at a bound, say: ZOOpt keeps three points with
`budget` <= 50, so this comes within a few trials); after 100 such draws
its `suggest` answers "FINISHED", and where every parameter is discrete
it answers None and counts a trial it never handed out, so it waits for
ever. Ray hands both on, and a run ends with fewer trials than
`num_samples` (or hangs). The searcher asks again instead, up to
`_ATTEMPTS` times (each draws a new region), the last time with ZOOpt's
own exploration (a point from the whole space: `Parameter.set_probability`
0), and returns `Searcher.FINISHED` only when that too finds no new point.

Determinism and resume. ZOOpt draws from numpy's global random state: the
searcher keeps a state of its own, seeded by the experiment's seed
(`use_seed`) or by `seed=` given as a kwarg, and swaps it in around each
call into ZOOpt, so what else uses numpy's global state changes nothing.
So it does with ZOOpt's process-wide float precisions, which the last
space built sets (another ZOOptSearch's space would make this one round
to its precisions, or index past them).
`to_spec` describes the searcher by its arguments; a `dim_dict` of ZOOpt's
tuples is code, not data: `to_spec` is None (with one warning) and
`Tuner.restore` needs the searcher passed again (`search_alg=`).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Self

import msgspec

from tunecore.core.search.variants import ParamSpace
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.model.numbers import is_int
from tunecore.search._contract import (
    check_integer,
    check_points,
    decode_spec,
    encode_spec,
    json_kwargs,
    metric_value,
    require_package,
)
from tunecore.search._global_random import GlobalRandom
from tunecore.search._space_searcher import SpaceSearcher
from tunecore.search._zoopt_space import Dimension, config_values, dimensions, solution_x
from tunecore.search.searcher import Searcher
from tunecore.search.spaces import (
    config_from,
    finite,
    searched_space,
    unflattened,
)

if TYPE_CHECKING:
    from zoopt import Solution
    from zoopt.algos.opt_algorithms.racos.sracos import SRacosTune

_ALGORITHMS = ("asracos", "sracos")
_ATTEMPTS = 10
"""Times the searcher asks ZOOpt for a new point before it ends the search
(the module docstring): each draws a new region, the last the whole space."""
_OURS = ("budget", "init_samples", "seed")
"""`zoopt.Parameter` arguments the searcher sets itself (`seed` is its own)."""


class _ZOOptSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What `to_spec` records: the constructor's arguments as the searcher
    holds them after set-up (a point by label; the seed it uses)."""

    algo: str
    budget: int
    space: ParamSpace | None
    metric: str | None
    mode: str | None
    points_to_evaluate: list[JsonDict]
    parallel_num: int
    kwargs: JsonDict
    seed: int | None


class ZOOptSearch(SpaceSearcher):
    """ASRacos search with ZOOpt (`pip install 'tunecore[zoopt]'`), as Ray
    Tune's `ZOOptSearch`; see the module docstring."""

    _name = "ZOOptSearch"
    _searches = "search domains (tune.uniform, tune.randint, tune.choice, ...)"

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        algo: str = "asracos",
        budget: int | None = None,
        dim_dict: Mapping[str, object] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        parallel_num: int = 1,
        **kwargs: Any,
    ) -> None:
        require_package("ZOOptSearch", "zoopt", "zoopt")
        seed = kwargs.pop("seed", None)
        super().__init__(metric, mode, seed=seed, seed_given=seed is not None)
        if str(algo).lower() not in _ALGORITHMS:
            raise InvalidFieldError("ZOOptSearch.algo", algo, "'asracos' or 'sracos'")
        if not (is_int(budget) and budget > 0):
            raise InvalidFieldError(
                "ZOOptSearch.budget", budget, "a number of trials > 0 (TuneConfig's num_samples)"
            )
        check_integer("ZOOptSearch", "parallel_num", parallel_num, minimum=1)
        check_integer("ZOOptSearch", "seed", seed, optional=True)
        _check_kwargs(kwargs)
        self._algo = algo.lower()
        self._budget: int = budget
        self._parallel_num = parallel_num
        self._kwargs = kwargs
        self._given_points = check_points("ZOOptSearch", points_to_evaluate)
        self._dimensions: list[Dimension] = []
        self._initial_points: list[dict[Path, JsonValue]] = []
        self._native: dict[str, Any] | None = None  # a dim_dict of ZOOpt's tuples, as given
        self._optimizer: SRacosTune | None = None  # built at the first use
        self._random: GlobalRandom | None = None  # numpy's global state for ZOOpt
        self._precisions: list[int | None] = []  # ZOOpt's global precisions for its space
        self._initial_left = 0  # initial samples ZOOpt has yet to hand out
        self._live: dict[str, Solution] = {}  # trial id -> its solution
        if dim_dict:
            if not isinstance(dim_dict, Mapping):
                raise InvalidFieldError("ZOOptSearch.dim_dict", dim_dict, "a dict")
            if all(isinstance(entry, tuple) for entry in dim_dict.values()):
                self._native = dict(dim_dict)
                self._default_metric()
            else:
                self._take_space(searched_space("ZOOptSearch", dim_dict))

    # -- set-up ------------------------------------------------------------------

    def _has_space(self) -> bool:
        return self._space is not None or self._native is not None

    def _begun(self) -> bool:
        return self._optimizer is not None

    def _dimensions_of(self, space: ParamSpace) -> list[Dimension]:
        return dimensions(space)

    def _started(self) -> SRacosTune:
        """The optimizer (built at the first use, once the seed is known),
        with `points_to_evaluate` as its initial samples."""
        if self._optimizer is None:
            import zoopt  # noqa: PLC0415 - optional package
            from zoopt.algos.opt_algorithms.racos.sracos import (  # noqa: PLC0415
                SRacosTune,
            )

            self._random = GlobalRandom(self._seed_now())
            if self._native is not None:
                names = list(self._native)
                entries = list(self._native.values())
                xs = [tuple(point[name] for name in names) for point in self._given_points]
            else:
                entries = [d.entry for d in self._dimensions if d.entry is not None]
                xs = [solution_x(self._dimensions, point) for point in self._initial_points]
            samples = [zoopt.Solution(x=x) for x in xs] or None
            parameter = zoopt.Parameter(budget=self._budget, init_samples=samples, **self._kwargs)
            with self._zoopt_random():
                self._optimizer = SRacosTune(
                    dimension=zoopt.Dimension2(entries),  # sets the precisions
                    parameter=parameter,
                    parallel_num=self._parallel_num,
                )
            self._initial_left = parameter.get_train_size()
        return self._optimizer

    @contextlib.contextmanager
    def _zoopt_random(self) -> Iterator[None]:
        """numpy's global random state and ZOOpt's global precisions are
        this searcher's own while ZOOpt runs (ZOOpt keeps its space's
        precisions process-wide: another ZOOptSearch's space, built since,
        would make this one index past them, or round to its precisions)."""
        assert self._random is not None
        with self._random.lent(), _zoopt_precisions(self._precisions):
            yield

    # -- Ray's Searcher API ------------------------------------------------------------

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self._require_ready()
        optimizer = self._started()
        with self._zoopt_random():
            solution = self._new_solution(optimizer)
        if solution is None or isinstance(solution, str):
            return solution
        self._live[trial_id] = solution
        x = list(solution.get_x())
        if self._space is not None:
            return config_from(self._space, config_values(self._dimensions, x))
        assert self._native is not None
        return unflattened(dict(zip(self._native, x, strict=True)), "ZOOptSearch suggestion")

    def _new_solution(self, optimizer: SRacosTune) -> Solution | str | None:
        """ZOOpt's next point, asked again where it gives up early (the
        module docstring); None while it waits (for its initial samples,
        or for one of its `parallel_num` trials); `Searcher.FINISHED` once
        even its exploration finds no new point."""
        parameter = optimizer.get_parameters()
        exploitation = parameter.get_probability()
        for attempt in range(_ATTEMPTS):
            if attempt == _ATTEMPTS - 1:
                parameter.set_probability(0.0)  # explore: a point from the whole space
            try:
                solution = optimizer.suggest()
            finally:
                parameter.set_probability(exploitation)
            if isinstance(solution, zoopt_solution()):
                if self._initial_left > 0:
                    self._initial_left -= 1
                    if self._initial_left == 0:
                        optimizer.suggest()  # ZOOpt starts its wait for the initial samples
                return solution
            if solution is None and optimizer.live_num == len(self._live):
                return None
            if solution is None:  # it counted a trial it did not hand out
                optimizer.live_num -= 1
        return Searcher.FINISHED

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """A result tells ZOOpt its loss; an error, a trial that ended
        without a result or a NaN or infinite value tells it +inf."""
        solution = self._live.pop(trial_id, None)
        if solution is None:
            return
        number = None
        if result and not error:
            number = finite(metric_value("ZOOptSearch", self._metric, result))
        loss = float("inf") if number is None else (-number if self._mode == "max" else number)
        assert self._optimizer is not None
        with self._zoopt_random():
            self._optimizer.complete(solution, loss)

    # -- tunecore's additions ------------------------------------------------------------

    def to_spec(self) -> JsonDict | None:
        """None for a dim_dict of ZOOpt's tuples or kwargs that are not
        JSON: a restore then needs the searcher passed again, which it
        warns of once."""
        kwargs = json_kwargs(self._kwargs)
        if self._native is not None or kwargs is None:
            what = "a dim_dict of ZOOpt's tuples" if self._native else "kwargs that are not JSON"
            self._no_spec(what, "write the space with tunecore's domains")
            return None
        spec = _ZOOptSpec(
            algo=self._algo,
            budget=self._budget,
            space=self._space,
            metric=self._metric,
            mode=self._mode,
            points_to_evaluate=self._labelled_points(),
            parallel_num=self._parallel_num,
            kwargs=kwargs,
            seed=self._seed,
        )
        return encode_spec(spec)

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        decoded = decode_spec("ZOOptSearch", spec, _ZOOptSpec)
        return cls._rebuilt(
            decoded.space,
            algo=decoded.algo,
            budget=decoded.budget,
            metric=decoded.metric,
            mode=decoded.mode,
            points_to_evaluate=decoded.points_to_evaluate,
            parallel_num=decoded.parallel_num,
            seed=decoded.seed,
            **decoded.kwargs,
        )


@contextlib.contextmanager
def _zoopt_precisions(own: list[int | None]) -> Iterator[None]:
    """ZOOpt's global `float_precisions` are `own` inside (the list
    `Dimension2` fills in place when it is built), and what they were
    outside."""
    from zoopt.utils.zoo_global import gl  # noqa: PLC0415 - optional package

    outside = gl.float_precisions
    gl.float_precisions = own
    try:
        yield
    finally:
        own[:] = gl.float_precisions
        gl.float_precisions = outside


def zoopt_solution() -> type[Solution]:
    from zoopt import Solution  # noqa: PLC0415 - optional package

    return Solution


def _check_kwargs(kwargs: Mapping[str, Any]) -> None:
    """Each kwarg a `zoopt.Parameter` argument the searcher does not set."""
    import zoopt  # noqa: PLC0415 - optional package

    takes = set(inspect.signature(zoopt.Parameter).parameters) - set(_OURS)
    for name in kwargs:
        if name not in takes:
            raise InvalidFieldError(
                f"ZOOptSearch.{name}", kwargs[name], f"one of zoopt.Parameter's {sorted(takes)}"
            )


__all__ = ["ZOOptSearch"]
