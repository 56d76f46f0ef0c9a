"""Asynchronous successive halving (ASHA), in two variants.

Theory of operation (Li et al. 2020, "A System for Massively Parallel
Hyperparameter Tuning"): a trial earns resources step by step. Each bracket
has rungs at the milestones `grace_period * reduction_factor**(k + s)` of
the time attribute (`s` is the bracket's index); a trial reaching a
milestone is compared with the trials that reached it before, and only
about the best `1/reduction_factor` of them get to go further. No rung ever
waits for a full cohort, which is what makes it asynchronous.

This module holds `ASHAScheduler`, the scheduler users build, and what both
variants share (configuration, brackets, the fast path, bookkeeping). The
variants differ in what "go further" means and in how a rung decides it;
each has its own module with its rules and their reasons:

- `variant="stopping"` (`asha_stopping`), Ray Tune's
  `AsyncHyperBandScheduler`: a trial reaching a milestone STOPs below the
  rung's cutoff (Ray's interpolated percentile), else CONTINUEs.
- `variant="promotion"` (`asha_promotion`), the paper's Algorithm 2: a
  trial reaching a milestone PAUSEs; `choose_trial_to_run` resumes one in
  the rank-based top k of its rung, which is promoted or STOPs.

Both STOP a trial reaching `max_t` (with `stop_last_trials`).

The milestones, the `Rung` and `Standing` state both variants keep, and the
rung math live in `asha_rungs` (one `Rung` type for both variants: see there
why).

Scores are signed (`base.signed`): greater is always better, so `mode="min"`
flips the sign before any comparison.

Missing values: a result whose time attribute or metric is absent or not a
number gets CONTINUE and records nothing, even at `max_t` (Ray returns
CONTINUE before its `max_t` check in that case; Ray warns, a pure core has
nowhere to warn, and the experiment's strict metric checking already fails
trials that report without the metric).

Invariants:

- `standings` holds exactly the live trials: added and not yet completed,
  errored or removed. What rungs recorded stays after a trial leaves (as in
  Ray: its evidence keeps counting).
- A trial's standing says which rungs of its bracket it recorded in (a bit
  per rung), and `next_at`, the smallest milestone it has not recorded
  (`-inf` while it waits for promotion). Nothing can be decided for a
  result whose time is below `next_at` and below `max_t`, so such a result
  costs one map lookup and a few comparisons and changes no state: that is
  the fast path every result that crosses no milestone takes.
- The rungs' invariants are in `asha_rungs`, the promotion variant's
  (`waiting`) in `asha_promotion`.
- With one bracket no randomness is drawn; with several, the bracket of a
  new trial is drawn from the seeded `Rng` with Ray's softmax weights over
  the brackets' rung counts, so the same adds give the same brackets.

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
- If `metric` is None but `mode` is set, Ray falls back to its anonymous
  metric `_metric`; here both are required (`require_objective`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal, Self

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.core.rng import Rng
from tunecore.core.schedulers import asha_promotion as promotion
from tunecore.core.schedulers import asha_stopping as stopping
from tunecore.core.schedulers.asha_rungs import (
    Move,
    Rung,
    Standing,
    check_milestone_fields,
    draw_bracket,
    empty_rungs,
    interpolated_percentile,
    rung_milestones,
)
from tunecore.core.schedulers.base import (
    CONTINUE,
    PAUSE,
    STOP,
    Fits,
    Horizon,
    Verdict,
    adopt_objective,
    check_objective_fields,
    evolve,
    first_fitting,
    known_objective,
    require_objective,
    signed,
)
from tunecore.model import InvalidFieldError, JsonDict, Mode, TrialState
from tunecore.model.errors import require_bool, require_int
from tunecore.model.numbers import is_number

__all__ = [
    "VARIANTS",
    "ASHAScheduler",
    "Rung",
    "Standing",
    "Variant",
    "interpolated_percentile",
    "rung_milestones",
]

_OWNER = "ASHAScheduler"

Variant = Literal["stopping", "promotion"]
VARIANTS: tuple[Variant, ...] = ("stopping", "promotion")


class ASHAScheduler(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Asynchronous successive halving; see the module docstring for the two
    variants, the cutoff rules and the invariants.

    Configuration (Ray's `AsyncHyperBandScheduler` names and defaults):
    `time_attr` names the monotonically increasing progress measure,
    `metric`/`mode` the objective (None until `with_objective`), `max_t` the
    time at which trials stop, `grace_period` the first milestone,
    `reduction_factor` the rate of halving, `brackets` how many brackets
    (bracket s starts at `grace_period * reduction_factor**s`),
    `stop_last_trials` whether reaching `max_t` stops a trial, `variant`
    stopping (Ray) or promotion (the paper), `seed` the bracket draws' seed.
    State: `rungs[bracket][i]` is the rung at the bracket's i-th milestone
    (ascending), `standings` the live trials, `waiting`/`records` the
    promotion bookkeeping, `num_stopped` the STOP verdicts given, `rng` the
    generator after the draws so far (None before the first).
    """

    time_attr: str = "training_iteration"
    metric: str | None = None
    mode: Mode | None = None
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
        check_objective_fields(self, self.time_attr, self.metric, self.mode)
        check_milestone_fields(_OWNER, self.max_t, self.grace_period, self.reduction_factor)
        require_int(f"{_OWNER}.brackets", self.brackets, minimum=1)
        require_bool(f"{_OWNER}.stop_last_trials", self.stop_last_trials)
        if self.variant not in VARIANTS:
            raise InvalidFieldError(
                f"{_OWNER}.variant", self.variant, "'stopping' (Ray) or 'promotion' (the paper)"
            )
        require_int(f"{_OWNER}.seed", self.seed)
        if not self.rungs:
            rungs = empty_rungs(self.grace_period, self.max_t, self.reduction_factor, self.brackets)
            msgspec.structs.force_setattr(self, "rungs", rungs)
        elif len(self.rungs) != self.brackets:
            raise InvalidFieldError(
                f"{_OWNER}.rungs",
                len(self.rungs),
                f"one tuple of rungs per bracket ({self.brackets})",
            )

    # -- the protocol -----------------------------------------------------------

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Take the experiment's metric and mode where none was given; rungs
        cannot compare trials without both."""
        return adopt_objective(self, (self.metric, self.mode), metric, mode)

    def on_trial_add(self, trial: TrialState) -> Self:
        """Assign the trial a bracket (Ray's softmax draw when there are
        several). Fails, as Ray does, when the objective is missing."""
        require_objective(_OWNER, self.metric, self.mode)
        trial_id = trial.trial_id
        if trial_id in self.standings:
            return self
        bracket, rng = draw_bracket(self.rungs, self.rng, self.seed)
        rungs = self.rungs[bracket]
        first = float(rungs[0].milestone) if rungs else math.inf
        standings = self.standings.set(trial_id, Standing(bracket=bracket, next_at=first))
        return evolve(self, standings=standings, rng=rng)

    def decides_next_at(self, trial_id: str) -> Horizon | None:
        """The stopping variant decides only at the trial's next milestone
        (`next_at`) and at `max_t`: below both, `on_trial_result` takes the
        fast path. The promotion variant's pauses depend on more."""
        standing = self.standings.get(trial_id)
        if self.variant != "stopping" or standing is None:
            return None
        return (self.time_attr, stopping.decides_at(standing, self.max_t, self.stop_last_trials))

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """The fast path (see the invariants), else the variant's rule."""
        trial_id = trial.spec.trial_id
        standing = self.standings.get(trial_id)
        if standing is None:
            return self, CONTINUE  # not a trial it holds (ended, or never added): ignored
        now = result.get(self.time_attr)
        value = result.get(known_objective(self.metric, self.mode).metric)
        if not (is_number(now) and is_number(value)):
            return self, CONTINUE
        if now < standing.next_at and (now < self.max_t or not self.stop_last_trials):
            return self, CONTINUE
        if self.variant == "promotion":
            return self._promotion_result(trial_id, standing, now, value)
        if now >= self.max_t and self.stop_last_trials:
            return self._stopped(), STOP
        scheduler, stop = self._record_stopping(trial_id, standing, now, value)
        if stop:
            return scheduler._stopped(), STOP
        return scheduler, CONTINUE

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        """Record the last result (it can fill a rung the trial skipped, but
        never stops anyone), then forget the trial. Stopping: as Ray. The
        promotion variant forgets a trial the moment it stops it, so this
        only records trials that ended on their own: a trial resumed just to
        be stopped must not land in a rung it was never promoted to."""
        trial_id = trial.trial_id
        standing = self.standings.get(trial_id)
        if standing is None:
            return self
        scheduler = self
        now = result.get(self.time_attr)
        value = result.get(known_objective(self.metric, self.mode).metric)
        if is_number(now) and is_number(value):
            if self.variant == "stopping":
                scheduler, _ = self._record_stopping(trial_id, standing, now, value)
            else:
                scheduler = self._unwait(trial_id, standing)
                standing = scheduler.standings.get(trial_id) or standing
                final = scheduler._record_promotion(trial_id, standing, now, value, pause=False)
                scheduler = scheduler if final is None else final
        return scheduler._forget(trial_id)

    def on_trial_error(self, trial: TrialState) -> Self:
        return self._forget(trial.trial_id)

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self._forget(trial.trial_id)

    def trials_to_stop(self) -> tuple[str, ...]:
        """Stops only the trial that reports."""
        return ()

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """Stopping: FIFO (new trials first, then paused ones, in the order
        added). Promotion: the paper's `get_job` (`asha_promotion.choose`)."""
        if self.variant == "stopping":
            return first_fitting(pending, paused, fits)
        return promotion.choose(
            self.rungs,
            self.standings,
            self.waiting,
            reduction_factor=self.reduction_factor,
            pending=pending,
            paused=paused,
            fits=fits,
        )

    def debug_string(self) -> str:
        """Ray's summary: the stop count, then each bracket's milestones with
        their cutoff (stopping) or recorded/promotable counts (promotion)."""
        describe = stopping.describe if self.variant == "stopping" else promotion.describe
        out = [f"Using AsyncHyperBand ({self.variant}): num_stopped={self.num_stopped}"]
        out.extend("Bracket: " + describe(rungs, self.reduction_factor) for rungs in self.rungs)
        return "\n".join(out)

    # -- the stopping variant (its rules: asha_stopping) ------------------------

    def _record_stopping(
        self, trial_id: str, standing: Standing, now: float, value: float
    ) -> tuple[Self, bool]:
        """Record the result at the rung it decides at, if any, and whether
        that rung stops the trial (`asha_stopping.record`)."""
        recorded = stopping.record(
            self.rungs[standing.bracket],
            standing,
            now,
            self._score(value),
            reduction_factor=self.reduction_factor,
            stop_last_trials=self.stop_last_trials,
        )
        if recorded is None:
            return self, False
        move, stop = recorded
        return self._moved(trial_id, move), stop

    # -- the promotion variant (its rules: asha_promotion) ----------------------

    def _promotion_result(
        self, trial_id: str, standing: Standing, now: float, value: float
    ) -> tuple[Self, Verdict]:
        """A trial resumed from a rung is promoted if it still is in that
        rung's top k, else stopped; then a trial past `max_t` stops and one
        reaching a higher milestone records there and pauses."""
        scheduler = self
        if standing.waiting >= 0:
            promoted = promotion.is_promoted(
                self.rungs[standing.bracket], standing, self.reduction_factor
            )
            scheduler = self._unwait(trial_id, standing)
            if not promoted:
                return scheduler._forget(trial_id)._stopped(), STOP
            standing = scheduler.standings.get(trial_id) or standing
        if now >= self.max_t and self.stop_last_trials:
            return scheduler._forget(trial_id)._stopped(), STOP
        paused = scheduler._record_promotion(trial_id, standing, now, value, pause=True)
        return (scheduler, CONTINUE) if paused is None else (paused, PAUSE)

    def _record_promotion(
        self, trial_id: str, standing: Standing, now: float, value: float, *, pause: bool
    ) -> Self | None:
        """The trial's score recorded at the highest rung it reached above
        its level, waiting there if `pause` (`asha_promotion.record`); None
        when it reached none."""
        move = promotion.record(
            self.rungs[standing.bracket],
            standing,
            now,
            self._score(value),
            order=self.records,
            pause_id=trial_id if pause else None,
        )
        if move is None:
            return None
        scheduler = self._moved(trial_id, move)
        waiting = scheduler.waiting + 1 if pause else scheduler.waiting
        return evolve(scheduler, waiting=waiting, records=scheduler.records + 1)

    def _unwait(self, trial_id: str, standing: Standing) -> Self:
        """The trial no longer waits at its rung (promoted, stopped or gone)."""
        if standing.waiting < 0:
            return self
        scheduler = self._moved(
            trial_id, promotion.unwait(self.rungs[standing.bracket], trial_id, standing)
        )
        return evolve(scheduler, waiting=scheduler.waiting - 1)

    # -- bookkeeping ------------------------------------------------------------

    def _score(self, value: float) -> float:
        """The metric's value signed by the mode: greater is better."""
        return float(signed(value, known_objective(self.metric, self.mode).mode))

    def _moved(self, trial_id: str, move: Move) -> Self:
        """The scheduler with the trial's standing and one rung of its
        bracket replaced, as a variant's rule says."""
        bracket = move.standing.bracket
        rungs = self.rungs[bracket]
        bracket_rungs = (*rungs[: move.level], move.rung, *rungs[move.level + 1 :])
        return evolve(
            self,
            rungs=(*self.rungs[:bracket], bracket_rungs, *self.rungs[bracket + 1 :]),
            standings=self.standings.set(trial_id, move.standing),
        )

    def _stopped(self) -> Self:
        return evolve(self, num_stopped=self.num_stopped + 1)

    def _forget(self, trial_id: str) -> Self:
        standing = self.standings.get(trial_id)
        if standing is None:
            return self
        scheduler = self._unwait(trial_id, standing)
        return evolve(scheduler, standings=scheduler.standings.discard(trial_id))
