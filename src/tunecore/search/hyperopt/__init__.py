"""Ray Tune's `HyperOptSearch`: Tree-structured Parzen Estimators with hyperopt.

The searcher behaves as Ray Tune's (`ray.tune.search.hyperopt`): it drives
`hyperopt.tpe.suggest` on a `Trials` object ask/tell style, serves
`points_to_evaluate` first (entered as trials up front, as Ray does), draws
`n_initial_points` configs at random before TPE models, and minimises (a
"max" metric is negated). Every tunecore domain has its hyperopt equivalent
(the table in `_hyperopt_space`); a `grid_search` or `sample_from` is
refused with an error naming its path (Ray refuses a grid too). Ray's other
form, a space of hyperopt's own `hp.*` expressions (conditional ones too),
is searched as given. Such a space made of hyperopt's own functions over
plain values is recorded as a graph of JSON nodes (`_hyperopt_graph`), so
`Tuner.restore` rebuilds the searcher from the log as Ray unpickles its
own; one holding code (a function of your own registered with
`scope.define`, an object among a choice's options) cannot be described
(`to_spec` is None) and `Tuner.restore` needs the searcher passed again. A
native space takes no points evaluated elsewhere.

Determinism and resume. TPE draws from the seed it is called with; the
seed of the n-th call is drawn from a numpy Generator seeded by
(`random_state_seed`, n), so the same suggestions and results in the same
order give the same run, in any process. Where the user gives no
`random_state_seed`, the experiment's seed is used (`use_seed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

import msgspec
import numpy as np

from tunecore.core.search.variants import ParamSpace
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.search._contract import (
    check_integer,
    check_points,
    decode_spec,
    encode_spec,
    metric_value,
    require_package,
)
from tunecore.search._hyperopt_graph import graph_nodes, graph_space
from tunecore.search._hyperopt_space import (
    Dimension,
    dimension,
    holds_expressions,
    native_vals,
)
from tunecore.search._space_searcher import SEED_BOUND, SpaceSearcher
from tunecore.search.spaces import (
    config_from,
    finite,
    label,
    plain_config,
    point_values,
    searched_space,
)

if TYPE_CHECKING:
    from hyperopt import Domain, Trials


class _HyperOptSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What `to_spec` records: the constructor's arguments as the searcher
    holds them after set-up (a point by label; the seed `use_seed` gave).
    A space of `hp.*` expressions is `native`, its graph's JSON nodes, and
    its points are recorded as given (by hyperopt label)."""

    space: ParamSpace | None
    metric: str | None
    mode: str | None
    points_to_evaluate: list[JsonDict]
    n_initial_points: int | None
    random_state_seed: int | None
    gamma: float | None
    native: list[JsonDict] | None = None


