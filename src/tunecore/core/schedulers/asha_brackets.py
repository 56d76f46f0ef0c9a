"""What ASHA's two variants share: their configuration and its checks, the
brackets a trial is drawn into, the per-trial standings and the
bookkeeping on them. `ASHAScheduler` (`asha`, the stopping variant) and
`ASHAPromotionScheduler` (`asha_promotion`) are composed over this and the
rung math of `asha_rungs`, as Optuna's Hyperband is over its successive
halving; each keeps only its own rule for a result that reaches a
milestone, and for which trial runs next.

`ASHABrackets` declares no field itself: each variant declares the fields
below in the order its stored form has them (msgspec encodes fields in
declaration order, and the stopping variant's order predates the split),
so they are declared here for the type checker only.

Invariants (both variants):

- `standings` holds exactly the live trials: added and not yet completed,
  errored or removed. What rungs recorded stays after a trial leaves (as in
  Ray: its evidence keeps counting).
- A trial's standing says which rungs of its bracket it recorded in (a bit
  per rung), and `next_at`, the smallest milestone it has not recorded
  (`-inf` while it waits for promotion). Nothing can be decided for a
  result whose time is below `next_at` and below `max_t`, so such a result
  costs one map lookup and a few comparisons and changes no state: that is
  the fast path every result that crosses no milestone takes (`measured`).
- With one bracket no randomness is drawn; with several, the bracket of a
  new trial is drawn from the seeded `Rng` with Ray's softmax weights over
  the brackets' rung counts, so the same adds give the same brackets.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, Self, TypeAlias

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.core.rng import Rng
from tunecore.core.schedulers.asha_rungs import (
    Move,
    Rung,
    Standing,
    check_milestone_fields,
    draw_bracket,
    empty_rungs,
)
from tunecore.core.schedulers.base import (
    adopt_objective,
    check_objective_fields,
    evolve,
    known_objective,
    require_objective,
    signed,
)
from tunecore.model import InvalidFieldError, JsonDict, Mode, ModeArg, TrialState
from tunecore.model.errors import require_bool, require_int
from tunecore.model.numbers import is_number

Describe: TypeAlias = Callable[[tuple[Rung, ...], float], str]
"""A variant's summary of one bracket's rungs."""


class Measured(NamedTuple):
    """A result a rule must look at: the trial's standing, the time and the
    metric's value (both numbers)."""

    standing: Standing
    now: float
    value: float


