"""Ray Tune's `AxSearch`: Bayesian optimisation with Ax (on BoTorch).

The searcher behaves as Ray Tune's (`ray.tune.search.ax`): the space is
tunecore's domains (converted as `_ax_space` says), its own or the
Tuner's, or Ray's Ax space (a list of `{"name", "type": "range" |
"choice" | "fixed", ...}` dicts); `points_to_evaluate` come first;
`parameter_constraints` ("x1 + x2 <= 2.0") and `outcome_constraints`
("l2norm <= 1.25", each metric read from the trial's last result) go to
the Ax experiment. When Ax will not suggest more until trials end (its
initial Sobol trials are out, and its model waits for their data), the
searcher suggests nothing for now, as Ray's does.

Ray drives Ax's `AxClient`, which Ax 1.x deprecates (and 1.4 removes);
tunecore drives its successor, `ax.api.client.Client`, with Ray's
arguments. The differences that follow: `**ax_kwargs` may only be
`random_seed` (the others are `AxClient`'s); `ax_client=` is a `Client`
you configured (experiment and optimization), and then `metric` and
`mode` are given to AxSearch (a `Client` does not say its objective
publicly); a failed trial, or one with a NaN or infinite result, is marked
failed in Ax and a trial that ended without a result abandoned (Ray leaves
both running in Ax, which then waits for them).

Determinism and resume. Ax seeds its Sobol points from `random_seed`, and
BoTorch's model fitting draws from torch's and numpy's global generators:
tunecore seeds both from `random_seed` or else the experiment's seed
(`use_seed`), and lends Ax global states of its own around each call
(`_global_random`), so the same tells in the same order give the same
suggestions in any process. `to_spec` describes the searcher by its
arguments; with `ax_client=` it is None (with one warning) and
`Tuner.restore` needs the searcher passed again (`search_alg=`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Self

import msgspec

from tunecore.core.search.variants import ParamSpace
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.search._ax_space import Dimension, dimensions, native_entries, parameter_configs
from tunecore.search._contract import (
    check_integer,
    check_points,
    decode_spec,
    encode_spec,
    metric_value,
    require_package,
)
from tunecore.search._dimension import by_label, config_values
from tunecore.search._global_random import GlobalRandom
from tunecore.search._space_searcher import SpaceSearcher
from tunecore.search.spaces import (
    config_from,
    finite,
    point_values,
    unflattened,
)

_METRIC_NAME = re.compile(r"(?<![\w.])[A-Za-z_][\w.]*")


class _AxSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What `to_spec` records: the constructor's arguments as the searcher
    holds them after set-up (a point by label; the seed it uses)."""

    space: ParamSpace | None
    native_space: list[JsonDict] | None
    metric: str | None
    mode: str | None
    points_to_evaluate: list[JsonDict]
    parameter_constraints: list[str]
    outcome_constraints: list[str]
    seed: int | None


