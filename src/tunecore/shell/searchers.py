"""The searcher object behind the core's `ExternalSearcher`, and its rebuild.

A Ray Tune style searcher (`tunecore.search.Searcher`: Optuna, BayesOpt,
HyperOpt, BOHB or the user's own) keeps hidden state, so it lives here in
the shell. The core decides when to ask it and what to tell it
(`tunecore.core.search.external`) and says so with an `AskSearcher`
command; `SearcherRuntime.ask` carries it out, as `UserFunctions.draw`
carries out a `DrawValues`: it
tells the object the untold entries in order (results, completions,
points evaluated elsewhere), calls `suggest`, checks the config against
the param space and hands back an `Asked` event for the loop to log first.
The tells need not wait for the ask: after each step the loop has
`SearcherRuntime.tell_new` tell the object what that step recorded (a
result, a trial's end), as Ray Tune's controller calls `on_trial_result`
as each result comes in; the ask then tells only what is left, so the
object hears the same calls in the same order either way, and a rebuild
(which tells them all at the next logged ask) gives it the same state.
If the object raises (in a tell or in `suggest`), or suggests a value
outside the space, the answer is a `SearcherFailed` event: the experiment
ends with the error then and there, as Ray's `fit()` raises out of the
result that made `on_trial_result` raise; nothing recorded is lost
(the result it raised on is logged before it is told), and the trials it
cut short are left for a restore to run again, as in Ray Tune.

Exact resume. The log holds every ask with the number of tells before it,
and the state holds what was told, so `rebuild` walks a log and repeats the
same tells and asks on a fresh object (`Searcher.from_spec`). A seeded,
deterministic searcher then ends in exactly the state of the one that ran:
its next suggestion is the one an uninterrupted run would have made. Where
the fresh object suggests something else than the log says (no seed,
another package version), the rebuild warns once with
`SearchResumeWarning`, naming the trial and the first differing value,
and goes on from the object as it is.

What the shell asks of the object is `SearcherObject`: Ray's imperative
methods. The layer contract keeps `tunecore.search` out of the shell, so
the object is typed by that protocol, not by its class.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from tunecore.core.experiment import ExperimentState
from tunecore.core.search.base import unwrapped
from tunecore.core.search.domains import SampleFrom, plain_json
from tunecore.core.search.external import ExternalSearcher, Tell, TellKind
from tunecore.core.search.variants import MISSING, format_path, value_at
from tunecore.model import (
    Asked,
    AskSearcher,
    ExperimentEvent,
    InvalidFieldError,
    JsonDict,
    SearcherFailed,
)
from tunecore.shell.reported_objects import ObjectsByTrial

logger = logging.getLogger(__name__)

FINISHED = "FINISHED"
"""Ray's `Searcher.FINISHED`: what `suggest` returns when it never will again."""


class SearchResumeWarning(UserWarning):
    """A rebuilt searcher suggested something else than the log records."""


class SearcherObject(Protocol):
    """Ray Tune's imperative searcher API, as far as the shell uses it."""

    @property
    def metric(self) -> Any: ...

    def suggest(self, trial_id: str) -> Any: ...

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None: ...

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None: ...

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None: ...


def external_of(searcher: object) -> ExternalSearcher | None:
    """The `ExternalSearcher` in a (possibly wrapped) searcher, or None."""
    inner = unwrapped(searcher)
    return inner if isinstance(inner, ExternalSearcher) else None


