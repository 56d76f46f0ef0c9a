"""BOHB's searcher, `TuneBOHB`, as Ray Tune wraps hpbandster's.

BOHB (Falkner et al. 2018) suggests configs from a TPE-style model: for
the largest budget with enough results, a kernel density of the best 15%
of configs over one of the rest, a third of the configs drawn at random.
The model is hpbandster's config generator
(`hpbandster.optimizers.config_generators.bohb.BOHB`, over a ConfigSpace
space), as in Ray; it pairs with the scheduler `HyperBandForBOHB`
(`tunecore.core.schedulers.hb_bohb`), which runs the brackets.

What tunecore needs on top of Ray's class (see `tunecore.search.searcher`):

- Determinism. hpbandster draws from numpy's *global* generator and the
  ConfigSpace's own. Every draw is bracketed: the global state is saved,
  both generators are seeded from (seed, number of draws so far), and the
  global state is restored after. So the same calls in the same order give
  the same configs in any process, and the user's own numpy draws are left
  alone.
- A spec (`to_spec`/`from_spec`): the space (tunecore domains as data, or a
  ConfigSpace in its own JSON form), the objective, `bohb_config`,
  `points_to_evaluate`, the seed. Results are not in it: a restore replays
  them from the log.

How BOHB hears budgets. Ray's `HyperBandForBOHB` writes the milestone into
the result (`hyperband_info.budget`) and TuneBOHB tells the model the
result at that budget. tunecore's scheduler leaves results alone, so here
every result is told at the budget its time attribute holds
(`time_attr`, "training_iteration" as in Ray's scheduler): the model gets
the results at the milestones, as in Ray, and those in between too. The
model only ever uses its largest budget with enough results, and the
paused-at-milestone results are among them.

Space conversion: `tunecore.search._bohb_space`.

Deviations from Ray (python/ray/tune/search/bohb/bohb_search.py):

- Pauses reach `on_pause`/`on_unpause` from the core (the step tells the
  searcher when a trial's status goes to or from PAUSED), not from the
  scheduler: a paused trial does not count against `max_concurrent`, nor
  against a `ConcurrencyLimiter` around it, as in Ray.
- `time_attr` (a keyword tunecore adds) names the budget; Ray reads the
  scheduler's note in the result instead.
- A missing package raises ImportError naming the extra (Ray asserts);
  unknown `bohb_config` keys are an error (hpbandster ignores them).

Why one module of over 400 lines: `TuneBOHB` is one class, Ray's, whose
determinism bracket, spec and budget bookkeeping all work on the same
model state; the space conversion already lives in `_bohb_space`.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Self

from tunecore.core.results import DEFAULT_METRIC
from tunecore.core.search.domains import copy_json, plain_json
from tunecore.core.search.variants import ParamSpace, as_param_space
from tunecore.model import InvalidFieldError, JsonDict
from tunecore.search._bohb_space import Axis, axes_of_configspace, axis_of, value_at
from tunecore.search.messages import UNDEFINED_METRIC_MODE
from tunecore.search.searcher import Searcher
from tunecore.search.spaces import (
    config_from,
    finite,
    plain_number,
    point_values,
    searched_space,
    space_from_json,
    space_to_json,
)

_NAME = "TuneBOHB"
_MISSING = "TuneBOHB needs hpbandster and ConfigSpace: pip install 'tunecore[bohb]'"
_BOHB_KEYS = frozenset(
    {
        "min_points_in_model",
        "top_n_percent",
        "num_samples",
        "random_fraction",
        "bandwidth_factor",
        "min_bandwidth",
    }
)


def _packages() -> tuple[ModuleType, ModuleType, ModuleType]:
    """numpy, ConfigSpace and hpbandster's BOHB module, or the error
    naming the extra."""
    try:
        import ConfigSpace  # noqa: PLC0415 - optional extra
        import numpy  # noqa: PLC0415
        from hpbandster.optimizers.config_generators import bohb  # noqa: PLC0415
    except ImportError as error:
        raise ImportError(_MISSING) from error
    return numpy, ConfigSpace, bohb


class _Job:
    """What hpbandster's `new_result` reads of a finished run."""

    def __init__(self, loss: float, budget: float, config: Mapping[str, Any]) -> None:
        self.result = {"loss": loss}
        self.kwargs = {"budget": budget, "config": dict(config)}
        self.exception = None


