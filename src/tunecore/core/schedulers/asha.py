"""Asynchronous successive halving (ASHA), in two variants.

Theory of operation (Li et al. 2020, "A System for Massively Parallel
Hyperparameter Tuning"): a trial earns resources step by step. Each bracket
has rungs at the milestones `grace_period * reduction_factor**(k + s)` of the
time attribute (`s` is the bracket's index); a trial reaching a milestone
is compared with the trials that reached it before, and only about the best
`1/reduction_factor` of them get to go further. No rung ever waits for a
full cohort, which is what makes it asynchronous.

The two variants differ in what "go further" means:

- `variant="stopping"`, Ray Tune's `AsyncHyperBandScheduler` (what Tune users
  know): a trial reaching a milestone it has not recorded is compared with
  the *cutoff* of the scores that rung recorded *before* it; below the cutoff
  it STOPs, otherwise it CONTINUEs; either way its score is then recorded.
  Reaching `max_t` STOPs it. Waiting trials start in FIFO order.
- `variant="promotion"`, the paper's Algorithm 2: a trial reaching a
  milestone records its score and PAUSEs. `choose_trial_to_run` is the
  paper's `get_job`: from the highest rung down, it resumes a paused trial
  that is in the top `floor(|rung| / reduction_factor)` of its rung and not
  promoted yet; only when there is none does it start a new (pending) trial.
  The resumed trial is promoted when its next result arrives, if it still is
  in the top of its rung then (results of other trials may have arrived in
  between); if it is not, it STOPs. Reaching `max_t` STOPs it. A trial the
  variant stops is forgotten at once (its last result records nothing).
  When nothing can change any rung any more (no new trial, every live trial
  waiting, none promotable), the waiting trials are resumed one by one to
  be stopped: the paper assumes an endless stream of new trials, and an
  experiment must end.

The cutoff rules, and why each variant uses its own:

- Stopping: Ray's interpolated percentile, so a Tune user gets the same
  verdicts as with Ray. The cutoff is `numpy.nanpercentile(scores,
  (1 - 1/reduction_factor) * 100)` with numpy's default linear method,
  reimplemented here without numpy: NaN scores are ignored; with the `n`
  remaining scores sorted ascending, `v = (n - 1) * q` (`q` the percentile as
  a fraction), `g = v - floor(v)`, and the cutoff lies between the scores at
  `floor(v)` and `floor(v) + 1`, computed as numpy's `_lerp` does (`a + (b -
  a) * g`, or `b - (b - a) * (1 - g)` when `g >= 0.5`), so the float is
  bit-identical. Example: recorded `[1, 2, 3, 4]` at `reduction_factor=4`:
  `q = 0.75`, `v = 2.25`, cutoff `3 + (4 - 3) * 0.25 = 3.25`. A rung that
  recorded nothing has no cutoff; one that recorded only NaN has a NaN
  cutoff; neither stops anyone. Ties: a score *equal* to the cutoff
  continues (Ray compares with a strict `<`).
- Promotion: rank-based top-k, as in the paper: `k = floor(|rung| /
  reduction_factor)` where `|rung|` counts every trial the rung ever
  recorded, and a trial is promotable while fewer than `k` recorded trials
  rank above it. So at any moment exactly the `k` best of the rung are
  eligible, and a tie cannot widen that set; an interpolated cutoff would
  admit a number that depends on how the scores are spread, which is not
  the paper's rule nor what its analysis counts. (Over a whole run a rung
  can promote more than its final `k`: each promotion is judged against the
  rung as it was then, and the paper never revokes one.) Ties: the trial
  that reached the rung earlier ranks higher; a NaN score ranks as `-inf`
  (last; among NaNs the earlier one first).

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
- Each rung counts what it recorded (`recorded`, NaN included) and keeps the
  scores sorted (`SortedChunks`), so a cutoff or a rank costs O(log n) plus
  a bounded copy, never a sort.
- Promotion variant: `waiting` counts the trials paused at a rung and not
  yet promoted; each of them is in its rung's `waiting` index exactly once.
  A trial's rung level only grows, so it can be promoted from a rung once.
- With one bracket no randomness is drawn; with several, the bracket of a
  new trial is drawn from the seeded `Rng` with Ray's softmax weights over
  the brackets' rung counts, so the same adds give the same brackets.

How the state is kept (and serialised): every field is a plain msgspec
type, so the scheduler itself round-trips through
`tunecore.model.codec.to_msgpack`/`from_msgpack` and can sit inside any
struct the experiment encodes, with no conversion step. The per-trial map is
a `ShardedMap` (256 plain dicts selected by the trial id's CRC-32, which,
unlike `hash`, is the same in every process); an update copies one shard
and the 256-slot shard tuple, not the map. Rung scores are `SortedChunks`
(sorted tuples of at most 1024 keys); an insert copies one chunk and the
chunk index. Both are persistent: older schedulers keep their own view.

Deviations from Ray (python/ray/tune/schedulers/async_hyperband.py), each
because Ray's behaviour there is an accident of its implementation:

- A metric whose value is not a number (None, a string, a bool) is treated
  as missing; Ray multiplies it by the sign and raises.
- `on_trial_error` forgets the trial (Ray keeps it forever), and
  `on_trial_complete` forgets it even when its last result lacks the metric.
- A result for a trial the scheduler was never told about raises
  `InvalidFieldError` (Ray raises `KeyError`).
- Ray's quirk is kept on purpose: a trial that jumps over several milestones
  in one result records only at the highest one it reached; its next result
  then records at the lower ones it skipped (Ray walks the rungs from the
  top and skips the ones the trial recorded).
- If `metric` is None but `mode` is set, Ray falls back to its anonymous
  metric `_metric`; here both are required (`require_objective`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal, Self

import msgspec

from tunecore.core.persistent import ShardedMap, SortedChunks
from tunecore.core.results import is_number
from tunecore.core.rng import Rng, seeded, weighted_index
from tunecore.core.schedulers.base import (
    CONTINUE,
    PAUSE,
    STOP,
    Fits,
    Horizon,
    Verdict,
    evolve,
    known_objective,
    require_objective,
    resolve_objective,
    signed,
)
from tunecore.core.schedulers.fifo import first_fitting
from tunecore.model import InvalidFieldError, JsonDict, Mode, TrialState
from tunecore.model.errors import coerce_enum, require_bool, require_int, require_name

_OWNER = "ASHAScheduler"

Variant = Literal["stopping", "promotion"]
VARIANTS: tuple[Variant, ...] = ("stopping", "promotion")

# -- persistent containers ------------------------------------------------------


def rung_milestones(
    grace_period: float, max_t: float, reduction_factor: float, s: int
) -> tuple[float, ...]:
    """Bracket `s`'s milestones, ascending, exactly as Ray computes them:
    `int(log(max_t / grace_period) / log(reduction_factor) - s + 1)` rungs at
    `grace_period * reduction_factor**(k + s)`. The count uses float logs as
    Ray does, so for an exact power it inherits their rounding:
    `log(1000)/log(10)` is 2.9999999999999996, and `max_t=1000, rf=10` has
    rungs 1, 10, 100 only (the rung at 1000 would never matter while
    `stop_last_trials` stops trials there anyway)."""
    count = int(math.log(max_t / grace_period) / math.log(reduction_factor) - s + 1)
    return tuple(grace_period * reduction_factor ** (k + s) for k in range(count))


def interpolated_percentile(scores: SortedChunks[float], percent: float) -> float:
    """`numpy.percentile(scores, percent)` with the default linear method,
    bit for bit, for NaN-free ascending `scores` (at least one)."""
    count = len(scores)
    virtual = (count - 1) * (percent / 100)
    if virtual >= count - 1:
        # numpy takes the last score for both ends and a gamma of v + 1.
        below = above = scores.at(count - 1)
        gamma = virtual + 1
    else:
        lower = math.floor(virtual)
        below, above = scores.at(lower), scores.at(lower + 1)
        gamma = virtual - lower
    difference = above - below
    if gamma >= 0.5:
        return above - difference * (1 - gamma)
    return below + difference * gamma


class Rung(msgspec.Struct, frozen=True, kw_only=True):
    """One milestone of one bracket and what it recorded.

    `recorded` counts every score recorded here, NaN included (the paper's
    `|rung|`). Stopping variant: `scores` holds the non-NaN ones ascending.
    Promotion variant: `ranked` holds every recorded trial's rank key
    `(score, -order)` (NaN as `-inf`; `order` is when it was recorded, so an
    earlier trial wins a tie), and `waiting` the keys, with the trial id, of
    the trials paused here and not promoted yet.
    """

    milestone: int | float
    recorded: int = 0
    scores: SortedChunks[float] = SortedChunks()
    ranked: SortedChunks[tuple[float, int]] = SortedChunks()
    waiting: SortedChunks[tuple[float, int, str]] = SortedChunks()

    def cutoff(self, reduction_factor: float) -> float | None:
        """Ray's cutoff: None when nothing was recorded, NaN when only NaN
        was, else the interpolated `(1 - 1/rf) * 100`th percentile."""
        if not self.recorded:
            return None
        if not self.scores:
            return math.nan
        return interpolated_percentile(self.scores, (1 - 1 / reduction_factor) * 100)

    def promotions(self, reduction_factor: float) -> int:
        """The paper's `k`: how many of this rung's trials may go further."""
        return math.floor(self.recorded / reduction_factor)

    def is_promotable(self, key: tuple[float, int], reduction_factor: float) -> bool:
        """Whether the trial with rank key `key` is in the rung's top k."""
        return self.ranked.count_above(key) < self.promotions(reduction_factor)