class SearcherRuntime:
    """The object that answers the state's `ExternalSearcher`."""

    def __init__(self, searcher: SearcherObject) -> None:
        self._object = searcher
        self._asks = 0  # asks made of the object: the key the next must carry
        self._warned_points = False  # said once: it takes no points from elsewhere
        self._warned_resume = False  # said once: the rebuild diverged from the log
        self._told_ahead = 0
        """How many of the entries pending (prelude, then untold) at ask
        number `_ahead_of` the object heard before that ask (`tell_new`)."""
        self._ahead_of: int | None = None
        self.failure: str | None = None
        """What the object raised, once it failed: `fit()` raises it."""
        self.objects: ObjectsByTrial | None = None
        """The objects the run's trials reported (the loop's, set by `fit()`):
        a result told while it is its trial's latest shows them, as Ray's
        searchers get the objects reported; a rebuild tells the JSON form."""

    @property
    def searcher(self) -> SearcherObject:
        return self._object

    def ask(
        self, state: ExperimentState, command: AskSearcher, at: float
    ) -> ExperimentEvent | None:
        """The answer to `command`, asked of the object with the entries
        `state`'s searcher holds untold: an `Asked` (or `SearcherFailed`)
        event. None for an ask made already: a rebuilt runtime repeated it
        from the log (`replay_ask`)."""
        if command.key < self._asks or self.failure is not None:
            return None
        external = external_of(state.searcher)
        assert external is not None  # only an ExternalSearcher wants an ask
        try:
            return self._ask(state, external, command, at)
        except Exception as error:  # the user's or a package's code: any error
            return self._failed(external, error, at)

    def tell_new(self, state: ExperimentState, at: float) -> SearcherFailed | None:
        """Tell the object now what `state`'s searcher holds untold and the
        object has not heard yet (the step just taken recorded it), as Ray
        tells a searcher each result as it comes. A `SearcherFailed` if the
        object raised: the loop feeds it next, so the experiment ends at
        that result, as Ray's does. Nothing once the experiment is over
        (`finish` tells the rest) or the object failed."""
        if self.failure is not None or state.done:
            return None
        external = external_of(state.searcher)
        if external is None:
            return None
        try:
            self._tell_pending(state, external, len(external.untold))
        except Exception as error:  # the user's or a package's code: any error
            return self._failed(external, error, at)
        return None

    def _failed(self, external: ExternalSearcher, error: Exception, at: float) -> SearcherFailed:
        """The failure to feed for `error`, raised by the object (called
        where it is caught, so the log shows its traceback)."""
        logger.exception("The searcher %s failed", external.name)
        self.failure = f"{type(error).__name__}: {error}"
        return SearcherFailed(at=at, error=self.failure, resumable=True)

    def _ask(
        self, state: ExperimentState, external: ExternalSearcher, wanted: AskSearcher, at: float
    ) -> Asked:
        self._tell_pending(state, external, wanted.told)
        # The `Asked` drops the first `told` untold entries (and the prelude).
        self._told_ahead = max(0, self._told_ahead - len(external.prelude) - wanted.told)
        self._ahead_of = wanted.key + 1
        self._asks = wanted.key + 1
        raw = self._object.suggest(wanted.trial_id)
        if isinstance(raw, str) and raw == FINISHED:
            return Asked(
                at=at, key=wanted.key, trial_id=wanted.trial_id, told=wanted.told, finished=True
            )
        config = None if raw is None else _checked(external, raw)
        return Asked(
            at=at, key=wanted.key, trial_id=wanted.trial_id, told=wanted.told, config=config
        )

    def _tell_pending(self, state: ExperimentState, external: ExternalSearcher, told: int) -> None:
        """Tell the object the prelude (before its first ask) and the first
        `told` untold entries, but for those it heard already (`tell_new`).
        A tell that raises counts as heard: the object is not told it again."""
        prelude, untold = external.prelude, external.untold
        start = self._told_ahead if self._ahead_of == external.asks else 0
        self._ahead_of = external.asks
        # Indexed, not a joined copy: called after every step, so a copy of
        # all entries untold since the last ask would cost O(untold) a step.
        for index in range(start, len(prelude) + told):
            self._told_ahead = index + 1
            tell = prelude[index] if index < len(prelude) else untold[index - len(prelude)]
            self._tell(state, external, tell)

    def _tell(self, state: ExperimentState, external: ExternalSearcher, tell: Tell) -> None:
        self._tell_with(external, tell, _point_config(state, tell))

    def _tell_with(
        self, external: ExternalSearcher, tell: Tell, point_config: JsonDict | None
    ) -> None:
        """Make `tell` of the object; `point_config` is the config of a
        point evaluated elsewhere (`_point_config`)."""
        result = None if tell.result is None else self._shown(tell.trial_id, tell.result)
        if tell.kind is TellKind.ASKED:
            self._object.suggest(tell.trial_id)
        elif tell.kind is TellKind.RESULT:
            assert result is not None
            self._object.on_trial_result(tell.trial_id, result)
        elif tell.kind in (TellKind.PAUSE, TellKind.UNPAUSE):
            hook = "on_pause" if tell.kind is TellKind.PAUSE else "on_unpause"
            getattr(self._object, hook)(tell.trial_id)
        elif tell.kind in (TellKind.COMPLETE, TellKind.ERROR):
            self._object.on_trial_complete(tell.trial_id, result, error=tell.kind is TellKind.ERROR)
        else:
            self._add_point(external, point_config, result)

    def _shown(self, trial_id: str, result: JsonDict) -> JsonDict:
        """A copy of `result` to tell, with the objects it held if known."""
        objects = None if self.objects is None else self.objects.of(trial_id)
        shown = result if objects is None else objects.merged(result)
        return dict(result) if shown is result else shown

    def _add_point(
        self, external: ExternalSearcher, config: JsonDict | None, result: JsonDict | None
    ) -> None:
        """A trial the object did not suggest, told as a point evaluated
        elsewhere where the object takes those (Ray's `add_evaluated_point`)."""
        metric = self._object.metric
        if config is None or metric is None:
            return
        value: Any
        if result is None:
            value = None
        elif isinstance(metric, str):
            value = result.get(metric)
        else:
            value = [result.get(m) for m in metric]
        try:
            self._object.add_evaluated_point(
                dict(config), value, error=result is None or value is None
            )
        except NotImplementedError:
            if not self._warned_points:
                self._warned_points = True
                logger.warning(
                    "%s takes no points evaluated elsewhere (add_evaluated_point): "
                    "trials it did not suggest are not told to it",
                    external.name,
                )

    def finish(self, state: ExperimentState) -> None:
        """Tell the object what is still untold, once the experiment ended
        (a user's searcher sees every trial complete, as in Ray). Not
        after it failed: as in Ray, it is not called again."""
        external = external_of(state.searcher)
        if external is None or self.failure is not None:
            return
        try:
            self._tell_pending(state, external, len(external.untold))
        except Exception:  # the experiment is over: say so, lose nothing recorded
            logger.exception("The searcher %s failed on the final tells", external.name)

    def replay_ask(self, before: ExperimentState, event: Asked) -> object:
        """Repeat a logged ask on a rebuilt object: the same tells, the same
        `suggest`; warn once if the object answers otherwise than the log.
        Returns what the object suggested (plain JSON where it is a config)."""
        return self.logged_ask(before, event)()

    def logged_ask(self, before: ExperimentState, event: Asked) -> Callable[[], object]:
        """`replay_ask` in two halves: what to tell and ask is read from
        `before` now, and the object is called when the result is. A
        rebuild reads every ask of the log first and then makes the calls
        back to back (`api.searching.restored_runtime`): made between the
        core's steps, an optimizer's work ran 10-20% slower than in a bare
        loop (each turn's caches cooled by the other's), on a restore that
        is mostly that work. Holds the tells and configs, not `before`."""
        external = external_of(before.searcher)
        if external is None:
            return lambda: None
        tells = [
            (tell, _point_config(before, tell))
            for tell in (*external.prelude, *external.untold[: event.told])
        ]

        def ask() -> object:
            for tell, point_config in tells:
                self._tell_with(external, tell, point_config)
            return self._replayed_ask(external, event)

        return ask

    def _replayed_ask(self, external: ExternalSearcher, event: Asked) -> object:
        self._asks = event.key + 1
        raw = self._object.suggest(event.trial_id)
        got = plain_json("suggestion", raw) if isinstance(raw, Mapping) else raw
        logged: object = FINISHED if event.finished else event.config
        if got != logged and not self._warned_resume:
            self._warned_resume = True
            warnings.warn(
                f"The rebuilt searcher {external.name} suggested for trial {event.trial_id} "
                f"{_first_difference(logged, got)}: the search goes on from the rebuilt "
                "searcher, which is not the one that ran (seed it, and keep the same package "
                "versions, for an exact resume)",
                SearchResumeWarning,
                stacklevel=2,
            )
        return got