class TuneBOHB(Searcher):
    """Ray Tune's TuneBOHB: pair it with `HyperBandForBOHB`. Arguments as
    in Ray: `space` a ConfigSpace `ConfigurationSpace` or a dict of tunecore
    domains (None: the Tuner's param space), `bohb_config` keyword arguments
    of hpbandster's BOHB, `metric`/`mode`, `points_to_evaluate` (configs to
    run first), `seed`, `max_concurrent` (0: no limit). tunecore adds
    `time_attr`, the result key holding the budget."""

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        space: Mapping[str, object] | Any | None = None,
        bohb_config: Mapping[str, Any] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        seed: int | None = None,
        max_concurrent: int = 0,
        *,
        time_attr: str = "training_iteration",
    ) -> None:
        _packages()
        super().__init__(metric=metric, mode=mode)
        if metric is not None and not isinstance(metric, str):
            raise InvalidFieldError(f"{_NAME}.metric", metric, "one metric name (BOHB has one)")
        self._bohb_config = _checked_bohb_config(bohb_config)
        points: object = points_to_evaluate
        if points is not None and not isinstance(points, list | tuple):
            raise InvalidFieldError(f"{_NAME}.points_to_evaluate", points, "a list of configs")
        self._points = [_plain_point(i, p) for i, p in enumerate(points_to_evaluate or ())]
        given_seed: object = seed
        if given_seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise InvalidFieldError(f"{_NAME}.seed", seed, "an integer or None")
        self._seed = seed
        self.set_max_concurrency(max_concurrent)
        attr: object = time_attr
        if not isinstance(attr, str) or not attr:
            raise InvalidFieldError(f"{_NAME}.time_attr", time_attr, "a result key")
        self._time_attr = time_attr
        self._space_data: JsonDict | None = None
        self._configspace: Any = None
        self._parsed: ParamSpace | None = None
        self._axes: tuple[Axis, ...] | None = None
        self._generator: Any = None
        self._pending: list[dict[str, Any]] = []
        self._calls = 0
        self.trial_to_params: dict[str, dict[str, Any]] = {}
        self._live: dict[str, None] = {}
        self._paused: set[str] = set()
        if space is not None and (not isinstance(space, Mapping) or space):
            self._take_space(space)

    # -- Ray's Searcher API -------------------------------------------------------

    def set_max_concurrency(self, max_concurrent: int) -> bool:
        given: object = max_concurrent
        if not isinstance(given, int) or isinstance(given, bool):
            raise InvalidFieldError(f"{_NAME}.max_concurrent", max_concurrent, "an integer")
        self._max_concurrent = max_concurrent
        return True

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        """The Tuner's param space, unless this searcher has a space; its
        metric and mode replace this searcher's, as in Ray."""
        if self._axes is not None:
            return False
        if mode is not None and mode not in ("min", "max"):
            raise InvalidFieldError(f"{_NAME}.mode", mode, "'min' or 'max'")
        if metric:
            self._metric = metric
        if mode:
            self._mode = mode
        self._take_space(config)
        return True

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        axes = self._ready()
        if 0 < self._max_concurrent <= len(self._live) - len(self._paused):
            return None
        point = self._pending.pop(0) if self._pending else self._draw()
        self.trial_to_params[trial_id] = point
        self._live[trial_id] = None
        return self._config(axes, point)

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        """Tell the model the result at the budget its time attribute
        holds (see the module docstring)."""
        point = self.trial_to_params.get(trial_id)
        budget = finite(result.get(self._time_attr))
        value = finite(result.get(self._metric))
        if point is None or budget is None or value is None:
            return
        job = _Job(value if self._mode == "min" else -value, budget, point)
        with self._seeded():
            self._model().new_result(job)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.trial_to_params.pop(trial_id, None)
        self._live.pop(trial_id, None)
        self._paused.discard(trial_id)

    def on_pause(self, trial_id: str) -> None:
        """Ray's hook from HyperBandForBOHB: a paused trial does not count
        against `max_concurrent` until it is resumed."""
        if trial_id in self._live:
            self._paused.add(trial_id)

    def on_unpause(self, trial_id: str) -> None:
        self._paused.discard(trial_id)

    # -- tunecore's additions -----------------------------------------------------

    def use_seed(self, seed: int) -> None:
        if self._seed is None:
            self._seed = seed

    def to_spec(self) -> JsonDict | None:
        return {
            "space": self._space_data,
            "bohb_config": copy_json(self._bohb_config),
            "metric": self._metric,
            "mode": self._mode,
            "points_to_evaluate": copy_json(list(self._points)),
            "seed": self._seed,
            "max_concurrent": self._max_concurrent,
            "time_attr": self._time_attr,
        }

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        given: Any = spec  # checked by the constructor, as a user's arguments are
        space: Any = None
        data = given.get("space")
        if isinstance(data, dict) and "configspace" in data:
            _, configspace, _ = _packages()
            space = configspace.ConfigurationSpace.from_serialized_dict(data["configspace"])
        elif isinstance(data, dict):
            space = as_param_space(space_from_json(data["tunecore"]))
        return cls(
            space=space,
            bohb_config=given.get("bohb_config"),
            metric=given.get("metric"),
            mode=given.get("mode"),
            points_to_evaluate=given.get("points_to_evaluate"),
            seed=given.get("seed"),
            max_concurrent=given.get("max_concurrent", 0),
            time_attr=given.get("time_attr", "training_iteration"),
        )

    # -- internals ----------------------------------------------------------------

    def _take_space(self, space: Mapping[str, object] | Any) -> None:
        """Convert the space, check `points_to_evaluate` against it, and
        keep its description for `to_spec`."""
        _, configspace, _ = _packages()
        if isinstance(space, configspace.ConfigurationSpace):
            axes = axes_of_configspace(space)
            self._configspace = space
            self._space_data = {"configspace": space.to_serialized_dict()}
        elif isinstance(space, Mapping):
            parsed = searched_space(_NAME, space)
            axes = tuple(axis_of(p.path, p.domain, configspace) for p in parsed.sampled)
            built = configspace.ConfigurationSpace()
            for axis in axes:
                if axis.hyperparameter is not None:
                    built.add(axis.hyperparameter)
            self._configspace = built
            self._parsed = parsed
            self._space_data = {"tunecore": space_to_json(parsed)}
        else:
            raise InvalidFieldError(
                f"{_NAME}.space", space, "a ConfigSpace ConfigurationSpace or a dict of domains"
            )
        self._axes = axes
        self._pending = [self._point(i, point) for i, point in enumerate(self._points)]
        for index, point in enumerate(self._pending):
            try:
                configspace.Configuration(self._configspace, values=point)
            except (ValueError, TypeError, KeyError) as error:
                raise InvalidFieldError(
                    f"{_NAME}.points_to_evaluate[{index}]", self._points[index], str(error)
                ) from None

    def _point(self, index: int, point: JsonDict) -> dict[str, Any]:
        """A config of `points_to_evaluate` (nested, or keyed by the
        '/'-joined names as in Ray) as ConfigSpace values by name."""
        assert self._axes is not None
        if self._parsed is None:  # a user's ConfigSpace checks the values itself
            found = {axis.name: value_at(point, axis) for axis in self._axes}
            return {name: value for name, value in found.items() if value is not None}
        where = f"{_NAME}.points_to_evaluate[{index}]"
        values = point_values(_NAME, where, self._parsed, point)
        return {
            axis.name: axis.to_space(values[axis.path])
            for axis in self._axes
            if axis.hyperparameter is not None
        }

    def _config(self, axes: Sequence[Axis], point: Mapping[str, Any]) -> dict[str, Any]:
        """The config for a point of ConfigSpace values: in the param
        space's skeleton (constants included), or, for a user's ConfigSpace,
        nested at the '/' in the names (inactive values left out)."""
        values = {
            axis.path: axis.to_config(point.get(axis.name))
            for axis in axes
            if axis.name in point or axis.hyperparameter is None
        }
        if self._parsed is not None:
            return config_from(self._parsed, values)
        config: dict[str, Any] = {}
        for path, value in values.items():
            place = config
            for part in path[:-1]:
                place = place.setdefault(str(part), {})
            place[str(path[-1])] = value
        return config

    def _ready(self) -> tuple[Axis, ...]:
        if self._axes is None:
            raise RuntimeError(
                f"{_NAME} has no search space: pass space= or a param_space to the Tuner"
            )
        if self._mode is None:
            # Ray's error, also when only the run was given them: a TuneBOHB
            # built with its own space is offered neither (`set_search_properties`).
            raise RuntimeError(
                UNDEFINED_METRIC_MODE.format(cls=_NAME, metric=self._metric, mode=self._mode)
            )
        if self._metric is None:
            self._metric = DEFAULT_METRIC
        return self._axes

    def _model(self) -> Any:
        if self._generator is None:
            _, _, bohb = _packages()
            with _quiet():
                self._generator = bohb.BOHB(configspace=self._configspace, **self._bohb_config)
        return self._generator

    def _draw(self) -> dict[str, Any]:
        """The model's next config, by ConfigSpace name."""
        with self._seeded():
            drawn, _ = self._model().get_config(None)
        return dict(drawn)

    @contextmanager
    def _seeded(self) -> Iterator[None]:
        """Run a model call with numpy's global generator and the
        ConfigSpace's seeded from (seed, calls so far), the global state
        restored after: hpbandster (and statsmodels under it) draw from
        them."""
        numpy, _, _ = _packages()
        if self._seed is None:  # not seeded by the user nor the experiment
            self._seed = random.SystemRandom().randrange(2**32)
        words = numpy.random.SeedSequence([self._seed % 2**64, self._calls]).generate_state(2)
        saved = numpy.random.get_state()
        try:
            numpy.random.seed(int(words[0]))
            self._configspace.seed(int(words[1]))
            # statsmodels divides by zero for a category only one level of
            # which the data hold so far; the kernel still works.
            with _quiet(), numpy.errstate(divide="ignore", invalid="ignore"):
                yield
        finally:
            numpy.random.set_state(saved)
            self._calls += 1


