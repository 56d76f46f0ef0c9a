"""The core's stand-in for a searcher that lives in the shell.

Ray Tune's searchers (Optuna, BayesOpt, HyperOpt, BOHB, a user's own
`Searcher` subclass) are objects with hidden state, which the pure core
cannot hold and a log cannot replay. `ExternalSearcher` holds their place:
it decides *when* to ask (the core calls `suggest` as for any searcher, under
the same pending bound and `ConcurrencyLimiter`) and records *what* to tell
(`untold`), and the shell does the asking. When `suggest` is called, it
returns None and waits (`ask_wanted`); the shell tells the object the
untold entries in order, asks it, and logs the answer as an `Asked` event,
which `with_answer` takes: the waiting trial gets the config. So the log
holds every suggestion (replay needs neither the object nor its package)
and fixes the order of tells and asks (a resume re-runs it to rebuild the
object exactly; `tunecore.shell.searchers`).

Invariants
- `asking` is the trial id a suggestion is awaited for; at most one at a
  time. `answer` holds an answered config until `suggest` hands it to that
  trial.
- `asks` counts the `Asked` events taken: the next one must carry key `asks`.
- `untold` keeps the tells in step order; an `Asked` with `told=n` drops the
  first n (the shell told them before asking). The rest stay for the next
  ask, or are told when the experiment ends.
- After an answer of None (nothing now) `declined` is set and nothing is
  asked until the next tell, so a searcher that declines is not asked in a
  loop, or until the step asks it again (`ask_again`: nothing runs, and
  `core.search.declines` says when). `declines` counts such answers in a
  row (since the last tell or config), the first at `declined_since`, the
  last at `declined_at` (the `Asked` events' times: replay reads the
  same). After `Searcher.FINISHED`, `finished` is set for good.
- `asks_again` is False in logs written before a declining searcher was
  asked again: `ask_again` then changes nothing, so they replay as they
  ran (the experiment ended at once as a dead end).
- `suggested` counts configs handed out (Ray's `num_samples` bounds the
  trials the experiment creates: `ExperimentConfig.max_trials`).
- `live` holds the trials it suggested that have not completed: the
  completion of another trial (one added from outside) is told with its
  config, as a point evaluated elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Self, TypeVar

import msgspec

from tunecore.core.results import flatten
from tunecore.core.search.base import AskWanted, Suggestion
from tunecore.core.search.declines import Declined, next_ask_at
from tunecore.core.search.variants import ParamSpace, format_vars
from tunecore.core.search.view import Path
from tunecore.model import Asked, JsonDict, JsonValue, Mode
from tunecore.model.errors import require_name


class TellKind(Enum):
    RESULT = "result"
    COMPLETE = "complete"
    ERROR = "error"
    ADDED = "added"
    """A trial this searcher did not suggest completed: told as a point
    evaluated elsewhere (`add_evaluated_point`), with its config."""
    PAUSE = "pause"
    """A trial of its own was paused (Ray's `on_pause`), for a searcher
    that hears pauses."""
    UNPAUSE = "unpause"
    ASKED = "asked"
    """Only in a prelude: the object was asked for trial `trial_id` and
    suggested `config` (a restored searcher's history, asked again)."""


class Tell(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """One thing to tell the searcher: a result, or a trial's end (`result`
    None: ended early without one, or errored)."""

    trial_id: str
    kind: TellKind
    result: JsonDict | None = None
    config: JsonDict | None = None


class ExternalSearcher(msgspec.Struct, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """A searcher object in the shell, by name; see the module docstring.

    `name` is the object's class (`module:qualname`); `spec` is the JSON
    its class rebuilds it from (`Searcher.to_spec`), None when only the
    user's object will do; `space` is the Tuner's param space, whose
    constants every config gets and whose domains a suggestion must fit
    (only constants when the object keeps a space of its own).
    `prelude` is what the object is told (and asked) before its first ask
    of this experiment: a warm start's points, evaluated elsewhere, and a
    restored searcher's history (`Searcher.restore_from_dir`), in order.
    """

    name: str
    spec: JsonDict | None = None
    seed: int | None = None
    metric: str | None = None
    metrics: tuple[str, ...] = ()
    mode: Mode | None = None
    hears_results: bool = False
    hears_pauses: bool = False
    space: ParamSpace | None = None
    prelude: tuple[Tell, ...] = ()
    asks: int = 0
    suggested: int = 0
    asking: str | None = None
    answer: JsonDict | None = None
    declined: bool = False
    asks_again: bool = False
    declines: int = 0
    declined_since: float | None = None
    declined_at: float | None = None
    finished: bool = False
    live: tuple[str, ...] = ()
    untold: tuple[Tell, ...] = ()

    def __post_init__(self) -> None:
        require_name("ExternalSearcher.name", self.name)
        if self.mode is not None:
            msgspec.structs.force_setattr(self, "mode", Mode(self.mode))

    @property
    def is_finished(self) -> bool:
        return self.finished

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """The experiment's metric and mode where the searcher names none
        (the shell gave them to the object already: this is for strict
        metric checking)."""
        return msgspec.structs.replace(
            self,
            metric=self.metric if self.metric is not None or self.metrics else metric,
            mode=self.mode if self.mode is not None else mode,
        )

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        if self.is_finished or self.declined:
            return self, None
        if self.asking is None:
            return msgspec.structs.replace(self, asking=trial_id), None
        if self.answer is None or self.asking != trial_id:
            return self, None  # still waiting for the shell
        config = self.answer
        self_after = msgspec.structs.replace(
            self,
            asking=None,
            answer=None,
            suggested=self.suggested + 1,
            live=(*self.live, trial_id),
        )
        return self_after, self._suggestion(config)

    def _suggestion(self, answer: JsonDict) -> Suggestion:
        """The trial's config: the param space's constants with the answer
        over them; tagged as Ray's SearchGenerator tags it (1-based count,
        then every value of the config)."""
        config = _merged(_constants(self.space), answer)
        index = self.suggested + 1
        formatted = format_vars(_leaves(config, ()))
        return Suggestion(
            config=config,
            evaluated_params=flatten(answer),
            experiment_tag=f"{index}_{formatted}" if formatted else str(index),
        )

    def ask_wanted(self) -> AskWanted | None:
        """The ask the shell owes, or None."""
        if self.asking is None or self.answer is not None:
            return None
        return AskWanted(key=self.asks, trial_id=self.asking, told=len(self.untold))

    def with_answer(self, answer: Asked) -> Self | None:
        """The searcher after the shell's answer; None if it answers no
        ask of this searcher (wrong key or trial, more tells than held)."""
        wanted = self.ask_wanted()
        if wanted is None or wanted.key != answer.key or wanted.trial_id != answer.trial_id:
            return None
        if not 0 <= answer.told <= len(self.untold):
            return None
        base = msgspec.structs.replace(
            self, asks=self.asks + 1, untold=self.untold[answer.told :], prelude=()
        )
        if answer.finished:
            return msgspec.structs.replace(_without_declines(base), asking=None, finished=True)
        if answer.config is None:
            return msgspec.structs.replace(
                base,
                asking=None,
                declined=True,
                declines=base.declines + 1,
                declined_since=answer.at if base.declines == 0 else base.declined_since,
                declined_at=answer.at,
            )
        return msgspec.structs.replace(_without_declines(base), answer=answer.config)

    def declining(self) -> Declined | None:
        """Its declines in a row, if its last answer was None and it was
        told nothing since (see `core.search.declines`)."""
        if not self.declined or self.finished:
            return None
        times = max(self.declines, 1)
        last = self.declined_at if self.declined_at is not None else 0.0
        since = self.declined_since if self.declined_since is not None else last
        again_at = next_ask_at(times, last) if self.asks_again else None
        return Declined(times=times, since=since, last=last, again_at=again_at)

    def ask_again(self, *, anew: bool = False) -> Self:
        """Asked at its next `suggest` though told nothing new since it
        declined; `anew` (a resume) also forgets the declines so far."""
        if not self.asks_again:
            return self
        if anew:
            return _without_declines(self)
        return msgspec.structs.replace(self, declined=False) if self.declined else self

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self:
        if not self.hears_results or trial_id not in self.live:
            return self
        return self._tell(Tell(trial_id, TellKind.RESULT, result))

    def on_trial_complete(
        self, trial_id: str, result: JsonDict | None = None, *, error: bool = False
    ) -> Self:
        if trial_id not in self.live:
            return self._tell(Tell(trial_id, TellKind.ADDED, result))
        kind = TellKind.ERROR if error else TellKind.COMPLETE
        live = tuple(t for t in self.live if t != trial_id)
        return msgspec.structs.replace(self._tell(Tell(trial_id, kind, result)), live=live)

    def on_trial_pause(self, trial_id: str) -> Self:
        if not self.hears_pauses or trial_id not in self.live:
            return self
        return self._tell(Tell(trial_id, TellKind.PAUSE))

    def on_trial_unpause(self, trial_id: str) -> Self:
        if not self.hears_pauses or trial_id not in self.live:
            return self
        return self._tell(Tell(trial_id, TellKind.UNPAUSE))

    def _tell(self, tell: Tell) -> Self:
        return _without_declines(msgspec.structs.replace(self, untold=(*self.untold, tell)))


_E = TypeVar("_E", bound=ExternalSearcher)


def _without_declines(searcher: _E) -> _E:
    """`searcher` with no decline counted: it is asked at its next `suggest`."""
    if not searcher.declined and not searcher.declines:
        return searcher
    return msgspec.structs.replace(
        searcher, declined=False, declines=0, declined_since=None, declined_at=None
    )


def _constants(space: ParamSpace | None) -> JsonDict:
    """The param space's constant values (its skeleton without the places
    of its domains, which the searcher fills)."""
    if space is None:
        return {}
    holes = {p.path for p in (*space.grid, *space.sampled, *space.derived)}
    return _without(space.skeleton, holes, ())


def _without(value: JsonDict, holes: set[Path], at: Path) -> JsonDict:
    kept: JsonDict = {}
    for key, item in value.items():
        path = (*at, key)
        if path in holes:
            continue
        kept[key] = _without(item, holes, path) if isinstance(item, dict) else item
    return kept


def _merged(base: JsonDict, over: Mapping[str, JsonValue]) -> JsonDict:
    """`over` on top of `base`, dicts merged key by key (Ray's merge_dicts)."""
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if isinstance(below, dict) and isinstance(value, dict):
            merged[key] = _merged(below, value)
        else:
            merged[key] = value
    return merged


def _leaves(config: Mapping[str, JsonValue], at: Path) -> list[tuple[Path, JsonValue]]:
    """Every non-dict value with its path (lists are values, as in Ray)."""
    found: list[tuple[Path, JsonValue]] = []
    for key, value in config.items():
        if isinstance(value, dict):
            found.extend(_leaves(value, (*at, key)))
        else:
            found.append(((*at, key), value))
    return found