def _point_config(state: ExperimentState, tell: Tell) -> JsonDict | None:
    """The config of the point evaluated elsewhere that `tell` tells
    (None for the other kinds of tell): its own, or its trial's in `state`."""
    if tell.kind is not TellKind.ADDED or tell.config is not None:
        return tell.config
    if tell.trial_id not in state.trials:
        return None
    return state.trials[tell.trial_id].spec.config


def _checked(external: ExternalSearcher, raw: object) -> JsonDict:
    """The suggestion as plain JSON, checked against the param space's
    domains; `InvalidFieldError` names the parameter otherwise."""
    where = f"{external.name.rpartition(':')[2]}.suggest()"
    if not isinstance(raw, Mapping):
        raise InvalidFieldError(where, raw, "a dict (a config), None or Searcher.FINISHED")
    config = plain_json(where, raw)
    assert isinstance(config, dict)
    space = external.space
    if space is None:
        return config
    for parameter in (*space.grid, *space.sampled):
        at = where + format_path(parameter.path).removeprefix("param_space")
        value = value_at(config, parameter.path)
        if value is MISSING:
            raise InvalidFieldError(at, None, "a value: the param space searches this parameter")
        domain = parameter.domain
        if not isinstance(domain, SampleFrom) and not domain.is_valid(value):  # type: ignore[arg-type]
            raise InvalidFieldError(at, value, f"a value in the param space's {domain!r}")
    return config


def _first_difference(logged: object, got: object) -> str:
    if not isinstance(got, dict) or not isinstance(logged, dict):
        return f"{got!r} where the log has {logged!r}"
    for key in sorted(set(logged) | set(got)):
        if logged.get(key) != got.get(key):
            return f"{key}={got.get(key)!r} where the log has {key}={logged.get(key)!r}"
    return repr(got)