class ASHABrackets(msgspec.Struct, frozen=True, kw_only=True):
    """The variants' shared part (see the module docstring). Configuration
    (Ray's `AsyncHyperBandScheduler` names and defaults): `time_attr` names
    the monotonically increasing progress measure, `metric`/`mode` the
    objective (None until `with_objective`), `max_t` the time at which
    trials stop, `grace_period` the first milestone, `reduction_factor` the
    rate of halving, `brackets` how many brackets (bracket s starts at
    `grace_period * reduction_factor**s`), `stop_last_trials` whether
    reaching `max_t` stops a trial, `seed` the bracket draws' seed. State:
    `rungs[bracket][i]` is the rung at the bracket's i-th milestone
    (ascending), `standings` the live trials, `num_stopped` the STOP
    verdicts given, `rng` the generator after the draws so far (None before
    the first)."""

    if TYPE_CHECKING:  # the variants' own fields (see the module docstring)
        time_attr: str
        metric: str | None
        mode: ModeArg | None
        max_t: int | float
        grace_period: int | float
        reduction_factor: int | float
        brackets: int
        stop_last_trials: bool
        seed: int
        rungs: tuple[tuple[Rung, ...], ...]
        standings: ShardedMap[str, Standing]
        num_stopped: int
        rng: Rng | None

    def check_brackets(self) -> None:
        """The shared fields' checks, then the empty rungs when none are
        given (a new scheduler), else as many as there are brackets."""
        owner = type(self).__name__
        check_objective_fields(self, self.time_attr, self.metric, self.mode)
        check_milestone_fields(owner, self.max_t, self.grace_period, self.reduction_factor)
        require_int(f"{owner}.brackets", self.brackets, minimum=1)
        require_bool(f"{owner}.stop_last_trials", self.stop_last_trials)
        require_int(f"{owner}.seed", self.seed)
        if not self.rungs:
            rungs = empty_rungs(self.grace_period, self.max_t, self.reduction_factor, self.brackets)
            msgspec.structs.force_setattr(self, "rungs", rungs)
        elif len(self.rungs) != self.brackets:
            raise InvalidFieldError(
                f"{owner}.rungs",
                len(self.rungs),
                f"one tuple of rungs per bracket ({self.brackets})",
            )

    # -- the protocol's shared hooks --------------------------------------------

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Take the experiment's metric and mode where none was given; rungs
        cannot compare trials without both."""
        return adopt_objective(self, (self.metric, self.mode), metric, mode)

    def on_trial_add(self, trial: TrialState) -> Self:
        """Assign the trial a bracket (Ray's softmax draw when there are
        several). Fails, as Ray does, when the objective is missing."""
        require_objective(type(self).__name__, self.metric, self.mode)
        trial_id = trial.trial_id
        if trial_id in self.standings:
            return self
        bracket, rng = draw_bracket(self.rungs, self.rng, self.seed)
        rungs = self.rungs[bracket]
        first = float(rungs[0].milestone) if rungs else math.inf
        standings = self.standings.set(trial_id, Standing(bracket=bracket, next_at=first))
        return evolve(self, standings=standings, rng=rng)

    def on_trial_error(self, trial: TrialState) -> Self:
        return self.forget(trial.trial_id)

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self.forget(trial.trial_id)

    def trials_to_stop(self) -> tuple[str, ...]:
        """Stops only the trial that reports."""
        return ()

    # -- bookkeeping --------------------------------------------------------------

    def measured(
        self, trial_id: str, result: JsonDict, *, at_milestone: bool = False
    ) -> Measured | None:
        """What a rule looks at, or None when the result carries nothing to
        record: a trial it does not hold (ended, or never added: ignored, as
        the protocol asks), or a time or metric that is absent or not a
        number; with `at_milestone`, also a result below the trial's next
        milestone and below `max_t`, on which nothing can be decided (the
        fast path: no allocation, no state change)."""
        standing = self.standings.get(trial_id)
        if standing is None:
            return None
        now = result.get(self.time_attr)
        value = result.get(known_objective(self.metric, self.mode).metric)
        if not (is_number(now) and is_number(value)):
            return None
        if (
            at_milestone
            and now < standing.next_at
            and (now < self.max_t or not self.stop_last_trials)
        ):
            return None
        return Measured(standing, now, value)

    def score(self, value: float) -> float:
        """The metric's value signed by the mode: greater is better."""
        return float(signed(value, known_objective(self.metric, self.mode).mode))

    def moved(self, trial_id: str, move: Move) -> Self:
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

    def stopped(self) -> Self:
        return evolve(self, num_stopped=self.num_stopped + 1)

    def forget(self, trial_id: str) -> Self:
        """The trial is no longer live (see the invariants)."""
        if trial_id not in self.standings:
            return self
        return evolve(self, standings=self.standings.discard(trial_id))

    def cutoffs_reached(
        self, time: float, mode: Mode | None = None
    ) -> list[tuple[Rung, float | None]]:
        """The rungs that recorded a result at a milestone at or below
        `time`, the highest first (a tie in bracket order), each with its
        cutoff as a value of the metric (None when only NaN was recorded):
        the first is the rung that judged a trial stopped at `time`, as the
        dashboard and the plot tell it. `mode`: the experiment's, for a
        scheduler not given its own."""
        reached = sorted(
            (
                rung
                for rungs in self.rungs
                for rung in rungs
                if rung.milestone <= time and rung.recorded
            ),
            key=lambda rung: rung.milestone,
            reverse=True,  # stable: a tie keeps the brackets' order
        )
        as_metric = Mode(self.mode or mode or Mode.MIN)
        cutoffs = [(rung, rung.cutoff(self.reduction_factor)) for rung in reached]
        return [
            (rung, None if cut is None or math.isnan(cut) else signed(cut, as_metric))
            for rung, cut in cutoffs  # signed is its own inverse
        ]

    def summary(self, name: str, describe: Describe) -> str:
        """Ray's summary: the stop count, then each bracket's rungs as the
        variant describes them."""
        out = [f"Using AsyncHyperBand ({name}): num_stopped={self.num_stopped}"]
        out.extend("Bracket: " + describe(rungs, self.reduction_factor) for rungs in self.rungs)
        return "\n".join(out)
