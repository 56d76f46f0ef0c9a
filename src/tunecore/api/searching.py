"""A Ray Tune style searcher object in an experiment: set up, warm-started,
and rebuilt on restore.

`prepare_search` does at `fit()` what Ray's Tuner does with a `Searcher`
(`set_search_properties` with the Tuner's metric, mode and param space; a
param space with values to search is refused when the searcher keeps its
own, and its constants go into every config), gives it the experiment's
seed (`use_seed`), tells it an earlier experiment's trials when asked to
(`warm_start`), and puts an `ExternalSearcher` in its place inside any
`ConcurrencyLimiter` or `Repeater`: the core holds that, the shell the
object (`tunecore.shell.searchers`).

`restored_runtime` does the reverse for `Tuner.restore`: a fresh object
from the logged spec (or the one the user passes again), fed the log's
tells and asks in log order as the resume's one walk of the log passes
them (`shell.replay.HistoryWalk`), so it continues exactly. Ray's
`Searcher.restore_from_dir` (and `save`/`restore`) works the same way
across experiments: the other experiment's tells and asks become the
prelude of this one (`_continued`), recorded in its log; a Tuner given no
param space searches the space the other experiment's searcher did, as Ray's
restore brings it back from its pickle.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import msgspec

from tunecore.core.experiment import ExperimentState, trials_in_order
from tunecore.core.experiment.snapshot import BUILTIN
from tunecore.core.search import BasicVariantGenerator, ConcurrencyLimiter, Repeater
from tunecore.core.search.base import SearchPolicy, unwrapped
from tunecore.core.search.external import ExternalSearcher, Tell, TellKind
from tunecore.core.search.variants import as_param_space, parse_space, without_functions
from tunecore.model import Asked, ExperimentEvent, InvalidFieldError, Mode, TrialStatus
from tunecore.search.searcher import Searcher, class_path
from tunecore.shell.eventlog import read_log
from tunecore.shell.mirror.remote import is_stored, open_stored
from tunecore.shell.replay import HistoryWalk, walk
from tunecore.shell.searchers import SearcherObject, SearcherRuntime, external_of

_WRAPPERS = (ConcurrencyLimiter, Repeater)


class SearcherNotGivenError(ValueError):
    """A restore needs the searcher object again: its class cannot rebuild it."""


@dataclass(frozen=True)
class PreparedSearch:
    """The core's searcher, and the shell's object behind it."""

    policy: SearchPolicy
    runtime: SearcherRuntime


def searcher_object(chosen: object) -> Searcher | None:
    """The Ray-style searcher object inside `chosen`'s wrappers, if any."""
    inner = unwrapped(chosen)
    return inner if isinstance(inner, Searcher) else None


def refuse_wrapped_generator_without_space(chosen: object) -> None:
    """Refuse a `BasicVariantGenerator()` inside a `ConcurrencyLimiter` or
    `Repeater`: the Tuner gives its `param_space` only to a generator that
    is the `search_alg` itself. Ray Tune refuses it too: its limiter says it
    "only works with `Searcher` objects" (a `RuntimeError` when built), its
    repeater fails on the generator's missing `mode`. A generator given its
    own space (`BasicVariantGenerator(space)`, tunecore's) may be wrapped."""
    if not isinstance(chosen, _WRAPPERS):
        return
    inner = unwrapped(chosen)
    if isinstance(inner, BasicVariantGenerator) and inner.param_space is None:
        wrapper = type(chosen).__name__
        raise InvalidFieldError(
            "TuneConfig.search_alg",
            f"{wrapper}(BasicVariantGenerator(...))",
            f"a Searcher inside {wrapper} (as in Ray Tune, which refuses this too); to limit "
            "random or grid search, pass BasicVariantGenerator(max_concurrent=N) or "
            "TuneConfig(max_concurrent_trials=N), and to repeat it, TuneConfig(num_samples=N)",
        )


