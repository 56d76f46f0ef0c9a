"""Ray Tune's `OptunaSearch`: an Optuna study behind the imperative `Searcher` API.

Use it as in Ray Tune (`pip install 'tunecore[optuna]'`)::

    from tunecore.search.optuna import OptunaSearch

    tuner = tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(search_alg=OptunaSearch(), metric="loss", mode="min"),
        param_space={"lr": tune.loguniform(1e-4, 1e-1), "act": tune.choice(["relu", "tanh"])},
    )

`space` is a dict of tunecore domains (converted: `_optuna_space`), a dict
of `optuna.distributions`, or a define-by-run function `f(trial)` that
calls `trial.suggest_*` and returns None or a dict of constants; without
one, the Tuner's `param_space` is taken. Lists for `metric` and `mode`
optimise several objectives (the default TPE sampler is Optuna's
multi-objective TPE; pass `sampler=optuna.samplers.NSGAIISampler()` for
NSGA-II). `points_to_evaluate` are enqueued; with `evaluated_rewards` they
are told as finished trials instead.

How tunecore runs it: the object lives in the shell, which tells it results
and asks it for configs in the order the event log fixes; each answer is
logged (`tunecore.search.searcher`). A resume rebuilds the searcher and
re-asks in log order, which gives exactly the suggestions an uninterrupted
run makes when the sampler is seeded: rebuilding by `add_trial` alone is
not exact, because a sampler's random state advances on every ask
(docs/search-plan.md, section 1). So:

- `seed`, or the experiment's seed through `use_seed` when the user gave
  none, seeds the default `TPESampler`. A sampler the user builds is used
  as built, as in Ray: seed it (`TPESampler(seed=...)`) for runs that repeat.
- `to_spec()` describes the space, objective, points and seed as JSON, from
  which `from_spec` rebuilds the searcher (`Tuner.restore` without
  `search_alg=`). It is None, with one warning that a restore needs
  `search_alg=` again, for a sampler the user built (Optuna has no public
  API that gives back a sampler's constructor arguments, and tunecore reads
  no private attributes) or a define-by-run function that cannot be
  imported by name (a lambda, or one defined in `__main__`).

Constraints: a sampler built with `constraints_func` (TPE, NSGA-II, GP)
reads the trial's `user_attrs`; with a sampler the user built (or a
define-by-run function, which sees the study), every value of a trial's
last result is set there under its result key before the trial is told,
so `constraints_func=lambda t: [t.user_attrs["memory_gb"] - 8]` sees what
the trainable reported. Otherwise no code of the user's sees the study
and the default `TPESampler` reads no `user_attrs`, so they stay empty:
they cost a `set_user_attr` per result key, and `study.tell` deep-copies
them (a tenth of a millisecond a trial, which tunecore would add to every
trial of a plain `OptunaSearch()`).

Not supported: an Optuna `storage` (the event log is the study's record)
and the modes 'obs'.

Why one module of over 400 lines: `OptunaSearch` is one class with Ray
Tune's whole surface (three kinds of space, several objectives, points to
evaluate with or without rewards, intermediate results,
`add_evaluated_point`, its spec for a resume), each method reading and
changing the same state (the space, the study, the trials by id); the jobs
that stand alone are their own modules: the space conversion
(`_optuna_space`), the spec (`_optuna_spec`) and the argument checks
(`_optuna_args`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self

from tunecore.core.results import DEFAULT_METRIC, TRAINING_ITERATION
from tunecore.core.search.built import is_domain
from tunecore.core.search.variants import ParamSpace, parse_space
from tunecore.model import InvalidFieldError, JsonDict
from tunecore.model.numbers import is_int, is_number
from tunecore.search._contract import check_integer, encode_spec
from tunecore.search._optuna_args import as_values, check_modes, checked_points, checked_rewards
from tunecore.search.searcher import Searcher

try:  # the package is optional: OptunaSearch() says how to install it
    import optuna
    from optuna.samplers import BaseSampler
    from optuna.study import Study
    from optuna.trial import FixedTrial, Trial, TrialState, create_trial

    from tunecore.search._optuna_space import (
        OptunaParam,
        Recorder,
        config_of,
        constant_paths,
        flat_names,
        flat_point,
        from_distributions,
        from_domains,
        is_constants,
        to_plain,
    )
    from tunecore.search._optuna_spec import (
        SPEC_VERSION,
        OptunaSpec,
        constructor_space,
        describe_space,
        read_spec,
    )
    from tunecore.search.spaces import unflattened
except ImportError:
    HAS_OPTUNA = False
else:
    HAS_OPTUNA = True


def _require_optuna() -> None:
    if not HAS_OPTUNA:
        raise ImportError("OptunaSearch needs optuna: pip install 'tunecore[optuna]'")


class OptunaSearch(Searcher):
    """Ray Tune's `OptunaSearch`, constructor and behaviour; see the module
    docstring for what tunecore adds (exact resume) and leaves out."""

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        space: Mapping[str, Any] | Callable[[Any], dict[str, Any] | None] | None = None,
        metric: str | list[str] | None = None,
        mode: str | list[str] | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        sampler: BaseSampler | None = None,
        study_name: str | None = None,
        storage: object = None,
        seed: int | None = None,
        evaluated_rewards: list[Any] | None = None,
    ) -> None:
        _require_optuna()
        super().__init__(metric=metric, mode=mode)
        check_modes(mode)
        if storage is not None:
            raise InvalidFieldError(
                "OptunaSearch.storage",
                storage,
                "None: tunecore's event log is the study's record (a resume rebuilds the study "
                "from it), so an Optuna storage is not supported",
            )
        if sampler is not None and not isinstance(sampler, BaseSampler):
            raise InvalidFieldError(
                "OptunaSearch.sampler", sampler, "an instance of optuna.samplers.BaseSampler"
            )
        check_integer("OptunaSearch", "seed", seed, optional=True)
        if sampler is not None and seed is not None:
            warnings.warn(
                "OptunaSearch: you passed a sampler and a seed; the seed is ignored "
                "(seed the sampler itself: TPESampler(seed=...)), as in Ray Tune",
                stacklevel=2,
            )
            seed = None
        self._sampler = sampler
        self._seed = seed
        self._study_name = study_name or "optuna"
        self._points: list[JsonDict] = checked_points(points_to_evaluate)
        self._rewards = checked_rewards(evaluated_rewards, len(self._points))
        self._params: tuple[OptunaParam, ...] | None = None
        self._param_space: ParamSpace | None = None
        self._define_by_run: Callable[[Any], dict[str, Any] | None] | None = None
        self._own_space = False
        self._study: Study | None = None
        self._trials: dict[str, Trial] = {}
        self._completed: set[str] = set()
        self._reported: dict[str, set[object]] = {}
        self._warned: set[str] = set()
        if callable(space):
            self._define_by_run = space
            self._own_space = True
        elif isinstance(space, Mapping) and space:
            self._take_space(space, "OptunaSearch.space")
            self._own_space = True
        elif space is not None and not isinstance(space, Mapping):
            raise InvalidFieldError(
                "OptunaSearch.space",
                space,
                "a dict of search domains or optuna distributions, or a define-by-run function",
            )
        if self._own_space:
            self._default_metric()
        self._check_points()

    # -- Ray's Searcher API -----------------------------------------------------------------------

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        """Take the Tuner's param space, metric and mode; False when it has a
        space of its own (Ray's contract) or has already suggested."""
        if self._own_space or self._study is not None:
            return False
        check_modes(mode)
        if self._metric is None and metric:
            self._metric = metric
        if self._mode is None and mode:
            self._mode = mode
        self._take_space(config, "param_space")
        self._check_points()
        self._default_metric()
        return True

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        study = self._ensure_study()
        trial = self._trials.get(trial_id)
        if self._define_by_run is not None:
            if trial is None:
                trial = self._trials[trial_id] = study.ask()
            return self._run_define_by_run(trial)
        assert self._params is not None
        if trial is None:
            distributions = {param.name: param.distribution for param in self._params}
            trial = self._trials[trial_id] = study.ask(fixed_distributions=distributions)
        return config_of(self._params, trial.params)

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        """Report the metric at its `training_iteration` (single objective:
        Optuna keeps no intermediate values of several)."""
        trial = self._trials.get(trial_id)
        if isinstance(self._metric, list) or trial is None or trial_id in self._completed:
            return
        value, step = result.get(self._metric), result.get(TRAINING_ITERATION)
        reported = self._reported.setdefault(trial_id, set())
        if is_number(value) and is_int(step) and step not in reported:
            # A trial restarted after a failure or a resume reports its
            # iterations again: Optuna keeps the first value of each step.
            reported.add(step)
            trial.report(float(value), step)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """Tell the study: COMPLETE with the metric, FAIL on error, PRUNED
        when it ended without the metric. Where the user's code sees the
        study, the result's values go to the trial's `user_attrs` first
        (for a `constraints_func`; see the module docstring)."""
        trial = self._trials.get(trial_id)
        if trial is None or trial_id in self._completed:
            return
        study = self._ensure_study()
        values = self._objective_values(result)
        state = TrialState.COMPLETE
        if values is None:
            state = TrialState.FAIL if error else TrialState.PRUNED
        if self._sampler is not None or self._define_by_run is not None:
            for key, item in (result or {}).items():
                trial.set_user_attr(key, to_plain(item))
        try:
            study.tell(trial, values, state=state)
        except ValueError as failure:  # e.g. a value Optuna refuses; as Ray, warn
            warnings.warn(f"OptunaSearch: trial {trial_id}: {failure}", stacklevel=2)
        self._completed.add(trial_id)

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float | Sequence[float | None] | None,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """Tell the study a trial evaluated elsewhere (a warm start, a trial
        added with `tunecore add`, or `evaluated_rewards`): `value` is a
        list with several objectives; one missing makes it a failed trial."""
        self._add_trial(parameters, value, error, pruned, intermediate_values)

    @staticmethod
    def convert_search_space(spec: Mapping[str, Any]) -> dict[str, Any]:
        """The Optuna distributions of a param space's domains, by '/'-joined
        name (Ray's static method; a grid or `sample_from` is an error)."""
        _require_optuna()
        return {p.name: p.distribution for p in from_domains(parse_space(spec))}

    # -- tunecore's additions --------------------------------------------------------------------

    def use_seed(self, seed: int) -> None:
        """Seed the default sampler; the user's own seed wins, and a sampler
        the user built is used as built (as in Ray)."""
        if self._study is None and self._sampler is None and self._seed is None:
            self._seed = seed

    def to_spec(self) -> JsonDict | None:
        space = describe_space(
            self._define_by_run, self._param_space, not self._own_space, self._params
        )
        reasons = []
        advice = ""
        if self._sampler is not None:
            name = type(self._sampler).__name__
            reasons.append(
                f"its sampler {name} is one you built, and Optuna has no public API that gives "
                "back a sampler's constructor arguments"
            )
            advice = (
                f" (with the sampler seeded, {name}(seed=...), the restored run continues with "
                "exactly the suggestions of an uninterrupted run)"
            )
        if space is None:
            reasons.append(
                "its define-by-run function cannot be imported by name (a lambda, a nested "
                "function or one in __main__)"
            )
        if space is None or reasons:
            self._warn_once(
                "spec",
                f"OptunaSearch: {' and '.join(reasons)}, so the experiment's log cannot rebuild "
                "it: a restore needs it again, built as before, "
                f"Tuner.restore(path, trainable, search_alg=OptunaSearch(...)){advice}",
            )
            return None
        spec = OptunaSpec(
            version=SPEC_VERSION,
            optuna=optuna.__version__,
            space=space,
            metric=self._metric,
            mode=self._mode,
            points_to_evaluate=list(self._points) or None,
            evaluated_rewards=self._rewards,
            seed=self._seed,
            study_name=self._study_name,
        )
        return encode_spec(spec)

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        _require_optuna()
        decoded = read_spec(spec)
        searcher = cls(
            space=constructor_space(decoded.space),
            metric=decoded.metric,
            mode=decoded.mode,
            points_to_evaluate=decoded.points_to_evaluate,
            study_name=decoded.study_name,
            seed=decoded.seed,
            evaluated_rewards=decoded.evaluated_rewards,
        )
        if decoded.space.from_tuner and decoded.space.param_space is not None:
            searcher._param_space = decoded.space.param_space
            searcher._params = from_domains(searcher._param_space)
            searcher._check_points()
        return searcher

    # -- the study -------------------------------------------------------------------------------

    def _ensure_study(self) -> Study:
        if self._study is not None:
            return self._study
        if not self._params and self._define_by_run is None:
            raise InvalidFieldError(
                "OptunaSearch.space",
                {},
                "a search space: pass space= to OptunaSearch or a param_space with search "
                "domains to the Tuner",
            )
        self._default_metric()
        if self._metric is None or self._mode is None:
            where = "to OptunaSearch or to TuneConfig"
            if self._own_space:
                where = "to OptunaSearch (with a space of its own it takes none of TuneConfig's)"
            raise InvalidFieldError(
                "OptunaSearch.metric" if self._metric is None else "OptunaSearch.mode",
                None,
                f"the objective: pass metric= and mode= {where}",
            )
        sampler = self._sampler or optuna.samplers.TPESampler(seed=self._seed)
        modes = self._mode if isinstance(self._mode, list) else [self._mode]
        study = optuna.create_study(
            storage=optuna.storages.InMemoryStorage(),
            sampler=sampler,
            pruner=optuna.pruners.NopPruner(),
            study_name=self._study_name,
            directions=["minimize" if each == "min" else "maximize" for each in modes],
        )
        self._study = study
        for index, point in enumerate(self._points):
            if self._rewards is not None:
                self._add_trial(point, self._rewards[index], False, False, None)
            else:
                study.enqueue_trial(self._flat(point, f"OptunaSearch.points_to_evaluate[{index}]"))
        return study

    def _add_trial(
        self,
        parameters: Mapping[str, Any],
        value: Any,
        error: bool,
        pruned: bool,
        intermediate_values: Sequence[float] | None,
    ) -> None:
        study = self._ensure_study()
        where = "OptunaSearch.add_evaluated_point.parameters"
        if self._define_by_run is not None:
            fixed = FixedTrial(flat_names(parameters))
            try:
                self._define_by_run(fixed)
            except ValueError as failure:
                expected = (
                    f"a value for every parameter the define-by-run function suggests: {failure}"
                )
                raise InvalidFieldError(where, parameters, expected) from None
            params, distributions = fixed.params, fixed.distributions
        else:
            assert self._params is not None
            # A config carries constants (the Tuner's) beside the searched values.
            params = flat_point(self._params, parameters, where, ignored=None)
            distributions = {p.name: p.distribution for p in self._params if p.name in params}
        # A trial added from outside may lack one of several metrics: failed.
        missing = value is None or (isinstance(value, list | tuple) and None in value)
        failed = error or (missing and not pruned)
        state = TrialState.FAIL if failed else TrialState.PRUNED if pruned else TrialState.COMPLETE
        complete = state == TrialState.COMPLETE
        values = as_values(value, "OptunaSearch.add_evaluated_point.value") if complete else None
        try:
            trial = create_trial(
                state=state,
                values=values,
                params=params,
                distributions=distributions,
                intermediate_values=dict(enumerate(intermediate_values or [])) or None,
            )
        except ValueError as failure:  # a value outside what the function suggests
            raise InvalidFieldError(where, parameters, f"values Optuna takes: {failure}") from None
        study.add_trial(trial)

    def _default_metric(self) -> None:
        """Ray's anonymous metric when only a mode is given, once the space
        is known (a Tuner's metric may come with it)."""
        if self._metric is None and self._mode is not None:
            if isinstance(self._mode, list):
                raise InvalidFieldError(
                    "OptunaSearch.metric", None, "a list of metric names, one per mode"
                )
            self._metric = DEFAULT_METRIC

    def _flat(self, point: Mapping[str, Any], where: str) -> dict[str, Any]:
        if self._define_by_run is not None:
            return flat_names(point)
        assert self._params is not None
        ignored = constant_paths(self._param_space) if self._param_space else frozenset()
        return flat_point(self._params, point, where, ignored)

    def _run_define_by_run(self, trial: Trial) -> JsonDict:
        assert self._define_by_run is not None
        recorder = Recorder(trial)
        constants = self._define_by_run(recorder)
        where = "OptunaSearch.space(trial)"
        if not is_constants(constants):
            raise InvalidFieldError(where, constants, "None or a dict of constants by name")
        return unflattened({**recorder.values, **(constants or {})}, where)

    def _objective_values(self, result: Mapping[str, Any] | None) -> list[float] | None:
        if not result:
            return None
        metrics = self._metric if isinstance(self._metric, list) else [self._metric]
        values = [result.get(metric) for metric in metrics]
        numbers = [float(value) for value in values if is_number(value)]
        return numbers if len(numbers) == len(values) else None

    # -- the space and the spec ------------------------------------------------------------------

    def _take_space(self, space: Mapping[str, Any], where: str) -> None:
        if where == "param_space" or _has_domains(space):
            self._param_space = parse_space(space)
            self._params = from_domains(self._param_space)
        else:
            self._param_space = None
            self._params = from_distributions(space, where)

    def _check_points(self) -> None:
        if self._params is None and self._define_by_run is None:
            return
        for index, point in enumerate(self._points):
            self._flat(point, f"OptunaSearch.points_to_evaluate[{index}]")

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, stacklevel=3)


def _has_domains(space: Mapping[str, Any]) -> bool:
    for value in space.values():
        if is_domain(value):
            return True
        if isinstance(value, Mapping) and (set(value) == {"grid_search"} or _has_domains(value)):
            return True
        if isinstance(value, list | tuple) and any(is_domain(v) for v in value):
            return True
    return False
