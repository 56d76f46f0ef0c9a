"""ASHA's promotion variant, the paper's Algorithm 2: `ASHAPromotionScheduler`,
with its ranking, its pause and promotion rules, its `get_job` and its
summary. What it shares with the stopping variant (`ASHAScheduler`, where
ASHA's theory of operation is told) is in `asha_brackets` and `asha_rungs`.

A trial reaching a milestone records its score and PAUSEs.
`choose_trial_to_run` is the paper's `get_job`: from the highest rung down,
it resumes a paused trial that is in the top `floor(|rung| /
reduction_factor)` of its rung and not promoted yet; only when there is
none does it start a new (pending) trial. The resumed trial is promoted
when its next result arrives, if it still is in the top of its rung then
(results of other trials may have arrived in between); if it is not, it
STOPs. Reaching `max_t` STOPs it. A trial the variant stops is forgotten at
once (its last result records nothing). When nothing can change any rung
any more (no new trial, every live trial waiting, none promotable), the
waiting trials are resumed one by one to be stopped: the paper assumes an
endless stream of new trials, and an experiment must end.

The cutoff is rank-based top-k, as in the paper: `k = floor(|rung| /
reduction_factor)` where `|rung|` counts every trial the rung ever
recorded, and a trial is promotable while fewer than `k` recorded trials
rank above it. So at any moment exactly the `k` best of the rung are
eligible, and a tie cannot widen that set; an interpolated cutoff (the
stopping variant's) would admit a number that depends on how the scores are
spread, which is not the paper's rule nor what its analysis counts. (Over a
whole run a rung can promote more than its final `k`: each promotion is
judged against the rung as it was then, and the paper never revokes one.)
Ties: the trial that reached the rung earlier ranks higher; a NaN score
ranks as `-inf` (last; among NaNs the earlier one first).

Invariants: the scheduler's `waiting` counts the trials paused at a rung and
not yet promoted; each of them is in its rung's `waiting` index exactly
once. A trial's rung level only grows, so it can be promoted from a rung
once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Self

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.core.rng import Rng
from tunecore.core.schedulers.asha_brackets import ASHABrackets, Measured
from tunecore.core.schedulers.asha_rungs import Move, Rung, Standing, highest_reached
from tunecore.core.schedulers.base import (
    CONTINUE,
    PAUSE,
    STOP,
    Fits,
    Horizon,
    Verdict,
    evolve,
)
from tunecore.model import JsonDict, ModeArg, TrialState


def rank_key(score: float, order: int) -> tuple[float, int]:
    """A recorded trial's rank in its rung: its signed score (NaN as
    `-inf`), then the earlier record first."""
    return (-math.inf if math.isnan(score) else score, -order)


def is_promoted(rungs: tuple[Rung, ...], standing: Standing, reduction_factor: float) -> bool:
    """Whether a trial resumed from the rung it waits at is still in that
    rung's top k (it is promoted), rather than stopped."""
    assert standing.key is not None
    return rungs[standing.waiting].is_promotable(standing.key, reduction_factor)


def unwait(rungs: tuple[Rung, ...], trial_id: str, standing: Standing) -> Move:
    """The trial, waiting at a rung of the bracket `rungs`, no longer waits
    there (promoted, stopped or gone): it leaves the rung's `waiting` index
    and its next milestone is the next rung's."""
    assert standing.key is not None
    level = standing.waiting
    rung = rungs[level]
    updated = msgspec.structs.replace(rung, waiting=rung.waiting.remove((*standing.key, trial_id)))
    moved = Standing(
        bracket=standing.bracket,
        next_at=float(rungs[level + 1].milestone) if level + 1 < len(rungs) else math.inf,
        recorded=standing.recorded,
    )
    return Move(level, updated, moved)


