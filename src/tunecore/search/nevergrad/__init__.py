"""Ray Tune's `NevergradSearch`: derivative-free optimization with nevergrad.

The searcher behaves as Ray Tune's (`ray.tune.search.nevergrad`): an
`optimizer` is a nevergrad optimizer class or configured optimizer (built
with `optimizer_kwargs` on the space) or an optimizer instance (built by the
user, with `space` then None or a list of parameter names); tunecore also
takes its name in `ng.optimizers.registry` (`"OnePlusOne"`, `"NGOpt"`). The
space is tunecore's domains (converted as `_nevergrad_space` says), its own
or the Tuner's, or a nevergrad parametrization. `points_to_evaluate` come
first, in order; nevergrad minimises, so a "max" metric is negated. A
trial that failed, ended without a result or reported a NaN or infinite
value is not told (nevergrad would clip it to a huge loss with a warning;
a negated infinity would be its best loss ever).

Determinism and resume. nevergrad draws every random number from its
parametrization's `random_state`; the searcher seeds it with the
experiment's seed (`use_seed`; Ray's class takes no seed of its own), so the
same tells in the same order give the same suggestions in any process.
`to_spec` describes the searcher by the optimizer's registry name, its
kwargs, the space and the seed; an optimizer instance, a configured
optimizer not in the registry, kwargs that are not JSON or a nevergrad
parametrization are code, not data: `to_spec` is None (with one warning)
and `Tuner.restore` needs the searcher passed again (`search_alg=`).

nevergrad up to 1.0.3 imports `bayes_opt.UtilityFunction`, which
bayesian-optimization 2 and later (tunecore[bayesopt]) no longer have, and
its import guard catches only a missing package: tunecore imports nevergrad
with bayes_opt hidden then, which leaves out only nevergrad's own BO
optimizers.

Why one module of over 400 lines: `NevergradSearch` is one class, Ray's,
and the guard around nevergrad's import of bayes_opt belongs with the only
code that imports nevergrad; the space conversion already lives in
`_nevergrad_space`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import inspect
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Self

import msgspec
import numpy as np

from tunecore.core.search.variants import ParamSpace
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.search._contract import (
    check_points,
    decode_spec,
    encode_spec,
    json_kwargs,
    metric_value,
    require_package,
)
from tunecore.search._dimension import by_label, config_values
from tunecore.search._nevergrad_space import Dimension, dimensions, parametrization
from tunecore.search._space_searcher import SpaceSearcher
from tunecore.search.spaces import (
    config_from,
    finite,
    point_values,
    unflattened,
)

if TYPE_CHECKING:
    from nevergrad.optimization import Optimizer
    from nevergrad.p import Parameter


class _NevergradSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What `to_spec` records: the constructor's arguments as the searcher
    holds them after set-up (the optimizer by its registry name, a point by
    label, the seed `use_seed` gave)."""

    optimizer: str
    optimizer_kwargs: JsonDict
    space: ParamSpace | None
    metric: str | None
    mode: str | None
    points_to_evaluate: list[JsonDict]
    seed: int | None