def _plain_point(index: int, point: object) -> JsonDict:
    where = f"{_NAME}.points_to_evaluate[{index}]"
    if not isinstance(point, Mapping):
        raise InvalidFieldError(where, point, "a config (a dict)")
    plain = plain_json(where, {str(k): plain_number(v) for k, v in point.items()})
    assert isinstance(plain, dict)
    return plain


def _checked_bohb_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise InvalidFieldError(f"{_NAME}.bohb_config", config, "a dict of BOHB's arguments")
    for key, value in config.items():
        if key not in _BOHB_KEYS:
            raise InvalidFieldError(
                f"{_NAME}.bohb_config[{key!r}]", value, f"one of {', '.join(sorted(_BOHB_KEYS))}"
            )
        if value is not None and finite(value) is None:
            raise InvalidFieldError(f"{_NAME}.bohb_config[{key!r}]", value, "a number")
    return dict(config)


@contextmanager
def _quiet() -> Iterator[None]:
    """hpbandster calls ConfigSpace 1.x's deprecated `get_dictionary`, and
    statsmodels warns of its future default generator (BOHB's kernel
    densities draw nothing from it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        yield


BOHB = TuneBOHB
"""Ray's other name for `TuneBOHB` (`ray.tune.search.bohb.BOHB`)."""
