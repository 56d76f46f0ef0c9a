"""Ray's ConcurrencyLimiter: at most `max_concurrent` suggested trials live.

Invariants
- `live` holds the ids of trials this limiter suggested that have not
  completed, in suggestion order; `len(live) <= max_concurrent` always, and
  `suggest` returns None (without asking the wrapped searcher) while it is
  full.
- Only trials in `live` reach the wrapped searcher: results and completions
  of other ids are ignored, as in Ray.
- With `count_paused=False` (set for a searcher that bounds its own
  concurrency, as Ray's TuneBOHB does) a paused trial (`paused`) does not
  count against `max_concurrent` until it is resumed, as in Ray.
- With `batch=True` completions are held back (`held`) and handed to the
  wrapped searcher together, and only then do the trials leave `live`: a
  new batch starts when every trial of the current one has completed. (Ray
  releases a batch when `max_concurrent` completions are held; we also
  release it when fewer trials were ever started, so the tail of a finished
  search is not stuck forever.)

The wrapped searcher is any `SearchPolicy`; the struct is generic in its type.
msgspec encodes any struct inside, but decodes only a parametrised type:
`from_msgpack(data, ConcurrencyLimiter[BasicVariantGenerator])`. A bare
`ConcurrencyLimiter` cannot be decoded, since a protocol names no concrete
type to build.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Self, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from tunecore.core.policies import policy_metric
from tunecore.core.search.base import (
    PassesRequestsThrough,
    SearchPolicy,
    Suggestion,
    method_of_wrapped,
    paused_in,
)
from tunecore.model import InvalidFieldError, JsonDict, Mode
from tunecore.model.errors import require_bool, require_int

S = TypeVar("S", bound=SearchPolicy)


class HeldCompletion(msgspec.Struct, frozen=True, array_like=True):
    """A completion a batching limiter has not yet passed on."""

    trial_id: str
    result: JsonDict | None
    error: bool


class ConcurrencyLimiter(msgspec.Struct, PassesRequestsThrough, Generic[S], frozen=True, tag=True):
    """Wraps `searcher` so that at most `max_concurrent` of its trials run."""

    searcher: S
    max_concurrent: int
    batch: bool = False
    live: tuple[str, ...] = ()
    held: tuple[HeldCompletion, ...] = ()
    count_paused: bool | UnsetType = UNSET
    paused_ids: tuple[str, ...] | UnsetType = UNSET

    def __post_init__(self) -> None:
        require_int("ConcurrencyLimiter.max_concurrent", self.max_concurrent, minimum=1)
        require_bool("ConcurrencyLimiter.batch", self.batch)
        if self.count_paused is not UNSET:
            require_bool("ConcurrencyLimiter.count_paused", self.count_paused)
            if self.count_paused:  # the default is not encoded (older logs)
                msgspec.structs.force_setattr(self, "count_paused", UNSET)
        if self.paused_ids == ():
            msgspec.structs.force_setattr(self, "paused_ids", UNSET)
        # Leaving paused trials out, a resumed one may exceed the bound for a
        # while (as in Ray): only a limiter counting every trial checks it.
        if self.count_paused is UNSET and len(self.live) > self.max_concurrent:
            raise InvalidFieldError(
                "ConcurrencyLimiter.live", self.live, f"at most {self.max_concurrent} trial ids"
            )

    @property
    def paused(self) -> tuple[str, ...]:
        """Paused trials not counted against `max_concurrent`."""
        return () if isinstance(self.paused_ids, UnsetType) else self.paused_ids

    @property
    def is_finished(self) -> bool:
        return self.searcher.is_finished

    @property
    def metric(self) -> str | None:
        """The wrapped searcher's metric, for strict metric checking."""
        return policy_metric(self.searcher)

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        return msgspec.structs.replace(self, searcher=self.searcher.with_objective(metric, mode))

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        if len(self.live) - len(self.paused) >= self.max_concurrent:
            return self, None
        searcher, suggestion = self.searcher.suggest(trial_id)
        if suggestion is None:
            return msgspec.structs.replace(self, searcher=searcher), None
        live = (*self.live, trial_id)
        return msgspec.structs.replace(self, searcher=searcher, live=live), suggestion

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self:
        if trial_id not in self.live or any(h.trial_id == trial_id for h in self.held):
            return self
        return msgspec.structs.replace(
            self, searcher=self.searcher.on_trial_result(trial_id, result)
        )

    def on_trial_pause(self, trial_id: str) -> Self:
        """Passed on to the wrapped searcher; with `count_paused=False` the
        trial also stops counting against `max_concurrent` until resumed."""
        if trial_id not in self.live:
            return self
        searcher = paused_in(self.searcher, trial_id, paused=True)
        paused = self.paused
        if self.count_paused is False and trial_id not in paused:
            paused = (*paused, trial_id)
        return self._after_pause(searcher, paused)

    def on_trial_unpause(self, trial_id: str) -> Self:
        if trial_id not in self.live:
            return self
        searcher = paused_in(self.searcher, trial_id, paused=False)
        return self._after_pause(searcher, tuple(p for p in self.paused if p != trial_id))

    def _after_pause(self, searcher: S, paused: tuple[str, ...]) -> Self:
        """This limiter itself when a pause changed nothing (the common case:
        a limiter that counts paused trials around a searcher that does not
        hear pauses), so the loop's identity checks see no new policy."""
        if searcher is self.searcher and paused == self.paused:
            return self
        return msgspec.structs.replace(self, searcher=searcher, paused_ids=_ids(paused))

    def on_trial_complete(
        self, trial_id: str, result: JsonDict | None = None, *, error: bool = False
    ) -> Self:
        if trial_id not in self.live:
            return self
        paused = tuple(p for p in self.paused if p != trial_id)
        if not self.batch:
            searcher = self.searcher.on_trial_complete(trial_id, result, error=error)
            live = tuple(live_id for live_id in self.live if live_id != trial_id)
            return msgspec.structs.replace(
                self, searcher=searcher, live=live, paused_ids=_ids(paused)
            )
        if any(h.trial_id == trial_id for h in self.held):
            return self
        held = (*self.held, HeldCompletion(trial_id, result, error))
        if len(held) < len(self.live):
            return msgspec.structs.replace(self, held=held, paused_ids=_ids(paused))
        searcher = self.searcher
        for completion in held:
            searcher = searcher.on_trial_complete(
                completion.trial_id, completion.result, error=completion.error
            )
        return msgspec.structs.replace(self, searcher=searcher, live=(), held=(), paused_ids=UNSET)

    def _wrapped(self, name: str) -> Callable[..., object]:
        return method_of_wrapped("ConcurrencyLimiter", self.searcher, name)

    # -- Ray's Searcher API, passed on to the wrapped searcher object, as Ray's
    # limiter passes it (called on the limiter before it is given to a Tuner)

    @property
    def mode(self) -> object:
        """The wrapped searcher's mode ('min', 'max', or None)."""
        mode = getattr(self.searcher, "mode", None)
        return mode.value if isinstance(mode, Mode) else mode

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: JsonDict, **spec: object
    ) -> bool:
        """Ray's: the wrapped searcher takes the metric, mode and space."""
        taken = self._wrapped("set_search_properties")(metric, mode, config, **spec)
        return bool(taken)

    def add_evaluated_point(
        self,
        parameters: JsonDict,
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """Ray's: a point evaluated outside the search, told to the wrapped
        searcher (which raises NotImplementedError if it cannot take one)."""
        self._wrapped("add_evaluated_point")(parameters, value, error, pruned, intermediate_values)

    def add_evaluated_trials(self, trials_or_analysis: object, metric: str) -> None:
        """Ray's: an earlier run's trials, each told to the wrapped searcher
        as a point (`Searcher.add_evaluated_trials`)."""
        self._wrapped("add_evaluated_trials")(trials_or_analysis, metric)

    def save(self, checkpoint_path: str) -> None:
        """Ray's: the wrapped searcher saves itself, to its file in its own
        format (a searcher of the user's own)."""
        self._wrapped("save")(checkpoint_path)

    def restore(self, checkpoint_path: str) -> None:
        """Ray's: the wrapped searcher restores itself from what its `save`
        wrote, before the limiter is given to a Tuner."""
        self._wrapped("restore")(checkpoint_path)

    def restore_from_dir(self, checkpoint_dir: str) -> None:
        """Ray's: the wrapped searcher continues from the one that ran the
        experiment in `checkpoint_dir` (`Searcher.restore_from_dir`)."""
        self._wrapped("restore_from_dir")(checkpoint_dir)


def _ids(paused: tuple[str, ...]) -> tuple[str, ...] | UnsetType:
    """`paused_ids` as encoded: UNSET when empty, so a limiter that counts
    paused trials encodes as it did before the field existed."""
    return paused or UNSET