class AxSearch(SpaceSearcher):
    """Ax's Bayesian optimisation (`pip install 'tunecore[ax]'`), as Ray
    Tune's `AxSearch`; see the module docstring."""

    _name = "AxSearch"
    _searches = "search domains (tune.uniform, tune.loguniform, tune.randint, tune.choice, ...)"

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        space: Mapping[str, object] | list[dict[str, Any]] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        parameter_constraints: list[str] | None = None,
        outcome_constraints: list[str] | None = None,
        ax_client: Any = None,
        **ax_kwargs: Any,
    ) -> None:
        require_package("AxSearch", "ax", "ax")
        from ax.api.client import Client  # noqa: PLC0415 - optional package

        seed = ax_kwargs.pop("random_seed", None)
        super().__init__(metric, mode, seed=seed, seed_given=seed is not None)
        check_integer("AxSearch", "random_seed", seed, optional=True)
        for key, value in ax_kwargs.items():
            raise InvalidFieldError(
                f"AxSearch.{key}",
                value,
                "no other keyword argument than random_seed (tunecore drives Ax's Client, "
                "which takes no other of AxClient's arguments)",
            )
        self._given_points = check_points("AxSearch", points_to_evaluate)
        self._parameter_constraints = _strings("parameter_constraints", parameter_constraints)
        self._outcome_constraints = _strings("outcome_constraints", outcome_constraints)
        self._native: list[dict[str, Any]] | None = None  # Ray's Ax space, as given
        self._native_entries: list[dict[str, Any]] = []
        self._fixed: dict[str, JsonValue] = {}  # its fixed parameters
        self._client: Any = None  # Ax's Client, set up at the first use
        self._given_client = ax_client
        self._random: GlobalRandom | None = None
        self._queue: list[tuple[JsonDict, dict[str, Any]]] = []  # (config, parameters)
        self._live: dict[str, int] = {}  # trial id -> Ax's trial index
        if ax_client is not None:
            if not isinstance(ax_client, Client):
                raise InvalidFieldError(
                    "AxSearch.ax_client", ax_client, "an ax.api.client.Client, or None"
                )
            self._take_client(space)
        elif isinstance(space, list) and space:
            self._native = [dict(item) for item in space]
            self._native_entries, self._fixed = native_entries(space)
            self._default_metric()
        else:
            self._take_own_space(space, "a dict of search domains or a list of Ax parameters")

    def _take_client(self, space: object) -> None:
        """Ray's `ax_client=`: an Ax experiment the user set up, with none of
        the arguments that would set it up again."""
        if space or self._parameter_constraints or self._outcome_constraints:
            raise ValueError(
                "AxSearch: with ax_client=, configure the experiment on the Client and pass "
                "no space, parameter_constraints or outcome_constraints (as in Ray Tune)"
            )
        if not self._metric or not self._mode:
            raise InvalidFieldError(
                "AxSearch.metric",
                self._metric,
                "a metric and a mode beside ax_client= (the objective your Client optimises: "
                "Ax's Client does not say it publicly)",
            )

    # -- set-up ------------------------------------------------------------------

    def _has_space(self) -> bool:
        return any(x is not None for x in (self._space, self._native, self._given_client))

    def _begun(self) -> bool:
        return self._client is not None

    def _dimensions_of(self, space: ParamSpace) -> list[Dimension]:
        return dimensions(space)

    def _started(self) -> Any:
        """Ax's Client with the experiment set up (at the first use, once
        the seed is known), `points_to_evaluate` queued to attach first."""
        if self._client is None:
            from ax.api.client import Client  # noqa: PLC0415 - optional package

            self._random = GlobalRandom(self._seed_now(), torch=True)
            with self._random.lent():
                if self._given_client is not None:
                    self._client = self._given_client
                else:
                    client = Client(random_seed=self._seed)
                    entries = (
                        self._native_entries
                        if self._native is not None
                        else [d.entry for d in self._dimensions if d.entry is not None]
                    )
                    client.configure_experiment(
                        parameters=parameter_configs(entries),
                        parameter_constraints=self._parameter_constraints or None,
                    )
                    sign = "-" if self._mode == "min" else ""
                    client.configure_optimization(
                        objective=f"{sign}{self._metric}",
                        outcome_constraints=self._outcome_constraints or None,
                    )
                    self._client = client
            self._queue = self._points()
        return self._client

    def _points(self) -> list[tuple[JsonDict, dict[str, Any]]]:
        """`points_to_evaluate` as (config, Ax parameterization) pairs."""
        if self._space is not None:
            return [
                (config_from(self._space, values), by_label(self._dimensions, values))
                for values in self._initial_points
            ]
        return [(self._config(point), dict(point)) for point in self._given_points]

    def _config(self, parameters: Mapping[str, Any]) -> JsonDict:
        if self._space is not None:
            return config_from(self._space, config_values(self._dimensions, parameters))
        return unflattened({**self._fixed, **parameters}, "AxSearch suggestion")

    # -- Ray's Searcher API ------------------------------------------------------------

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self._require_ready()
        client = self._started()
        assert self._random is not None
        parameters: Mapping[str, Any]
        with self._random.lent():
            if self._queue:
                config, parameters = self._queue.pop(0)
                index = client.attach_trial(parameters)
            else:
                trials = _next_trial(client)
                if trials is None:
                    return None
                index, parameters = trials
                config = self._config(parameters)
        self._live[trial_id] = index
        return config

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """A result completes Ax's trial with the metric (and each outcome
        constraint's); an error or a NaN or infinite value fails it, an end
        without a result abandons it."""
        index = self._live.pop(trial_id, None)
        if index is None:
            return
        assert self._random is not None
        with self._random.lent():
            self._tell(index, None if error else result)

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """A point evaluated elsewhere (a warm start, a trial added from
        outside), attached to the Ax experiment with its value."""
        self._require_ready()
        client = self._started()
        if self._space is not None:
            values = point_values("AxSearch", "parameters", self._space, parameters)
            attached = by_label(self._dimensions, values)
        else:
            attached = {key: parameters[key] for key in parameters if key not in self._fixed}
        assert self._random is not None
        with self._random.lent():
            index = client.attach_trial(attached)
            result = None if error or pruned else {self._metric: value}
            self._tell(index, result, outcomes=False)

    def _tell(self, index: int, result: Mapping[str, Any] | None, outcomes: bool = True) -> None:
        client = self._client
        if result is None:
            client.mark_trial_failed(index)
            return
        if not result:
            client.mark_trial_abandoned(index)
            return
        names = [self._metric, *(_metric_names(self._outcome_constraints) if outcomes else [])]
        numbers = {name: finite(metric_value("AxSearch", name, result)) for name in names}
        if any(number is None for number in numbers.values()):
            client.mark_trial_failed(index)
            return
        client.complete_trial(index, raw_data=numbers)

    # -- tunecore's additions ------------------------------------------------------------

    def to_spec(self) -> JsonDict | None:
        """None with an `ax_client` (see the module docstring): a restore
        then needs the searcher passed again, which it warns of once."""
        if self._given_client is not None:
            self._no_spec("ax_client=", "build it from a space, metric and mode")
            return None
        spec = _AxSpec(
            space=self._space,
            native_space=self._native,
            metric=self._metric,
            mode=self._mode,
            points_to_evaluate=self._labelled_points()
            if self._space is not None
            else self._given_points,
            parameter_constraints=self._parameter_constraints,
            outcome_constraints=self._outcome_constraints,
            seed=self._seed,
        )
        return encode_spec(spec)

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        decoded = decode_spec("AxSearch", spec, _AxSpec)
        searcher = cls(
            space=decoded.native_space,
            metric=decoded.metric,
            mode=decoded.mode,
            points_to_evaluate=decoded.points_to_evaluate,
            parameter_constraints=decoded.parameter_constraints,
            outcome_constraints=decoded.outcome_constraints,
        )
        if decoded.space is not None:
            searcher._take_space(decoded.space)
        if decoded.seed is not None:
            searcher.use_seed(decoded.seed)
        return searcher


def _next_trial(client: Any) -> tuple[int, Mapping[str, Any]] | None:
    """Ax's next trial; None while it waits for running trials' data."""
    from ax.exceptions.core import DataRequiredError  # noqa: PLC0415 - optional package
    from ax.exceptions.generation_strategy import (  # noqa: PLC0415
        MaxParallelismReachedException,
    )

    try:
        trials = client.get_next_trials(max_trials=1)
    except (MaxParallelismReachedException, DataRequiredError):
        return None
    return next(iter(trials.items()), None)


def _strings(field: str, value: object) -> list[str]:
    """A list of constraint strings (None: none)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(x, str) for x in value):
        raise InvalidFieldError(f"AxSearch.{field}", value, "a list of strings, or None")
    return list(value)


def _metric_names(constraints: list[str]) -> list[str]:
    """The metrics outcome constraints name ("l2norm <= 1.25" -> l2norm)."""
    names: list[str] = []
    for constraint in constraints:
        names.extend(n for n in _METRIC_NAME.findall(constraint) if n not in names)
    return names


__all__ = ["AxSearch"]
