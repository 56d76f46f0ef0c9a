"""The protocol every searcher follows.

A searcher suggests configs for new trials and learns from their results.
Like a scheduler it is a frozen msgspec struct holding its configuration and
its progress (including an `Rng`); every hook returns a new searcher. An
external optimiser can implement the protocol as long as its state is data
(for example the list of observations it has seen plus a seed), which is
what lets an experiment resume its search exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, Self, TypeVar, cast, runtime_checkable

import msgspec

from tunecore.core.search.declines import Declined
from tunecore.core.search.view import Path
from tunecore.model import Asked, InvalidFieldError, JsonDict, JsonValue, Mode

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # narrows as isinstance does; 3.13's typing has it


class Suggestion(msgspec.Struct, frozen=True, kw_only=True):
    """The config for one new trial. `evaluated_params` are the '/'-joined
    paths of the values the search chose; `experiment_tag` names the trial in
    the status output (e.g. `3_lr=0.01,momentum=0.9`)."""

    config: JsonDict
    evaluated_params: JsonDict = {}
    experiment_tag: str = ""


class SearchPolicy(Protocol):
    """Suggests configs and learns from results. Like a scheduler, a
    searcher that reads a metric names it in a `metric` attribute, and
    every result is checked for it (see `TrialScheduler`).

    The core's protocol, named apart from `tunecore.search.Searcher`, Ray's
    class users subclass, which the core drives through `ExternalSearcher`."""

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Take the experiment's metric and mode where this searcher has none."""
        ...

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        """A config for the trial `trial_id`, or None when there is none right
        now (check `is_finished` to tell "later" from "never")."""
        ...

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self: ...

    def on_trial_complete(self, trial_id: str, result: JsonDict | None, *, error: bool) -> Self:
        """The trial ended: normally with its last result, early (stopped by
        a scheduler or a user: result None), or in error."""
        ...

    @property
    def is_finished(self) -> bool:
        """Nothing more will ever be suggested."""
        ...


class ValuesWanted(msgspec.Struct, frozen=True, kw_only=True):
    """What a policy needs from a user's function before it can go on.

    A policy in the core is data, so it cannot hold a Python callable (a
    `sample_from` in the param space, a function in PBT's
    `hyperparam_mutations`). It holds the function's place instead and asks
    for its values here: the shell calls the functions at `paths` (with
    `config`, the config resolved so far, when they take one) and answers
    with a `ValuesDrawn` event carrying `key` and the values in the order of
    `paths`. The event is logged, so replay and resume need no user code.
    """

    key: int
    paths: tuple[Path, ...]
    config: JsonDict = {}


@runtime_checkable
class WantsValues(Protocol):
    """A policy that may wait for values only the shell can compute."""

    def wanted(self) -> ValuesWanted | None:
        """What it waits for now, or None."""
        ...

    def with_values(self, key: int, values: Sequence[JsonValue]) -> Self:
        """The policy holding the values that answer `wanted()` (same key,
        one value per path)."""
        ...


P = TypeVar("P")


@runtime_checkable
class WantsAsk(Protocol):
    """A searcher whose suggestions come from an object in the shell (see
    `tunecore.core.search.external`); wrappers pass both calls through."""

    def ask_wanted(self) -> AskWanted | None:
        """The ask the shell owes now, or None."""
        ...

    def with_answer(self, answer: Asked) -> Self | None:
        """The searcher after the shell's answer (`Asked`), or None when it
        answers no ask of this searcher."""
        ...

    def declining(self) -> Declined | None:
        """Its declines in a row (answers of None with nothing told since),
        with when it may be asked again; None when its last answer was not
        None or it was told something since. The step asks it again then,
        with nothing running, and ends the experiment as a dead end when
        it may not be (`core.search.declines`)."""
        ...

    def ask_again(self, *, anew: bool = False) -> Self:
        """The searcher asked at its next `suggest` though told nothing new
        since it declined; `anew` (on a resume) also forgets its declines."""
        ...


@runtime_checkable
class HearsPauses(Protocol):
    """A searcher told when one of its trials is paused and resumed (Ray's
    `on_pause`/`on_unpause`, which HyperBandForBOHB sends TuneBOHB): a
    paused trial need not count against its concurrency."""

    def on_trial_pause(self, trial_id: str) -> Self: ...

    def on_trial_unpause(self, trial_id: str) -> Self: ...


def wants_values(policy: object) -> TypeIs[WantsValues]:
    """`isinstance(policy, WantsValues)`, answered once per policy type:
    Python 3.11 works out a runtime protocol's members again at every
    `isinstance`, 8 us each, and `step` asks whenever a policy changed
    (`core.experiment.requests`). The protocols here are methods only, which a type
    has or lacks for all its instances."""
    return _type_implements(type(policy), WantsValues)


def wants_ask(searcher: object) -> TypeIs[WantsAsk]:
    """`isinstance(searcher, WantsAsk)`, answered once per type (see
    `wants_values`)."""
    return _type_implements(type(searcher), WantsAsk)


def hears_pauses(searcher: object) -> TypeIs[HearsPauses]:
    """`isinstance(searcher, HearsPauses)`, answered once per type (see
    `wants_values`)."""
    return _type_implements(type(searcher), HearsPauses)


_IMPLEMENTS: dict[tuple[type, type], bool] = {}