class Standing(msgspec.Struct, frozen=True, array_like=True):
    """Where a live trial stands: its bracket, the rungs of it it recorded
    in (bit i: rung i), the time before which nothing is decided for it, and
    (promotion variant) the rung it waits at with its rank key there."""

    bracket: int
    next_at: float
    recorded: int = 0
    waiting: int = -1
    key: tuple[float, int] | None = None


def _rank_key(score: float, order: int) -> tuple[float, int]:
    return (-math.inf if math.isnan(score) else score, -order)


# -- the scheduler --------------------------------------------------------------


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
        require_name(f"{_OWNER}.time_attr", self.time_attr)
        if self.metric is not None:
            require_name(f"{_OWNER}.metric", self.metric)
        if self.mode is not None:
            coerce_enum(self, "mode", Mode)
        _require_positive(f"{_OWNER}.max_t", self.max_t, "a finite number > 0")
        _require_positive(
            f"{_OWNER}.grace_period", self.grace_period, "a finite number > 0 and <= max_t"
        )
        if self.grace_period > self.max_t:
            raise InvalidFieldError(
                f"{_OWNER}.grace_period",
                self.grace_period,
                f"a finite number > 0 and <= max_t ({self.max_t})",
            )
        _require_positive(
            f"{_OWNER}.reduction_factor", self.reduction_factor, "a finite number > 1"
        )
        if self.reduction_factor <= 1:
            raise InvalidFieldError(
                f"{_OWNER}.reduction_factor", self.reduction_factor, "a finite number > 1"
            )
        require_int(f"{_OWNER}.brackets", self.brackets, minimum=1)
        require_bool(f"{_OWNER}.stop_last_trials", self.stop_last_trials)
        if self.variant not in VARIANTS:
            raise InvalidFieldError(
                f"{_OWNER}.variant", self.variant, "'stopping' (Ray) or 'promotion' (the paper)"
            )
        require_int(f"{_OWNER}.seed", self.seed)
        if not self.rungs:
            rungs = tuple(
                tuple(
                    Rung(milestone=m)
                    for m in rung_milestones(
                        self.grace_period, self.max_t, self.reduction_factor, s
                    )
                )
                for s in range(self.brackets)
            )
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
        metric, mode = resolve_objective(_OWNER, (self.metric, self.mode), (metric, mode))
        if metric == self.metric and mode is self.mode:
            return self
        return msgspec.structs.replace(self, metric=metric, mode=mode)

    def on_trial_add(self, trial: TrialState) -> Self:
        """Assign the trial a bracket (Ray's softmax draw when there are
        several). Fails, as Ray does, when the objective is missing."""
        require_objective(_OWNER, self.metric, self.mode)
        trial_id = trial.trial_id
        if trial_id in self.standings:
            return self
        bracket, rng = 0, self.rng
        if len(self.rungs) > 1:
            sizes = [len(rungs) for rungs in self.rungs]
            largest = max(sizes)
            weights = [math.exp(size - largest) for size in sizes]
            rng, bracket = weighted_index(rng if rng is not None else seeded(self.seed), weights)
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
        last = self.max_t if self.stop_last_trials else math.inf
        return (self.time_attr, float(min(standing.next_at, last)))

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
                scheduler = scheduler._record_final(trial_id, standing, now, value)
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
        added). Promotion: the paper's `get_job`, see `_choose_promotion`."""
        if self.variant == "stopping":
            return first_fitting(pending, paused, fits)
        return self._choose_promotion(pending, paused, fits)

    def debug_string(self) -> str:
        """Ray's summary: the stop count, then each bracket's milestones with
        their cutoff (stopping) or recorded/promotable counts (promotion)."""
        out = [f"Using AsyncHyperBand ({self.variant}): num_stopped={self.num_stopped}"]
        for rungs in self.rungs:
            if self.variant == "stopping":
                parts = [
                    f"Iter {float(r.milestone):.3f}: {r.cutoff(self.reduction_factor)}"
                    for r in reversed(rungs)
                ]
            else:
                parts = [
                    f"Iter {float(r.milestone):.3f}: {r.recorded} recorded, "
                    f"top {r.promotions(self.reduction_factor)}, {len(r.waiting)} waiting"
                    for r in reversed(rungs)
                ]
            out.append("Bracket: " + " | ".join(parts))
        return "\n".join(out)

    # -- the stopping variant ---------------------------------------------------

    def _record_stopping(
        self, trial_id: str, standing: Standing, now: float, value: float
    ) -> tuple[Self, bool]:
        """Ray's `_Bracket.on_result`: walk the rungs from the top; the first
        one the trial reached and has not recorded decides (stop when below
        its cutoff) and records the score. With `stop_last_trials=False` a
        reached, recorded rung met first ends the walk (the decision to go
        on was taken there)."""
        mode = known_objective(self.metric, self.mode).mode
        score = float(signed(value, mode))
        rungs = self.rungs[standing.bracket]
        recorded = standing.recorded
        for index in range(len(rungs) - 1, -1, -1):
            rung = rungs[index]
            done_here = recorded >> index & 1
            if now >= rung.milestone and done_here and not self.stop_last_trials:
                break
            if now < rung.milestone or done_here:
                continue
            cutoff = rung.cutoff(self.reduction_factor)
            stop = cutoff is not None and score < cutoff
            scores = rung.scores if math.isnan(score) else rung.scores.insert(score)
            updated = msgspec.structs.replace(rung, recorded=rung.recorded + 1, scores=scores)
            recorded |= 1 << index
            moved = msgspec.structs.replace(
                standing, recorded=recorded, next_at=_first_unrecorded(rungs, recorded)
            )
            return self._with(trial_id, moved, index, updated), stop
        return self, False

    # -- the promotion variant --------------------------------------------------

    def _promotion_result(
        self, trial_id: str, standing: Standing, now: float, value: float
    ) -> tuple[Self, Verdict]:
        """A trial resumed from a rung is promoted if it still is in that
        rung's top k, else stopped; then a trial past `max_t` stops and one
        reaching a higher milestone records there and pauses."""
        scheduler = self
        if standing.waiting >= 0:
            rung = self.rungs[standing.bracket][standing.waiting]
            assert standing.key is not None
            promoted = rung.is_promotable(standing.key, self.reduction_factor)
            scheduler = self._unwait(trial_id, standing)
            if not promoted:
                return scheduler._forget(trial_id)._stopped(), STOP
            standing = scheduler.standings.get(trial_id) or standing
        if now >= self.max_t and self.stop_last_trials:
            return scheduler._forget(trial_id)._stopped(), STOP
        rungs = self.rungs[standing.bracket]
        reached = _highest_reached(rungs, now)
        if reached <= standing.recorded.bit_length() - 1:
            return scheduler, CONTINUE
        mode = known_objective(self.metric, self.mode).mode
        key = _rank_key(float(signed(value, mode)), scheduler.records)
        rung = rungs[reached]
        updated = msgspec.structs.replace(
            rung,
            recorded=rung.recorded + 1,
            ranked=rung.ranked.insert(key),
            waiting=rung.waiting.insert((*key, trial_id)),
        )
        moved = Standing(
            bracket=standing.bracket,
            next_at=-math.inf,
            recorded=standing.recorded | 1 << reached,
            waiting=reached,
            key=key,
        )
        scheduler = scheduler._with(trial_id, moved, reached, updated)
        waiting, records = scheduler.waiting + 1, scheduler.records + 1
        return evolve(scheduler, waiting=waiting, records=records), PAUSE

    def _record_final(self, trial_id: str, standing: Standing, now: float, value: float) -> Self:
        """A finished trial's last score joins the highest rung it reached
        above its level (it counts in `|rung|` and in the ranking, as a
        finished job does in the paper), without waiting there."""
        rungs = self.rungs[standing.bracket]
        reached = _highest_reached(rungs, now)
        if reached <= standing.recorded.bit_length() - 1:
            return self
        mode = known_objective(self.metric, self.mode).mode
        key = _rank_key(float(signed(value, mode)), self.records)
        rung = rungs[reached]
        updated = msgspec.structs.replace(
            rung, recorded=rung.recorded + 1, ranked=rung.ranked.insert(key)
        )
        moved = msgspec.structs.replace(standing, recorded=standing.recorded | 1 << reached)
        scheduler = self._with(trial_id, moved, reached, updated)
        return evolve(scheduler, records=scheduler.records + 1)

    def _choose_promotion(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """The paper's `get_job`, then liveness.

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
        rf = self.reduction_factor
        candidates: list[str] = []
        order = sorted(
            (-float(rung.milestone), bracket, index)
            for bracket, rungs in enumerate(self.rungs)
            for index, rung in enumerate(rungs)
        )
        for _, bracket, index in order:
            rung = self.rungs[bracket][index]
            top = rung.promotions(rf)
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
        live = len(self.standings)
        if not candidates and self.waiting == live:
            for trial in paused:
                standing = self.standings.get(trial.trial_id)
                if standing is not None and standing.waiting >= 0:
                    return trial.trial_id if fits(trial) else None
            return None
        if live > self.waiting:
            for trial in paused:
                standing = self.standings.get(trial.trial_id)
                if standing is not None and standing.waiting < 0 and fits(trial):
                    return trial.trial_id
        return None

    def _unwait(self, trial_id: str, standing: Standing) -> Self:
        """The trial no longer waits at its rung (promoted, stopped or gone)."""
        if standing.waiting < 0:
            return self
        assert standing.key is not None
        rung = self.rungs[standing.bracket][standing.waiting]
        updated = msgspec.structs.replace(
            rung, waiting=rung.waiting.remove((*standing.key, trial_id))
        )
        rungs = self.rungs[standing.bracket]
        level = standing.waiting
        moved = Standing(
            bracket=standing.bracket,
            next_at=float(rungs[level + 1].milestone) if level + 1 < len(rungs) else math.inf,
            recorded=standing.recorded,
        )
        scheduler = self._with(trial_id, moved, level, updated)
        return evolve(scheduler, waiting=scheduler.waiting - 1)

    # -- bookkeeping ------------------------------------------------------------

    def _with(self, trial_id: str, standing: Standing, index: int, rung: Rung) -> Self:
        """The scheduler with the trial's standing and one rung of its
        bracket replaced."""
        bracket = standing.bracket
        rungs = self.rungs[bracket]
        bracket_rungs = (*rungs[:index], rung, *rungs[index + 1 :])
        return evolve(
            self,
            rungs=(*self.rungs[:bracket], bracket_rungs, *self.rungs[bracket + 1 :]),
            standings=self.standings.set(trial_id, standing),
        )

    def _stopped(self) -> Self:
        return evolve(self, num_stopped=self.num_stopped + 1)

    def _forget(self, trial_id: str) -> Self:
        standing = self.standings.get(trial_id)
        if standing is None:
            return self
        scheduler = self._unwait(trial_id, standing)
        return evolve(scheduler, standings=scheduler.standings.discard(trial_id))


def _first_unrecorded(rungs: tuple[Rung, ...], recorded: int) -> float:
    """The smallest milestone not in `recorded` (inf when all are)."""
    for index, rung in enumerate(rungs):
        if not recorded >> index & 1:
            return float(rung.milestone)
    return math.inf


def _highest_reached(rungs: tuple[Rung, ...], now: float) -> int:
    """The index of the highest milestone `<= now` (-1: none)."""
    index = len(rungs) - 1
    while index >= 0 and rungs[index].milestone > now:
        index -= 1
    return index


def _require_positive(field: str, value: object, expected: str) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not (0 < value < math.inf):  # type: ignore[operator]
        raise InvalidFieldError(field, value, expected)
