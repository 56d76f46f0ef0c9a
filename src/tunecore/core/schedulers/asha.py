"""Asynchronous successive halving (ASHA): `ASHAScheduler`, Ray Tune's
stopping variant.

Theory of operation (Li et al. 2020, "A System for Massively Parallel
Hyperparameter Tuning"): a trial earns resources step by step. Each bracket
has rungs at the milestones `grace_period * reduction_factor**(k + s)` of
the time attribute (`s` is the bracket's index); a trial reaching a
milestone is compared with the trials that reached it before, and only
about the best `1/reduction_factor` of them get to go further. No rung ever
waits for a full cohort, which is what makes it asynchronous.

ASHA comes in two variants, two structs composed over what they share
(`asha_brackets`: configuration, brackets, the fast path, bookkeeping) and
the rung math (`asha_rungs`: milestones, the `Rung` and `Standing` state,
one `Rung` type for both: see there why). They differ in what "go further"
means and in how a rung decides it:

- `ASHAScheduler` (here, its rules in `asha_stopping`), Ray Tune's
  `AsyncHyperBandScheduler`: a trial reaching a milestone STOPs below the
  rung's cutoff (Ray's interpolated percentile), else CONTINUEs.
- `ASHAPromotionScheduler` (`asha_promotion`), the paper's Algorithm 2: a
  trial reaching a milestone PAUSEs; `choose_trial_to_run` resumes one in
  the rank-based top k of its rung, which is promoted or STOPs.

Both STOP a trial reaching `max_t` (with `stop_last_trials`).

Before the split both were `ASHAScheduler`, told apart by a `variant`
field. The stored form keeps it (a stored field is never removed; see
docs/architecture.md, "Schema evolution"): `variant` is always
"stopping" here and `waiting`/`records`, the promotion variant's counts,
always 0. A snapshot an older tunecore wrote of the promotion variant is
read by `ASHAStoredBeforeSplit` and upgraded to `ASHAPromotionScheduler`
(`tunecore.core.experiment.snapshot.decode_state`).

Scores are signed (`base.signed`): greater is always better, so `mode="min"`
flips the sign before any comparison.

Missing values: a result whose time attribute or metric is absent or not a
number gets CONTINUE and records nothing, even at `max_t` (Ray returns
CONTINUE before its `max_t` check in that case; Ray warns, a pure core has
nowhere to warn, and the experiment's strict metric checking already fails
trials that report without the metric).

Invariants: those of `asha_brackets` (the standings, the fast path, the
bracket draws) and of `asha_rungs` (the rungs).

How the state is kept (and serialised): every field is a plain msgspec
type, so the scheduler itself round-trips through
`tunecore.model.codec.to_msgpack`/`from_msgpack` and can sit inside any
struct the experiment encodes, with no conversion step. The per-trial map is
a `ShardedMap` (256 plain dicts selected by the trial id's CRC-32, which,
unlike `hash`, is the same in every process); an update copies one shard
and the 256-slot shard tuple, not the map; rung scores are `SortedChunks`
(see `asha_rungs`). Both are persistent: older schedulers keep their own
view.

Deviations from Ray (python/ray/tune/schedulers/async_hyperband.py), each
because Ray's behaviour there is an accident of its implementation:

- A metric whose value is not a number (None, a string, a bool) is treated
  as missing; Ray multiplies it by the sign and raises.
- `on_trial_error` forgets the trial (Ray keeps it forever), and
  `on_trial_complete` forgets it even when its last result lacks the metric.
- A result for a trial the scheduler does not hold (never told about, or
  ended) is ignored: CONTINUE, as the protocol asks (Ray raises `KeyError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Self

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.core.rng import Rng
from tunecore.core.schedulers import asha_stopping as stopping
from tunecore.core.schedulers.asha_brackets import ASHABrackets, Measured
from tunecore.core.schedulers.asha_promotion import ASHAPromotionScheduler
from tunecore.core.schedulers.asha_rungs import (
    Rung,
    Standing,
    interpolated_percentile,
    rung_milestones,
)
from tunecore.core.schedulers.base import (
    CONTINUE,
    STOP,
    Fits,
    Horizon,
    Verdict,
    first_fitting,
)
from tunecore.model import InvalidFieldError, JsonDict, ModeArg, TrialState

__all__ = [
    "VARIANTS",
    "ASHAPromotionScheduler",
    "ASHAScheduler",
    "ASHAStoredBeforeSplit",
    "Rung",
    "Standing",
    "Variant",
    "interpolated_percentile",
    "rung_milestones",
]

Variant = Literal["stopping", "promotion"]
VARIANTS: tuple[Variant, ...] = ("stopping", "promotion")
"""The values the stored `variant` field has held (see the module docstring)."""


class ASHAScheduler(ASHABrackets, frozen=True, kw_only=True, tag=True):
    """ASHA's stopping variant, Ray's `AsyncHyperBandScheduler`; see the
    module docstring for the rules and `ASHABrackets` for the fields.
    `variant`, `waiting` and `records` are the stored form's (always
    "stopping", 0 and 0)."""

    time_attr: str = "training_iteration"
    metric: str | None = None
    mode: ModeArg | None = None
    max_t: int | float = 100
    grace_period: int | float = 1
    reduction_factor: int | float = 4
    brackets: int = 1
    stop_last_trials: bool = True
    variant: Variant = "stopping"
    seed: int = 0
    rungs: tuple[tuple[Rung, ...], ...] = ()
    standings: ShardedMap[str, Standing] = ShardedMap()
    waiting: int = 0
    records: int = 0
    num_stopped: int = 0
    rng: Rng | None = None

    def __post_init__(self) -> None:
        if self.variant != "stopping":
            raise InvalidFieldError(
                "ASHAScheduler.variant",
                self.variant,
                "'stopping' (the paper's promotion variant is ASHAPromotionScheduler)",
            )
        self.check_brackets()

    def decides_next_at(self, trial_id: str) -> Horizon | None:
        """Decides only at the trial's next milestone (`next_at`) and at
        `max_t`: below both, `on_trial_result` takes the fast path."""
        standing = self.standings.get(trial_id)
        if standing is None:
            return None
        return (self.time_attr, stopping.decides_at(standing, self.max_t, self.stop_last_trials))

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """The fast path, else STOP at `max_t` or below the rung's cutoff."""
        trial_id = trial.spec.trial_id
        measured = self.measured(trial_id, result, at_milestone=True)
        if measured is None:
            return self, CONTINUE
        if measured.now >= self.max_t and self.stop_last_trials:
            return self.stopped(), STOP
        scheduler, stop = self._record(trial_id, measured)
        if stop:
            return scheduler.stopped(), STOP
        return scheduler, CONTINUE

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        """Record the last result (it can fill a rung the trial skipped, but
        never stops anyone), then forget the trial, as Ray does."""
        trial_id = trial.trial_id
        measured = self.measured(trial_id, result)
        scheduler = self if measured is None else self._record(trial_id, measured)[0]
        return scheduler.forget(trial_id)

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """FIFO: new trials first, then paused ones, in the order added."""
        return first_fitting(pending, paused, fits)

    def debug_string(self) -> str:
        """Ray's summary, each bracket's milestones with their cutoff."""
        return self.summary("stopping", stopping.describe)

    def _record(self, trial_id: str, measured: Measured) -> tuple[Self, bool]:
        """Record the result at the rung it decides at, if any, and whether
        that rung stops the trial (`asha_stopping.record`)."""
        standing = measured.standing
        recorded = stopping.record(
            self.rungs[standing.bracket],
            standing,
            measured.now,
            self.score(measured.value),
            reduction_factor=self.reduction_factor,
            stop_last_trials=self.stop_last_trials,
        )
        if recorded is None:
            return self, False
        move, stop = recorded
        return self.moved(trial_id, move), stop


class ASHAStoredBeforeSplit(ASHAScheduler, frozen=True, kw_only=True, tag="ASHAScheduler"):
    """ASHA as an older tunecore stored either variant (see the module
    docstring): read only when `ASHAScheduler` refuses a stored
    `variant="promotion"`, and at once `upgraded`."""

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise InvalidFieldError("ASHAScheduler.variant", self.variant, repr(VARIANTS))

    def upgraded(self) -> ASHAScheduler | ASHAPromotionScheduler:
        """The scheduler this stored form is today."""
        fields = msgspec.structs.asdict(self)
        if fields.pop("variant") == "stopping":
            return ASHAScheduler(**fields)
        return ASHAPromotionScheduler(**fields)