def prepare_search(
    chosen: object,
    *,
    metric: str | None,
    mode: Mode | None,
    param_space: Mapping[str, object],
    seed: int,
) -> PreparedSearch | None:
    """`chosen` with its searcher object set up and replaced by an
    `ExternalSearcher`; None when it holds no such object."""
    found = searcher_object(chosen)
    if found is None:
        return None
    continued = _continued(found.restore_source)
    searched: Mapping[str, object] = param_space
    if continued is not None and not param_space and continued.searcher.space is not None:
        # Ray's restore brings back the space, metric and mode its pickle
        # held: a Tuner given none searches what the other experiment did.
        searched = as_param_space(continued.searcher.space)
        metric = metric if metric is not None else continued.searcher.metric
        mode = mode if mode is not None else continued.searcher.mode
    mode_name = None if mode is None else mode.value
    # Ray's tune.run calls set_search_properties only with a space to offer:
    # a user's searcher keeping its own space may replace it with whatever it
    # is given. Without one the searcher hears no metric and mode either, as
    # in Ray: one built with neither fails at its first suggestion.
    accepted = bool(searched) and found.set_search_properties(metric, mode_name, dict(searched))
    given = without_functions(parse_space(param_space))
    if not accepted and (given.grid or given.sampled or given.derived):
        raise ValueError(
            f"param_space holds values to search, but the searcher {type(found).__name__} was "
            "built with a search space of its own: give param_space only constant values, or "
            "build the searcher without a space (as in Ray Tune)"
        )
    found.use_seed(seed)
    limiter = _limiter_of(chosen)
    hears_pauses = callable(getattr(found, "on_pause", None))
    # Ray's limiter leaves concurrency to a searcher that takes it over
    # (TuneBOHB), which does not count its paused trials: nor does ours then.
    own_concurrency = limiter is not None and found.set_max_concurrency(limiter.max_concurrent)
    searcher_metric: Any = found.metric
    searcher_mode: Any = found.mode
    external = ExternalSearcher(
        name=class_path(found),
        spec=found.to_spec(),
        seed=seed,
        metric=searcher_metric if isinstance(searcher_metric, str) else None,
        metrics=tuple(searcher_metric) if isinstance(searcher_metric, list) else (),
        mode=Mode(searcher_mode) if isinstance(searcher_mode, str) else None,
        hears_results=found.hears_results,
        hears_pauses=hears_pauses,
        # A searcher keeping its own space gets the Tuner's constants merged
        # into each config, as Ray's SearchGenerator merges its param space.
        space=without_functions(parse_space(searched)) if accepted else given,
        prelude=(
            *(continued.history if continued is not None else ()),
            *_warm_tells(found.warm_start_source),
        ),
        asks_again=True,  # as Ray does, when nothing runs (`core.search.declines`)
    )
    counts_paused = not (own_concurrency and hears_pauses)
    return PreparedSearch(_replaced(chosen, external, counts_paused), SearcherRuntime(found))


def _adapted(
    wrapper: ConcurrencyLimiter[Any] | Repeater[Any],
    external: ExternalSearcher,
    counts_paused: bool,
) -> ConcurrencyLimiter[Any] | Repeater[Any]:
    """A `Repeater` averages the searcher's metric when it names none, as
    Ray's does (it reads the wrapped searcher's); a `ConcurrencyLimiter`
    leaves paused trials out when the searcher does."""
    if isinstance(wrapper, Repeater) and wrapper.metric is None and external.metric is not None:
        return msgspec.structs.replace(wrapper, metric=external.metric, mode=external.mode)
    if isinstance(wrapper, ConcurrencyLimiter) and not counts_paused:
        return msgspec.structs.replace(wrapper, count_paused=False)
    return wrapper


def _limiter_of(chosen: object) -> ConcurrencyLimiter[Any] | None:
    inner = chosen
    while isinstance(inner, _WRAPPERS):
        if isinstance(inner, ConcurrencyLimiter):
            return inner
        inner = inner.searcher
    return None


def _replaced(chosen: object, external: ExternalSearcher, counts_paused: bool) -> SearchPolicy:
    """`chosen`'s wrappers around `external` instead of the object."""
    if isinstance(chosen, _WRAPPERS):
        inner = _replaced(chosen.searcher, external, counts_paused)
        wrapper = _adapted(chosen, external, counts_paused)
        return cast(SearchPolicy, msgspec.structs.replace(wrapper, searcher=inner))
    return external


def _warm_tells(source: str | None) -> tuple[Tell, ...]:
    """Every finished trial of the experiment at `source`, as points
    evaluated elsewhere: its config and last result (none when it errored)."""
    if source is None:
        return ()
    from tunecore.api.loader import load_experiment  # noqa: PLC0415 - api below us

    state = load_experiment(source).state
    tells = []
    for trial in trials_in_order(state):
        if trial.status is TrialStatus.TERMINATED and trial.last_result:
            result = dict(trial.last_result)
        elif trial.status is TrialStatus.ERROR:
            result = None
        else:
            continue
        tells.append(
            Tell(
                f"{source}#{trial.trial_id}",
                TellKind.ADDED,
                result=result,
                config=trial.spec.config,
            )
        )
    return tuple(tells)


@dataclass(frozen=True)
class _Continued:
    """What `Searcher.restore_from_dir` continues from: the other
    experiment's searcher as its log ended (its space, metric and mode), and
    its history."""

    searcher: ExternalSearcher
    history: tuple[Tell, ...]