class NevergradSearch(SpaceSearcher):
    """Derivative-free search with nevergrad (`pip install
    'tunecore[nevergrad]'`), as Ray Tune's `NevergradSearch`; see the module
    docstring."""

    _name = "NevergradSearch"
    _searches = "search domains (tune.uniform, tune.choice, ...)"

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        optimizer: object = None,
        optimizer_kwargs: Mapping[str, Any] | None = None,
        space: Mapping[str, object] | Parameter | list[str] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
    ) -> None:
        ng = _nevergrad()
        super().__init__(metric, mode, seed=None, seed_given=False)
        if optimizer_kwargs is not None and not isinstance(optimizer_kwargs, Mapping):
            raise InvalidFieldError(
                "NevergradSearch.optimizer_kwargs", optimizer_kwargs, "a dict, or None"
            )
        self._optimizer_kwargs = dict(optimizer_kwargs or {})
        self._given_points = check_points("NevergradSearch", points_to_evaluate)
        self._factory: Any = None  # an optimizer class or configured optimizer
        self._factory_name: str | None = None  # its name in nevergrad's registry
        self._instance: Optimizer | None = None  # an optimizer the user built
        self._names: list[str] | None = None  # with an instance: its parameters' names
        self._native: Parameter | None = None  # a nevergrad parametrization, as given
        self._dimensions: list[Dimension] = []
        self._initial_points: list[dict[Path, JsonValue]] = []
        self._optimizer: Optimizer | None = None  # built at the first use
        self._live: dict[str, Parameter] = {}  # trial id -> its candidate
        if isinstance(optimizer, str):
            optimizer = _registered(ng, optimizer)
        if isinstance(optimizer, ng.optimization.Optimizer):
            self._take_instance(optimizer, space)
            return
        if not (
            (inspect.isclass(optimizer) and issubclass(optimizer, ng.optimization.Optimizer))
            or isinstance(optimizer, ng.optimization.base.ConfiguredOptimizer)
        ):
            raise InvalidFieldError(
                "NevergradSearch.optimizer",
                optimizer,
                "a nevergrad optimizer class (ng.optimizers.NGOpt), configured optimizer "
                "(ng.optimizers.OnePlusOne), optimizer instance, or a name in "
                "ng.optimizers.registry",
            )
        self._factory = optimizer
        self._factory_name = next(
            (name for name, entry in ng.optimizers.registry.items() if entry is optimizer), None
        )
        if isinstance(space, ng.p.Parameter):
            self._native = space
            self._default_metric()
        else:
            self._take_own_space(
                space,
                "a dict of search domains or a nevergrad parametrization (a list of names "
                "goes with an optimizer instance)",
            )

    # -- set-up ------------------------------------------------------------------

    def _take_instance(self, optimizer: Optimizer, space: object) -> None:
        """Ray's first form: an optimizer the user built, with the names of
        its parameters (or None when its parametrization names them)."""
        if space is not None and not isinstance(space, list):
            raise ValueError(
                "NevergradSearch.space: with an optimizer instance, pass a list of parameter "
                f"names or None as space, not {space!r} (as in Ray Tune)"
            )
        if self._optimizer_kwargs:
            raise ValueError(
                "NevergradSearch.optimizer_kwargs: pass an optimizer class or configured "
                "optimizer to give kwargs, not an optimizer instance (as in Ray Tune)"
            )
        if space is not None and optimizer.dimension != len(space):
            raise InvalidFieldError(
                "NevergradSearch.space",
                space,
                f"{optimizer.dimension} parameter names, the optimizer's dimension",
            )
        self._instance = optimizer
        self._names = space
        self._default_metric()

    def _has_space(self) -> bool:
        return self._space is not None or self._native is not None or self._instance is not None

    def _begun(self) -> bool:
        return self._optimizer is not None

    def _dimensions_of(self, space: ParamSpace) -> list[Dimension]:
        return dimensions(space)

    def _started(self) -> Optimizer:
        """The optimizer (built at the first use, once the seed is known),
        holding `points_to_evaluate` to serve first."""
        if self._optimizer is None:
            random_state = np.random.RandomState(self._seed_now())
            if self._instance is not None:
                optimizer = self._instance
                if optimizer.num_ask == 0:
                    optimizer.parametrization.random_state = random_state
            else:
                space = (
                    self._native.copy()
                    if self._native is not None
                    else parametrization(self._dimensions)
                )
                space.random_state = random_state
                optimizer = self._factory(space, **self._optimizer_kwargs)
            points: list[Any] = (
                [by_label(self._dimensions, p) for p in self._initial_points]
                if self._space is not None
                else self._given_points
            )
            for point in reversed(points):  # nevergrad serves the last suggested first
                optimizer.suggest(point)
            self._optimizer = optimizer
        return self._optimizer

    # -- Ray's Searcher API ------------------------------------------------------------

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self._require_ready()
        candidate = self._started().ask()
        self._live[trial_id] = candidate
        if self._space is not None:
            return config_from(self._space, config_values(self._dimensions, candidate.value))
        if candidate.kwargs:  # an ng.p.Instrumentation of keyword arguments
            value: object = candidate.kwargs
        elif self._names is not None:
            value = dict(zip(self._names, candidate.args[0], strict=True))
        else:
            value = candidate.value
        if not isinstance(value, Mapping):
            raise ValueError(
                f"NevergradSearch: the parametrization's value {value!r} is not a dict of "
                "parameters: use ng.p.Dict or ng.p.Instrumentation(**parameters), or with an "
                "optimizer instance pass space= a list of parameter names"
            )
        return unflattened(value, "NevergradSearch suggestion")

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """Ray's: a result tells the optimizer its loss; an error, a trial
        that ended without a result, or a NaN or infinite value tells it
        nothing."""
        candidate = self._live.pop(trial_id, None)
        if candidate is None or error or not result:
            return
        self._tell(candidate, metric_value("NevergradSearch", self._metric, result))

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """A point evaluated elsewhere (a warm start, a trial added from
        outside), told as a candidate nevergrad did not ask for. Only with
        a space of tunecore's domains, and an optimizer that takes such
        points."""
        if self._space is None:
            raise NotImplementedError(
                "NevergradSearch.add_evaluated_point needs a space of tunecore's domains"
            )
        optimizer = self._started()
        if error or pruned:
            return
        values = point_values("NevergradSearch", "parameters", self._space, parameters)
        child = optimizer.parametrization.spawn_child(new_value=by_label(self._dimensions, values))
        ng = _nevergrad()
        try:
            self._tell(child, value)
        except ng.errors.TellNotAskedNotSupportedError as refused:
            raise NotImplementedError(
                f"NevergradSearch: the optimizer {self._factory_name or self._factory!r} takes "
                "no points it did not suggest (warm starts, added trials)"
            ) from refused

    def _tell(self, candidate: Parameter, value: object) -> None:
        number = finite(value)
        if number is None:
            return
        assert self._optimizer is not None
        self._optimizer.tell(candidate, -number if self._mode == "max" else number)

    # -- tunecore's additions ------------------------------------------------------------

    def to_spec(self) -> JsonDict | None:
        """None for what is code, not data (see the module docstring): a
        restore then needs the searcher passed again, which it warns of once."""
        kwargs = json_kwargs(self._optimizer_kwargs)
        unnamed = self._instance is not None or self._factory_name is None
        if unnamed or self._native is not None or kwargs is None:
            what = (
                "an optimizer instance"
                if self._instance is not None
                else "a nevergrad parametrization"
                if self._native is not None
                else f"the optimizer {self._factory!r}, which ng.optimizers.registry does not name"
                if self._factory_name is None
                else "optimizer_kwargs that are not JSON"
            )
            self._no_spec(
                what,
                "build it from an optimizer name in ng.optimizers.registry, JSON kwargs and "
                "tunecore's domains",
            )
            return None
        assert self._factory_name is not None
        spec = _NevergradSpec(
            optimizer=self._factory_name,
            optimizer_kwargs=kwargs,
            space=self._space,
            metric=self._metric,
            mode=self._mode,
            points_to_evaluate=self._labelled_points(),
            seed=self._seed,
        )
        return encode_spec(spec)

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        decoded = decode_spec("NevergradSearch", spec, _NevergradSpec)
        searcher = cls._rebuilt(
            decoded.space,
            optimizer=decoded.optimizer,
            optimizer_kwargs=decoded.optimizer_kwargs,
            metric=decoded.metric,
            mode=decoded.mode,
            points_to_evaluate=decoded.points_to_evaluate,
        )
        if decoded.seed is not None:
            searcher.use_seed(decoded.seed)
        return searcher