def record(
    rungs: tuple[Rung, ...],
    standing: Standing,
    now: float,
    score: float,
    *,
    order: int,
    pause_id: str | None,
) -> Move | None:
    """A trial of the bracket `rungs` that reached a milestone above its
    level records its signed `score` (the `order`-th record) at the highest
    one it reached; None when it reached none. With `pause_id` (its id: a
    running trial) it waits there to be promoted. Without (a finished
    trial) its score only counts in `|rung|` and in the ranking, as a
    finished job does in the paper."""
    reached = highest_reached(rungs, now)
    if reached <= standing.recorded.bit_length() - 1:
        return None
    key = rank_key(score, order)
    rung = rungs[reached]
    recorded = standing.recorded | 1 << reached
    if pause_id is None:
        updated = msgspec.structs.replace(
            rung, recorded=rung.recorded + 1, ranked=rung.ranked.insert(key)
        )
        return Move(reached, updated, msgspec.structs.replace(standing, recorded=recorded))
    updated = msgspec.structs.replace(
        rung,
        recorded=rung.recorded + 1,
        ranked=rung.ranked.insert(key),
        waiting=rung.waiting.insert((*key, pause_id)),
    )
    moved = Standing(
        bracket=standing.bracket, next_at=-math.inf, recorded=recorded, waiting=reached, key=key
    )
    return Move(reached, updated, moved)


def choose(
    rungs: tuple[tuple[Rung, ...], ...],
    standings: ShardedMap[str, Standing],
    waiting: int,
    *,
    reduction_factor: float,
    pending: Sequence[TrialState],
    paused: Sequence[TrialState],
    fits: Fits,
) -> str | None:
    """The paper's `get_job`, then liveness, over the scheduler's `rungs`
    (by bracket), its live trials' `standings` and its count of `waiting`
    trials.

    1. From the highest milestone down (brackets in order at equal
       milestones), the best-ranked waiting trial of a rung that is in
       its top k, PAUSED (not resumed already) and fits.
    2. Else the first pending trial that fits (a new configuration).
       While pending trials wait for resources, nothing else starts.
    3. Else, when nothing can change any rung any more (no pending trial,
       every live trial waits at a rung, none of them promotable), the
       waiting trials can never be promoted: the first of them (in the
       order added) is resumed, if it fits, so that its next result stops
       it. The protocol has no way to stop a PAUSED trial directly, and
       the experiment would otherwise end in a dead end with them.
    4. Else the first paused trial this scheduler did not pause (a user
       pause, say) that fits.

    Cost: the protocol hands over paused trials as a sequence, so
    finding the promotable ones in it (step 1) and the user-paused ones
    (step 4) is a pass over it; step 3 looks at its head only. Steps 1
    and 4 are skipped when there is nothing for them to find.
    """
    candidates: list[str] = []
    order = sorted(
        (-float(rung.milestone), bracket, index)
        for bracket, bracket_rungs in enumerate(rungs)
        for index, rung in enumerate(bracket_rungs)
    )
    for _, bracket, index in order:
        rung = rungs[bracket][index]
        top = rung.promotions(reduction_factor)
        if not top or not rung.waiting:
            continue
        for score, negative_order, trial_id in rung.waiting.descending():
            if rung.ranked.count_above((score, negative_order)) >= top:
                break
            candidates.append(trial_id)
    if candidates:
        wanted = set(candidates)
        found: dict[str, TrialState] = {}
        for trial in paused:
            if trial.trial_id in wanted:
                found[trial.trial_id] = trial
                if len(found) == len(wanted):
                    break
        for trial_id in candidates:
            candidate = found.get(trial_id)
            if candidate is not None and fits(candidate):
                return trial_id
    for trial in pending:
        if fits(trial):
            return trial.trial_id
    if pending:
        return None
    live = len(standings)
    if not candidates and waiting == live:
        for trial in paused:
            standing = standings.get(trial.trial_id)
            if standing is not None and standing.waiting >= 0:
                return trial.trial_id if fits(trial) else None
        return None
    if live > waiting:
        for trial in paused:
            standing = standings.get(trial.trial_id)
            if standing is not None and standing.waiting < 0 and fits(trial):
                return trial.trial_id
    return None


def describe(rungs: tuple[Rung, ...], reduction_factor: float) -> str:
    """A bracket in the summary: each milestone, highest first, with how
    many trials it recorded, its top k and how many wait there."""
    return " | ".join(
        f"Iter {float(r.milestone):.3f}: {r.recorded} recorded, "
        f"top {r.promotions(reduction_factor)}, {len(r.waiting)} waiting"
        for r in reversed(rungs)
    )


