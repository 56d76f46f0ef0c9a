"""Ray's Repeater: every config is run `repeat` times and judged by the mean.

Noisy objectives are averaged out by running the same config several
times. The wrapped searcher suggests once; the repeater hands that
suggestion out to `repeat` trials (a group, whose first trial is the
primary), and when every trial of the group has completed it reports one
completion to the wrapped searcher, under the primary trial's id, with
`{metric: mean of the group's metric}`.

Invariants
- `groups` holds only groups that have not yet been reported, oldest
  first; a group leaves as soon as it is reported, so the state stays as
  small as the number of unfinished groups. Only the last group may still
  be handing out copies.
- The trials of a group are handed out consecutively: the wrapped
  searcher is asked again only once the last group has `repeat` trials.
- The mean ignores trials whose result is missing or has no numeric
  (non-NaN) metric, like Ray's `np.nanmean`; it is NaN when none has one.
  The `error` flag passed on is that of the trial that completed the group,
  as in Ray.
- Intermediate results are not forwarded (Ray's Repeater neither): the
  wrapped searcher sees one result per config.
- With `set_index` each config gets `__trial_index__` = the trial's position
  in its group (0 for the primary), as Ray does. `evaluated_params` and
  `experiment_tag` are the wrapped searcher's, the same for the whole group.

Generic in the wrapped searcher like `ConcurrencyLimiter`: decode with
`from_msgpack(data, Repeater[BasicVariantGenerator])`.
"""

from __future__ import annotations

import math
from typing import Generic, Self, TypeVar

import msgspec

from tunecore.core.search.base import (
    PassesRequestsThrough,
    SearchPolicy,
    Suggestion,
    method_of_wrapped,
)
from tunecore.core.search.domains import copy_json
from tunecore.model import InvalidFieldError, JsonDict, Mode, ModeArg
from tunecore.model.errors import require_bool, require_int, require_name
from tunecore.model.numbers import is_number

S = TypeVar("S", bound=SearchPolicy)

TRIAL_INDEX = "__trial_index__"


class TrialGroup(msgspec.Struct, frozen=True, kw_only=True):
    """The trials sharing one suggestion, and the scores they reported."""

    primary_id: str
    suggestion: Suggestion
    members: tuple[str, ...]
    completed: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()


class Repeater(msgspec.Struct, PassesRequestsThrough, Generic[S], frozen=True, tag=True):
    """Wraps `searcher` so that each of its suggestions runs `repeat` times."""

    searcher: S
    repeat: int = 1
    set_index: bool = True
    metric: str | None = None
    mode: ModeArg | None = None
    groups: tuple[TrialGroup, ...] = ()

    def __post_init__(self) -> None:
        require_int("Repeater.repeat", self.repeat, minimum=1)
        require_bool("Repeater.set_index", self.set_index)
        if self.metric is not None:
            require_name("Repeater.metric", self.metric)
        if self.mode is not None:
            msgspec.structs.force_setattr(self, "mode", Mode(self.mode))

    @property
    def is_finished(self) -> bool:
        return self.searcher.is_finished and self._handing_out() is None

    def _handing_out(self) -> TrialGroup | None:
        """The last group, if it still needs trials."""
        if self.groups and len(self.groups[-1].members) < self.repeat:
            return self.groups[-1]
        return None

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Needs a metric to average; raises `InvalidFieldError` if neither
        this repeater nor the experiment names one."""
        metric = self.metric if self.metric is not None else metric
        mode = Mode(self.mode) if self.mode is not None else mode
        if metric is None:
            raise InvalidFieldError(
                "Repeater.metric", None, "a metric name to average (set it here or in TuneConfig)"
            )
        searcher = self.searcher.with_objective(metric, mode)
        return msgspec.structs.replace(self, searcher=searcher, metric=metric, mode=mode)

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        group = self._handing_out()
        searcher = self.searcher
        if group is not None:
            index = len(group.members)
            group = msgspec.structs.replace(group, members=(*group.members, trial_id))
            groups = (*self.groups[:-1], group)
        else:
            searcher, suggestion = searcher.suggest(trial_id)
            if suggestion is None:
                return msgspec.structs.replace(self, searcher=searcher), None
            index = 0
            group = TrialGroup(primary_id=trial_id, suggestion=suggestion, members=(trial_id,))
            groups = (*self.groups, group)
        return (
            msgspec.structs.replace(self, searcher=searcher, groups=groups),
            self._copy(group.suggestion, index),
        )

    def _copy(self, suggestion: Suggestion, index: int) -> Suggestion:
        config = copy_json(suggestion.config)
        assert isinstance(config, dict)
        if self.set_index:
            config[TRIAL_INDEX] = index
        return msgspec.structs.replace(suggestion, config=config)

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self:
        return self

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: JsonDict, **spec: object
    ) -> bool:
        """Ray's: the wrapped searcher object takes the metric, mode and
        space (called on the repeater before it is given to a Tuner)."""
        taken = method_of_wrapped("Repeater", self.searcher, "set_search_properties")(
            metric, mode, config, **spec
        )
        return bool(taken)

    def on_trial_complete(
        self, trial_id: str, result: JsonDict | None = None, *, error: bool = False
    ) -> Self:
        position = next(
            (i for i, group in enumerate(self.groups) if trial_id in group.members), None
        )
        if position is None:
            return self
        group = self.groups[position]
        if trial_id in group.completed:
            return self
        if self.metric is None:
            raise InvalidFieldError(
                "Repeater.metric", None, "a metric name (call with_objective before running)"
            )
        scores = group.scores
        score = None if result is None else result.get(self.metric)
        if is_number(score) and not math.isnan(score):
            scores = (*scores, float(score))
        group = msgspec.structs.replace(
            group, completed=(*group.completed, trial_id), scores=scores
        )
        if len(group.completed) < self.repeat:
            groups = (*self.groups[:position], group, *self.groups[position + 1 :])
            return msgspec.structs.replace(self, groups=groups)
        mean = math.fsum(scores) / len(scores) if scores else math.nan
        searcher = self.searcher.on_trial_complete(
            group.primary_id, {self.metric: mean}, error=error
        )
        groups = (*self.groups[:position], *self.groups[position + 1 :])
        return msgspec.structs.replace(self, searcher=searcher, groups=groups)