class HyperOptSearch(SpaceSearcher):
    """TPE search with hyperopt (`pip install 'tunecore[hyperopt]'`), as Ray
    Tune's `HyperOptSearch`; see the module docstring for the space."""

    _name = "HyperOptSearch"
    _searches = "search domains (tune.uniform, tune.choice, ...)"

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        space: Mapping[str, object] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        n_initial_points: int | None = 20,
        random_state_seed: int | None = None,
        gamma: float | None = 0.25,
    ) -> None:
        require_package("HyperOptSearch", "hyperopt", "hyperopt")
        super().__init__(
            metric, mode, seed=random_state_seed, seed_given=random_state_seed is not None
        )
        check_integer(
            "HyperOptSearch", "n_initial_points", n_initial_points, minimum=0, optional=True
        )
        check_integer("HyperOptSearch", "random_state_seed", random_state_seed, optional=True)
        if gamma is not None and not (finite(gamma) is not None and 0 < gamma <= 1):
            raise InvalidFieldError("HyperOptSearch.gamma", gamma, "a number in (0, 1], or None")
        self._n_initial_points = n_initial_points
        self._gamma = gamma
        self._given_points = check_points("HyperOptSearch", points_to_evaluate)
        self._dimensions: list[Dimension] = []
        self._initial_points: list[dict[Path, JsonValue]] = []
        self._native: dict[str, Any] | None = None  # a space of hp.* expressions, as given
        self._domain: Domain | None = None
        self._trials: Trials | None = None
        self._queued: list[dict[str, Any]] = []  # trial docs of points_to_evaluate, in order
        self._native_points: list[dict[str, Any]] = []  # hyperopt vals of native points
        self._live: dict[str, dict[str, Any]] = {}  # trial id -> its trial doc
        self._calls = 0  # calls of tpe.suggest so far: with the seed, the next call's seed
        if space:
            if not isinstance(space, Mapping):
                raise InvalidFieldError("HyperOptSearch.space", space, "a dict")
            if holds_expressions(space):
                self._take_native(dict(space))
            else:
                self._take_space(searched_space("HyperOptSearch", space))

    # -- set-up ------------------------------------------------------------------

    def _has_space(self) -> bool:
        return self._space is not None or self._native is not None

    def _begun(self) -> bool:
        return self._trials is not None

    def _dimensions_of(self, space: ParamSpace) -> list[Dimension]:
        return [dimension(parameter) for parameter in space.sampled]

    def _take_native(self, space: dict[str, Any]) -> None:
        """Ray's other form: a space of hyperopt's own expressions. Points
        to evaluate name hyperopt's labels, a choice by its value."""
        self._native = space
        self._initial_points = []
        for i, point in enumerate(self._given_points):
            if not isinstance(point, Mapping):
                raise InvalidFieldError(f"points_to_evaluate[{i}]", point, "a dict of labels")
            self._native_points.append(native_vals(f"points_to_evaluate[{i}]", space, point))
        self._default_metric()

    def _started(self) -> Trials:
        """The `Trials` (built at the first use, once the seed is known),
        holding `points_to_evaluate` as trials to run first."""
        if self._trials is None:
            import hyperopt  # noqa: PLC0415 - optional package

            self._seed_now()
            self._domain = hyperopt.Domain(lambda config: config, self._expressions())
            self._trials = hyperopt.Trials()
            points = self._native_points or [self._vals(p) for p in self._initial_points]
            self._queued = [self._inserted(vals) for vals in points]
        return self._trials

    def _expressions(self) -> dict[str, Any]:
        if self._native is not None:
            return self._native
        return {label(d.parameter.path): d.entry for d in self._dimensions}

    def _vals(self, values: Mapping[Path, JsonValue]) -> dict[str, Any]:
        """A point's values as hyperopt records them, by label."""
        return {
            label(d.parameter.path): d.encode(values[d.parameter.path]) for d in self._dimensions
        }

    # -- Ray's Searcher API ------------------------------------------------------------

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self._require_ready()
        trials = self._started()
        doc = self._queued.pop(0) if self._queued else self._asked(trials)
        self._live[trial_id] = doc
        vals = {name: given[0] for name, given in doc["misc"]["vals"].items() if given}
        if self._native is not None:
            import hyperopt  # noqa: PLC0415 - optional package

            try:
                evaluated = plain_config(hyperopt.space_eval(self._native, vals))
            except (AttributeError, TypeError, AssertionError) as error:  # a value is missing
                raise ValueError(
                    f"HyperOptSearch could not build a config from {vals}: a point in "
                    "points_to_evaluate must give every hyperopt label of the space that it "
                    "makes active"
                ) from error
            assert isinstance(evaluated, dict)
            return evaluated
        assert self._space is not None
        values = {
            d.parameter.path: d.decode(vals[label(d.parameter.path)]) for d in self._dimensions
        }
        return config_from(self._space, values)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """Ray's: an error marks the trial failed (TPE leaves it out), a
        result gives its loss; a trial that ended without one stays
        pending (TPE counts it as a loss of infinity)."""
        doc = self._live.pop(trial_id, None)
        if doc is None:
            return
        if error:
            self._finish(doc, None, error=True)
        elif result:
            self._finish(doc, metric_value("HyperOptSearch", self._metric, result), error=False)

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """A point evaluated elsewhere (a warm start, a trial added from
        outside), entered as a finished trial. Not with a space of hp.*
        expressions, whose labels a config does not name."""
        if self._native is not None:
            raise NotImplementedError("HyperOptSearch.add_evaluated_point with an hp.* space")
        if self._space is None:
            raise RuntimeError("HyperOptSearch.add_evaluated_point needs the search space first")
        self._started()
        values = point_values("HyperOptSearch", "parameters", self._space, parameters)
        self._finish(self._inserted(self._vals(values)), value, error=error or pruned)

    # -- tunecore's additions ------------------------------------------------------------

    def to_spec(self) -> JsonDict | None:
        """None for a space of hp.* expressions holding code (not JSON): a
        restore then needs the searcher passed again, which it warns of once."""
        native: list[JsonDict] | None = None
        points = self._labelled_points()
        if self._native is not None:
            described = self._native_description(self._native)
            if described is None:
                return None
            native, points = described
        spec = _HyperOptSpec(
            space=self._space,
            metric=self._metric,
            mode=self._mode,
            points_to_evaluate=points,
            n_initial_points=self._n_initial_points,
            random_state_seed=self._seed,
            gamma=self._gamma,
            native=native,
        )
        return encode_spec(spec)

    def _native_description(
        self, space: dict[str, Any]
    ) -> tuple[list[JsonDict], list[JsonDict]] | None:
        """A space of `hp.*` expressions as its graph's JSON nodes, with the
        points as given; None (warned of once) when either is not plain data."""
        nodes = graph_nodes(space)
        points: list[JsonDict] | None = None
        if nodes is not None:
            try:
                points = msgspec.json.decode(
                    msgspec.json.encode(self._given_points), type=list[JsonDict]
                )
            except (TypeError, msgspec.ValidationError):
                points = None
        if nodes is None or points is None or points != self._given_points:
            self._no_spec(
                "a space of hyperopt expressions holding code or objects",
                "write the space with plain values or tunecore's domains",
            )
            return None
        return nodes, points

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        decoded = decode_spec("HyperOptSearch", spec, _HyperOptSpec)
        searcher = cls._rebuilt(
            decoded.space,
            metric=decoded.metric,
            mode=decoded.mode,
            points_to_evaluate=decoded.points_to_evaluate,
            n_initial_points=decoded.n_initial_points,
            random_state_seed=decoded.random_state_seed,
            gamma=decoded.gamma,
        )
        if decoded.native is not None:  # as the constructor takes it
            searcher._take_native(graph_space(decoded.native))
        return searcher

    # -- trials ------------------------------------------------------------------------

    def _asked(self, trials: Trials) -> dict[str, Any]:
        """A new trial doc from TPE, seeded by (seed, number of calls)."""
        from hyperopt import tpe  # noqa: PLC0415 - optional package

        assert self._domain is not None
        assert self._seed is not None
        seed = int(np.random.default_rng([self._seed, self._calls]).integers(SEED_BOUND))
        self._calls += 1
        options: dict[str, Any] = {"verbose": False}
        if self._n_initial_points is not None:
            options["n_startup_jobs"] = self._n_initial_points
        if self._gamma is not None:
            options["gamma"] = self._gamma
        new_docs = tpe.suggest(trials.new_trial_ids(1), self._domain, trials, seed, **options)
        trials.insert_trial_docs(new_docs)
        trials.refresh()
        tid = new_docs[0]["tid"]
        return next(doc for doc in trials.trials if doc["tid"] == tid)

    def _inserted(self, vals: Mapping[str, Any]) -> dict[str, Any]:
        """A new trial doc holding `vals` (a point the user gave), by label."""
        assert self._trials is not None
        assert self._domain is not None
        trials = self._trials
        (tid,) = trials.new_trial_ids(1)
        misc = {
            "tid": tid,
            "cmd": self._domain.cmd,
            "workdir": self._domain.workdir,
            # Every label, as hyperopt's own docs have them: inactive ones empty.
            "idxs": {name: [tid] if name in vals else [] for name in self._domain.params},
            "vals": {name: [vals[name]] if name in vals else [] for name in self._domain.params},
        }
        docs = trials.new_trial_docs([tid], [None], [self._domain.new_result()], [misc])
        trials.insert_trial_docs(docs)
        trials.refresh()
        return next(doc for doc in trials.trials if doc["tid"] == tid)

    def _finish(self, doc: dict[str, Any], value: object, *, error: bool) -> None:
        """Mark a trial doc done with its loss, or failed. A NaN or infinite
        value is a failure to hyperopt (status 'fail': no loss)."""
        from hyperopt import base  # noqa: PLC0415 - optional package

        number = None if error else finite(value)
        if error:
            doc["state"] = base.JOB_STATE_ERROR
            doc["misc"]["error"] = ("TuneError", "the trial failed")
        elif number is None:
            doc["state"] = base.JOB_STATE_DONE
            doc["result"] = {"status": base.STATUS_FAIL}
        else:
            doc["state"] = base.JOB_STATE_DONE
            loss = -number if self._mode == "max" else number
            doc["result"] = {"loss": loss, "status": base.STATUS_OK}
        assert self._trials is not None
        self._trials.refresh()