class ASHAPromotionScheduler(ASHABrackets, frozen=True, kw_only=True, tag=True):
    """ASHA's promotion variant; see the module docstring for its rules and
    `ASHABrackets` for the fields it shares. `waiting` counts the trials
    paused at a rung and not promoted yet, `records` the scores recorded
    (each record's order, for ties)."""

    time_attr: str = "training_iteration"
    metric: str | None = None
    mode: ModeArg | None = None
    max_t: int | float = 100
    grace_period: int | float = 1
    reduction_factor: int | float = 4
    brackets: int = 1
    stop_last_trials: bool = True
    seed: int = 0
    rungs: tuple[tuple[Rung, ...], ...] = ()
    standings: ShardedMap[str, Standing] = ShardedMap()
    waiting: int = 0
    records: int = 0
    num_stopped: int = 0
    rng: Rng | None = None

    def __post_init__(self) -> None:
        self.check_brackets()

    def decides_next_at(self, trial_id: str) -> Horizon | None:
        """None: whether a trial pauses depends on more than its own time."""
        return None

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """The fast path, else: a trial resumed from a rung is promoted if
        it still is in that rung's top k, else stopped; then a trial past
        `max_t` stops and one reaching a higher milestone records there and
        pauses."""
        trial_id = trial.spec.trial_id
        measured = self.measured(trial_id, result, at_milestone=True)
        if measured is None:
            return self, CONTINUE
        scheduler, standing = self, measured.standing
        if standing.waiting >= 0:
            promoted = is_promoted(self.rungs[standing.bracket], standing, self.reduction_factor)
            scheduler = self._unwait(trial_id, standing)
            if not promoted:
                return scheduler.forget(trial_id).stopped(), STOP
            standing = scheduler.standings.get(trial_id) or standing
        if measured.now >= self.max_t and self.stop_last_trials:
            return scheduler.forget(trial_id).stopped(), STOP
        paused = scheduler._record(trial_id, measured._replace(standing=standing), pause=True)
        return (scheduler, CONTINUE) if paused is None else (paused, PAUSE)

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        """Record the last result, then forget the trial. The variant
        forgets a trial the moment it stops it, so this only records trials
        that ended on their own: a trial resumed just to be stopped must not
        land in a rung it was never promoted to."""
        trial_id = trial.trial_id
        measured = self.measured(trial_id, result)
        scheduler = self
        if measured is not None:
            scheduler = self._unwait(trial_id, measured.standing)
            standing = scheduler.standings.get(trial_id) or measured.standing
            final = scheduler._record(trial_id, measured._replace(standing=standing), pause=False)
            scheduler = scheduler if final is None else final
        return scheduler.forget(trial_id)

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """The paper's `get_job` (`choose`)."""
        return choose(
            self.rungs,
            self.standings,
            self.waiting,
            reduction_factor=self.reduction_factor,
            pending=pending,
            paused=paused,
            fits=fits,
        )

    def debug_string(self) -> str:
        """Ray's summary, each bracket's milestones with their recorded and
        promotable counts."""
        return self.summary("promotion", describe)

    def forget(self, trial_id: str) -> Self:
        """The trial no longer waits at its rung, nor is live."""
        standing = self.standings.get(trial_id)
        if standing is None:
            return self
        scheduler = self._unwait(trial_id, standing)
        return evolve(scheduler, standings=scheduler.standings.discard(trial_id))

    def _record(self, trial_id: str, measured: Measured, *, pause: bool) -> Self | None:
        """The trial's score recorded at the highest rung it reached above
        its level, waiting there if `pause` (`record`); None when it reached
        none."""
        move = record(
            self.rungs[measured.standing.bracket],
            measured.standing,
            measured.now,
            self.score(measured.value),
            order=self.records,
            pause_id=trial_id if pause else None,
        )
        if move is None:
            return None
        scheduler = self.moved(trial_id, move)
        waiting = scheduler.waiting + 1 if pause else scheduler.waiting
        return evolve(scheduler, waiting=waiting, records=scheduler.records + 1)

    def _unwait(self, trial_id: str, standing: Standing) -> Self:
        """The trial no longer waits at its rung (promoted, stopped or gone)."""
        if standing.waiting < 0:
            return self
        scheduler = self.moved(trial_id, unwait(self.rungs[standing.bracket], trial_id, standing))
        return evolve(scheduler, waiting=scheduler.waiting - 1)