def _registered(ng: Any, name: str) -> Any:
    """The optimizer nevergrad's registry names `name`."""
    registry: Mapping[str, Any] = ng.optimizers.registry
    if name not in registry:
        raise InvalidFieldError(
            "NevergradSearch.optimizer",
            name,
            "a name in ng.optimizers.registry (such as 'OnePlusOne', 'NGOpt', 'CMA', 'PSO')",
        )
    return registry[name]


def _nevergrad() -> Any:
    """The nevergrad module; missing, an ImportError naming the extra."""
    with _without_incompatible_bayes_opt():
        require_package("NevergradSearch", "nevergrad", "nevergrad")
    return sys.modules["nevergrad"]


@contextlib.contextmanager
def _without_incompatible_bayes_opt() -> Iterator[None]:
    """bayes_opt hidden while nevergrad is imported, if it is a version
    nevergrad's import breaks on (the module docstring says why)."""
    if "nevergrad" in sys.modules or not _bayes_opt_from_2_on():
        yield
        return
    hidden = sys.modules.get("bayes_opt")
    # None in sys.modules: `import bayes_opt` raises ModuleNotFoundError.
    sys.modules["bayes_opt"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if hidden is None:
            del sys.modules["bayes_opt"]
        else:
            sys.modules["bayes_opt"] = hidden


def _bayes_opt_from_2_on() -> bool:
    try:
        version = importlib.metadata.version("bayesian-optimization")
    except importlib.metadata.PackageNotFoundError:
        return False
    major = version.split(".", 1)[0]
    return major.isdigit() and int(major) >= 2


__all__ = ["NevergradSearch"]


# Imported now, if installed: a script that imports nevergrad itself after
# this module (as Ray's example does, `import nevergrad as ng`) finds it
# imported past its break on bayesian-optimization 2 and later.
with _without_incompatible_bayes_opt(), contextlib.suppress(ImportError):
    importlib.import_module("nevergrad")