def _type_implements(kind: type, protocol: type) -> bool:
    key = (kind, protocol)
    known = _IMPLEMENTS.get(key)
    if known is None:
        known = _IMPLEMENTS[key] = issubclass(kind, protocol)
    return known


def paused_in(searcher: P, trial_id: str, *, paused: bool) -> P:
    """`searcher` told that `trial_id` was paused (or resumed), if it hears
    pauses; unchanged otherwise."""
    if not hears_pauses(searcher):
        return searcher
    told = searcher.on_trial_pause(trial_id) if paused else searcher.on_trial_unpause(trial_id)
    return cast(P, told)


class AskWanted(msgspec.Struct, frozen=True, kw_only=True):
    """What the shell owes a `WantsAsk` searcher: tell it the first `told`
    untold entries, then ask for trial `trial_id`, and log the answer as
    `Asked(key=key, ...)`."""

    key: int
    trial_id: str
    told: int


def ask_wanted_by(inner: object) -> AskWanted | None:
    """The ask a wrapped searcher waits for: a wrapper's `ask_wanted()`."""
    return inner.ask_wanted() if wants_ask(inner) else None


def declining_by(inner: object) -> Declined | None:
    """The declines of a searcher (wrapped or not; see `WantsAsk`)."""
    return inner.declining() if wants_ask(inner) else None


def asked_again(inner: P, *, anew: bool = False) -> P:
    """A searcher (wrapped or not) asked again at its next `suggest` (see
    `WantsAsk.ask_again`); one that does not ask the shell is unchanged."""
    return cast(P, inner.ask_again(anew=anew)) if wants_ask(inner) else inner


def answer_to(inner: P, answer: Asked) -> P | None:
    """A searcher (wrapped or not) after the shell's answer, or None when it
    waits for no such answer (the event carrying it is then rejected)."""
    if not wants_ask(inner):
        return None
    return cast(P | None, inner.with_answer(answer))


class PassesRequestsThrough:
    """For a wrapper struct around `searcher` (`ConcurrencyLimiter`,
    `Repeater`): what the wrapped searcher waits for from the shell
    (`WantsValues`, `WantsAsk`) is what the wrapper waits for, and the
    answer goes to the wrapped searcher. One copy, so that no wrapper can
    forget a request and leave its searcher waiting forever. Mix it into a
    frozen msgspec struct with a `searcher` field; it adds no field."""

    __slots__ = ()
    searcher: SearchPolicy

    def wanted(self) -> ValuesWanted | None:
        """What the wrapped searcher waits for (see `ValuesWanted`)."""
        inner = self.searcher
        return inner.wanted() if wants_values(inner) else None

    def with_values(self, key: int, values: Sequence[JsonValue]) -> Self:
        inner = self.searcher
        if not wants_values(inner):
            raise InvalidFieldError("values", list(values), "values the wrapped searcher wants")
        return self._around(inner.with_values(key, values))

    def ask_wanted(self) -> AskWanted | None:
        """The ask the wrapped searcher waits for (see `WantsAsk`)."""
        return ask_wanted_by(self.searcher)

    def with_answer(self, answer: Asked) -> Self | None:
        searcher = answer_to(self.searcher, answer)
        return None if searcher is None else self._around(searcher)

    def declining(self) -> Declined | None:
        """The wrapped searcher's declines (see `WantsAsk`)."""
        return declining_by(self.searcher)

    def ask_again(self, *, anew: bool = False) -> Self:
        searcher = asked_again(self.searcher, anew=anew)
        return self if searcher is self.searcher else self._around(searcher)

    def _around(self, searcher: SearchPolicy) -> Self:
        """This wrapper around `searcher` instead (the mixin is only ever
        part of a struct, which its type cannot say to mypy)."""
        return cast(Self, msgspec.structs.replace(cast(msgspec.Struct, self), searcher=searcher))


def unwrapped(searcher: object) -> object:
    """The searcher inside every wrapper around `searcher`
    (`PassesRequestsThrough`: `ConcurrencyLimiter`, `Repeater`), whose
    space, suggestions and objects are the search's; `searcher` itself
    when it is no wrapper."""
    while isinstance(searcher, PassesRequestsThrough):
        searcher = searcher.searcher
    return searcher


_IN_THE_LOG = ("save", "restore", "restore_from_dir")
"""What a built-in searcher does not need: its state is in the event log."""


def method_of_wrapped(wrapper: str, searcher: object, name: str) -> Callable[..., object]:
    """The method `name` of the searcher object a `wrapper` (Ray's
    `ConcurrencyLimiter`, `Repeater`) passes Ray's Searcher API on to; a
    searcher without it (a built-in policy) is an error that says so."""
    method = getattr(searcher, name, None)
    if not callable(method):
        why = (
            "a built-in searcher's state is in the experiment's event log, and "
            "Tuner.restore(path) resumes it"
            if name in _IN_THE_LOG
            else "only a Searcher object (OptunaSearch, one of your own, ...) has it"
        )
        raise AttributeError(
            f"{wrapper}.{name}: the wrapped {type(searcher).__name__} has no {name}(); {why}"
        )
    return cast(Callable[..., object], method)


def take_values(policy: P, key: int, values: Sequence[JsonValue]) -> P | None:
    """`policy` after taking the values, or None when it waits for no values
    under `key` (the event that carries them is then rejected)."""
    if not wants_values(policy):
        return None
    wanted = policy.wanted()
    if wanted is None or wanted.key != key or len(values) != len(wanted.paths):
        return None
    return cast(P, policy.with_values(key, values))