def _continued(source: str | None) -> _Continued | None:
    """The searcher of the experiment at `source`, and everything it was
    told and asked, in the order its log records (what `restored_runtime`
    repeats), and what it was told at the end."""
    if source is None:
        return None
    directory = open_stored(source).local if is_stored(source) else Path(source).expanduser()
    steps: list[Tell] = []
    final: list[ExperimentState] = []

    def visit(before: ExperimentState, event: ExperimentEvent, after: ExperimentState) -> None:
        final[:] = [after]
        external = external_of(before.searcher)
        if isinstance(event, Asked) and external is not None:
            steps.extend((*external.prelude, *external.untold[: event.told]))
            steps.append(Tell(event.trial_id, TellKind.ASKED, config=event.config))

    contents = read_log(directory, quiet=True)
    walk(contents, BUILTIN, visit)
    external = external_of(final[0].searcher) if final else None
    if external is None:
        raise ValueError(
            f"restore_from_dir({source!r}): that experiment ran no searcher object "
            "(tunecore.search.Searcher) whose history could be restored"
        )
    return _Continued(external, (*steps, *external.prelude, *external.untold))


def restored_runtime(
    history: HistoryWalk,
    state_searcher: object,
    given: object,
    param_space: Mapping[str, object] | None,
) -> SearcherRuntime | None:
    """The searcher object of a restored experiment, rebuilt by re-running
    the log's tells and asks, read as `history` walks it and made of the
    object, in log order, once the walk is over (`SearcherRuntime.logged_ask`:
    back to back, as a bare loop makes them); ready once the walk has
    run. None when its searcher is not an object."""
    external = external_of(state_searcher)
    if external is None:
        return None
    obj = _fresh_object(external, given, param_space)
    runtime = SearcherRuntime(obj)
    asks: list[Callable[[], object]] = []

    def visit(before: ExperimentState, event: ExperimentEvent, _: ExperimentState) -> None:
        if isinstance(event, Asked):
            asks.append(runtime.logged_ask(before, event))

    def ask_again() -> None:
        for ask in asks:
            ask()
        asks.clear()

    history.register(visit, then=ask_again)
    return runtime


def _fresh_object(
    external: ExternalSearcher, given: object, param_space: Mapping[str, object] | None
) -> SearcherObject:
    """The object to rebuild: the one the user passed again, or one its
    class builds from the logged spec."""
    found = searcher_object(given)
    if found is not None:
        mode = None if external.mode is None else external.mode.value
        if param_space is None and external.space is not None:
            param_space = as_param_space(external.space)
        found.set_search_properties(external.metric, mode, dict(param_space or {}))
        if external.seed is not None:
            found.use_seed(external.seed)
        return found
    if external.spec is None:
        raise SearcherNotGivenError(
            f"the experiment's searcher {external.name} cannot be rebuilt from the log (it "
            "has no spec: your own Searcher without to_spec(), or one holding code): pass it "
            "again, as you built it, to Tuner.restore(path, trainable, search_alg=...)"
        )
    kind = _searcher_class(external.name)
    try:
        rebuilt: SearcherObject = kind.from_spec(external.spec)
    except ImportError as error:  # the spec names code this process has not imported
        raise SearcherNotGivenError(
            f"the experiment's searcher {external.name} cannot be rebuilt from the log: {error}: "
            "pass it again, as you built it, to Tuner.restore(path, trainable, search_alg=...)"
        ) from error
    return rebuilt


# The only modules a log may make a restore import: tunecore's searchers.
SEARCHER_MODULES = frozenset(
    f"tunecore.search.{name}"
    for name in ("optuna", "bayesopt", "hyperopt", "bohb", "nevergrad", "zoopt", "hebo", "ax")
)


def _searcher_class(name: str) -> type[Searcher]:
    """The class a log names (`module:qualname`). Reading a log never runs
    code: only the modules in `SEARCHER_MODULES` are imported, and no other
    module of tunecore's is looked in (a user's class may claim to live in
    one, such as `tunecore.cli.__main__`); a class of the user's is found
    only in a module this process has imported already (their script, run
    again), else they pass the searcher again."""
    module_name, _, qualname = name.partition(":")
    module: object
    if module_name in SEARCHER_MODULES:
        module = importlib.import_module(module_name)
    elif module_name.partition(".")[0] == "tunecore":
        module = None
    else:
        module = sys.modules.get(module_name)
    target: object = module
    for part in qualname.split("."):
        target = getattr(target, part, None)
    if not (isinstance(target, type) and issubclass(target, Searcher)):
        raise SearcherNotGivenError(
            f"the experiment's searcher {name} is not a tunecore.search.Searcher class this "
            "process has imported (a log names code but never imports it): pass the searcher "
            "again, as you built it, to Tuner.restore(path, trainable, search_alg=...)"
        )
    return target
