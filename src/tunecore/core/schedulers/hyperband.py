"""Synchronous HyperBand, as Ray Tune implements it.

Theory of operation (Li et al. 2018, "Hyperband: A Novel Bandit-Based
Approach to Hyperparameter Optimization"): successive halving runs `n`
trials for `r` time units, keeps the best `1/eta` of them, runs those `eta`
times longer, and so on up to `max_t`. Which `(n, r)` to start from is a
bet on how early good trials show; HyperBand hedges it by running one
bracket per bet: bracket `s` starts `n(s)` trials at `r(s)` and halves `s`
times. The brackets of all bets together form a band; bands repeat.

The numbers, as Ray computes them (with `eta = reduction_factor`):

- `s_max + 1 = round(log(max_t) / log(eta)) + 1` brackets per band;
- bracket `s` holds `n0 = ceil((s_max + 1) / (s + 1) * eta**s)` trials and
  its first milestone is `r0 = int(max_t * eta**-s)` (a bracket whose `r0`
  is 0 is skipped, as Ray skips it);
- each halving keeps `n = ceil(n / eta)` trials and moves the milestone to
  `r = int(min(r * eta, max_t))`.

For `max_t=81, eta=3` that is five brackets per band, created in the order
s = 0, 1, 2, 3, 4 (Ray fills the bracket that never halves first):

    s  trials kept after each halving     milestones
    0  5                                  81
    1  8  3                               27 81
    2  15 5  2                            9  27 81
    3  34 12 4  2                         3  9  27 81
    4  81 27 9  3  1                      1  3  9  27 81

The starts and milestones are the paper's (Algorithm 1, with `B = (s_max +
1) * max_t`). Its rounds keep `floor(n * eta**-i)` trials (34 11 3 1 for
s=3, 15 5 1 for s=2, 8 2 for s=1); Ray keeps `ceil(n / eta)` of the previous
round, and so do we.

`band_plan` computes these numbers once per band (a `BracketPlan` per
bracket: its sizes and milestones round by round), and a bracket runs from
its plan: it opens with the plan's first size and milestone and each
halving moves it to the plan's next round.

How a bracket runs: trials are put into the bracket being filled until it
holds `n` live trials, then into the next one of the band. A trial runs
until its time reaches the bracket's milestone and PAUSEs; when every live
trial of the bracket has reached it, the bracket halves: the best
`ceil(n / eta)` by signed score (their latest results) are kept, the others
are stopped, and the kept ones that are paused become runnable again
(`choose_trial_to_run` resumes them) for the next milestone. At the last
milestone, `max_t`, trials stop (unless `stop_last_trials=False`, in which
case the last ones run on until their own stopping criteria end them).

Ties at a halving: Ray sorts the live trials by score with a stable sort in
the order they were added and keeps the last `n`, so among equal scores the
trials added later are kept; so do we. A trial whose latest result had no
numeric metric (or NaN) ranks below every scored one (Ray raises or sorts
NaN unpredictably there).

`choose_trial_to_run` follows Ray: bands in order; within a band, brackets
by completion (Ray's `completion_percentage`: time reported so far over the
bracket's total work, 1 when finished), least complete first; within a
bracket, trials in the order they were added; the first pending trial, or
paused trial that still has to reach the milestone, that fits. Doomed
trials (below) come before all of them.

Invariants:

- `members` holds every trial the scheduler still tracks: live ones (in a
  bracket's count) and stopped-while-paused ones (`live=False`, also in
  `doomed`). A trial leaves when it completes, errors or is removed.
- For each bracket, `live` is the number of live members and `below` the
  number of live members whose latest time is below the milestone, so
  "every live trial reached the milestone" is `below == 0`, an O(1) check.
- A bracket never waits on nothing: it halves as soon as `below` drops to 0,
  after a result or after a removal, and repeats while the kept trials have
  all already passed the new milestone (they report coarsely). Every live
  trial below the milestone is pending, running or runnable-paused, so some
  trial can always make progress. (Ray's `is_being_processed` flag, once
  set, keeps removals from ever triggering a halving again; a bracket whose
  last laggard errors after its first halving then waits forever. Not here.)

Deviations from Ray (python/ray/tune/schedulers/hyperband.py), and why:

- Stopping trials that are PAUSED: Ray calls `stop_trial` on them from
  inside the scheduler. Here a trial a halving stops while paused is
  *doomed* and `trials_to_stop()` names it; the experiment stops it where
  it stands after the event (the protocol's rule) and `on_trial_remove`
  forgets it, so the outcome is Ray's. A driver that does not ask still
  ends: `choose_trial_to_run` hands doomed trials out first, and their
  next result gets STOP.
- A trial reaching the last milestone (`max_t`) STOPs at once; Ray pauses it
  until its siblings get there and then stops them all. The result is the
  same trials ending at the same time, without a pause, a resume and a
  wasted iteration.
- Removals re-process the bracket every time (see the invariants), and a
  halving repeats while all kept trials are already past the new milestone
  (Ray leaves such a bracket paused for good).
- A paused live trial below the milestone is always runnable, whoever paused
  it; Ray resumes only the ones its halving released.
- A result without a numeric time attribute gets CONTINUE and is not
  recorded (Ray raises `KeyError`).
- `max_t` must be at least 1 (Ray's loop looking for a bracket with `r0 > 0`
  never ends below 1).

State is plain msgspec data (see `asha.ShardedMap` for why), so the
scheduler round-trips through `tunecore.model.codec` and a decoded one
continues with identical decisions.

Why one module of over 400 lines: the band's arithmetic (`band_plan`), its
stored brackets and the scheduler that fills and halves them are one
algorithm, checked against Ray Tune's recorded decisions as a whole;
`hb_bohb` reuses all three.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import ClassVar, Self, TypeVar

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.core.schedulers.base import (
    CONTINUE,
    PAUSE,
    STOP,
    Fits,
    Verdict,
    adopt_objective,
    check_objective_fields,
    evolve,
    first_fitting,
    known_objective,
    require_objective,
    signed,
)
from tunecore.model import InvalidFieldError, JsonDict, Mode, ModeArg, TrialState
from tunecore.model.errors import require_bool
from tunecore.model.numbers import is_finite_number, is_number

_Key = TypeVar("_Key", bound=tuple[object, ...])

# -- the numbers ----------------------------------------------------------------


def brackets_per_band(max_t: float, eta: float) -> int:
    """Ray's `_s_max_1`: `round(log(max_t) / log(eta)) + 1` (round half to
    even, as `numpy.round`)."""
    return round(math.log(max_t) / math.log(eta)) + 1


def bracket_size(s: int, per_band: int, eta: float) -> int:
    """Ray's `_get_n0(s)`: `ceil(per_band / (s + 1) * eta**s)`, evaluated
    in the same order so the float is the same."""
    return math.ceil(per_band / (s + 1) * eta**s)


def first_milestone(s: int, max_t: float, eta: float) -> int:
    """Ray's `_get_r0(s)`: `int(max_t * eta**-s)`; 0 means no bracket."""
    return int(max_t * eta ** (-s))


def kept_after_halving(size: int, eta: float) -> int:
    return math.ceil(size / eta)


def next_milestone(milestone: int, max_t: float, eta: float) -> int:
    return int(min(milestone * eta, max_t))


def total_work(size: int, milestone: int, s: int, max_t: float, eta: float) -> int:
    """Ray's `_calculate_total_work`, the denominator of a bracket's
    completion. It still uses the pre-2.7 milestone rule `min(r * eta,
    max_t - r0)`, so it is not quite the work the bracket does; it only
    orders brackets in `choose_trial_to_run`, and we keep it to keep Ray's
    order."""
    work, n, r = 0, size, milestone
    for _ in range(s + 1):
        work += int(n) * int(r)
        n = math.ceil(n / eta)
        r = int(min(r * eta, max_t - milestone))
    return work


class BracketPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What bracket `s` of a band will do: how many trials it keeps after
    each halving (`sizes[0]` is how many it starts) and the milestone of
    each round."""

    s: int
    sizes: tuple[int, ...]
    milestones: tuple[int, ...]


def band_plan(max_t: float, reduction_factor: float) -> tuple[BracketPlan, ...]:
    """The brackets of one band, in the order Ray creates them (s = 0
    first), without the ones whose first milestone is 0."""
    per_band = brackets_per_band(max_t, reduction_factor)
    plans = []
    for s in range(per_band):
        milestone = first_milestone(s, max_t, reduction_factor)
        if milestone == 0:
            continue
        sizes, milestones = [bracket_size(s, per_band, reduction_factor)], [milestone]
        for _ in range(s):
            sizes.append(kept_after_halving(sizes[-1], reduction_factor))
            milestones.append(next_milestone(milestones[-1], max_t, reduction_factor))
        plans.append(BracketPlan(s=s, sizes=tuple(sizes), milestones=tuple(milestones)))
    return tuple(plans)


# -- state ----------------------------------------------------------------------


class Member(msgspec.Struct, frozen=True, array_like=True):
    """A trial the scheduler tracks: its bracket, when it was added (the
    order Ray keeps trials in), its latest time and signed score (time 0 and
    no score before its first result: Ray's `None` result counts as time 0;
    no score either when the latest result had no numeric metric or NaN),
    and whether it is still live in its bracket."""

    bracket: int
    order: int
    time: float = 0.0
    score: float | None = None
    live: bool = True


class Bracket(msgspec.Struct, frozen=True, kw_only=True):
    """One bracket: `band` and `s` say which; `size` is Ray's `_n` (how many
    trials it may hold now), `milestone` Ray's `_cumul_r`, `halvings_left`
    Ray's `_halves`; `progress` the time its trials reported so far (Ray's
    `_completed_progress`) out of `total_work`; `members` every trial ever
    put in it, in order; `live` and `below` see the module invariants."""

    band: int
    s: int
    size: int
    milestone: int
    halvings_left: int
    total_work: int
    progress: float = 0.0
    members: tuple[str, ...] = ()
    live: int = 0
    below: int = 0

    @property
    def filled(self) -> bool:
        return self.live >= self.size

    def completion(self, stop_last_trials: bool) -> float:
        """Ray's `completion_percentage` (a fraction): 1 when finished."""
        if stop_last_trials and self.halvings_left == 0 and self.below == 0:
            return 1.0
        return min(self.progress / self.total_work, 1.0)


def _in_order(candidates: list[tuple[_Key, TrialState]]) -> list[TrialState]:
    """The candidate trials by their keys (a stable sort: equal keys keep
    the order given)."""
    return [trial for _, trial in sorted(candidates, key=itemgetter(0))]


def _sort_key(member: Member) -> tuple[bool, float]:
    """Unscored trials rank below every scored one."""
    score = member.score
    return (False, 0.0) if score is None else (True, score)


# -- the scheduler --------------------------------------------------------------


class HyperBandScheduler(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Synchronous HyperBand; see the module docstring for the rules, the
    invariants and the deviations from Ray.

    Configuration (Ray's names and defaults): `time_attr` the progress
    measure, `metric`/`mode` the objective (None until `with_objective`),
    `max_t` the last milestone, `reduction_factor` (eta),
    `stop_last_trials` whether trials stop at `max_t`. State: `brackets` by
    creation index (`bracket_count` of them; the last one is being filled),
    `band`/`band_slots` the current band and how many of its bracket slots
    are used (skipped ones included), `members` the tracked trials, `doomed`
    the trials a halving stopped while paused, `added` how many trials were
    added, `num_stopped` how many trials halvings stopped.

    `metric_required`: a halving ranks every live trial by its metric, so
    a result without it fails the trial even when the metric is Ray's
    anonymous `_metric` (`core.policies.checked_metric`; Ray's halving
    raises `KeyError` and the run fails).
    """

    metric_required: ClassVar[bool] = True

    time_attr: str = "training_iteration"
    metric: str | None = None
    mode: ModeArg | None = None
    max_t: int | float = 81
    reduction_factor: int | float = 3
    stop_last_trials: bool = True
    brackets: ShardedMap[int, Bracket] = ShardedMap()
    bracket_count: int = 0
    band: int = 0
    band_slots: int = 0
    members: ShardedMap[str, Member] = ShardedMap()
    doomed: ShardedMap[str, int] = ShardedMap()
    added: int = 0
    num_stopped: int = 0

    def __post_init__(self) -> None:
        check_objective_fields(self, self.time_attr, self.metric, self.mode)
        owner = type(self).__name__
        if not is_finite_number(self.max_t) or self.max_t < 1:
            raise InvalidFieldError(f"{owner}.max_t", self.max_t, "a finite number >= 1")
        if not is_finite_number(self.reduction_factor) or self.reduction_factor <= 1:
            raise InvalidFieldError(
                f"{owner}.reduction_factor", self.reduction_factor, "a finite number > 1"
            )
        require_bool(f"{owner}.stop_last_trials", self.stop_last_trials)

    # -- the protocol -----------------------------------------------------------

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Take the experiment's metric and mode where none was given; a
        halving cannot rank trials without both."""
        return adopt_objective(self, (self.metric, self.mode), metric, mode)

    def on_trial_add(self, trial: TrialState) -> Self:
        """Put the trial in the bracket being filled, opening the band's next
        bracket (or the next band) when that one is full. Fails, as Ray
        does, when the objective is missing."""
        require_objective(type(self).__name__, self.metric, self.mode)
        trial_id = trial.trial_id
        if trial_id in self.members:
            return self
        brackets, count = self.brackets, self.bracket_count
        band, slots = self.band, self.band_slots
        current = brackets.get(count - 1) if count else None
        if current is None or current.filled:
            current, band, slots = self._open_bracket(band, slots)
            count += 1
        index = count - 1
        current = msgspec.structs.replace(
            current,
            members=(*current.members, trial_id),
            live=current.live + 1,
            below=current.below + 1,
        )
        member = Member(bracket=index, order=self.added)
        return evolve(
            self,
            brackets=brackets.set(index, current),
            bracket_count=count,
            band=band,
            band_slots=slots,
            members=self.members.set(trial_id, member),
            added=self.added + 1,
        )

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """Record the trial's progress; below the milestone it continues, at
        the last milestone it stops, at another one it pauses, and the last
        live trial to get there makes the bracket halve."""
        trial_id = trial.spec.trial_id
        member = self.members.get(trial_id)
        if member is None:
            return self, CONTINUE  # not a trial it holds (ended, or never added): ignored
        if not member.live:
            return self, STOP
        now = result.get(self.time_attr)
        if not is_number(now):
            return self, CONTINUE
        now = float(now)
        metric, mode = known_objective(self.metric, self.mode)
        value = result.get(metric)
        score = float(signed(value, mode)) if is_number(value) else None
        if score is not None and math.isnan(score):
            score = None
        bracket = self.brackets.get(member.bracket)
        assert bracket is not None
        milestone = bracket.milestone
        below = bracket.below - (member.time < milestone) + (now < milestone)
        bracket = msgspec.structs.replace(
            bracket, progress=bracket.progress + (now - member.time), below=below
        )
        member = Member(member.bracket, member.order, now, score)
        if bracket.halvings_left == 0:
            if now < milestone or not self.stop_last_trials:
                return self._put(trial_id, member, bracket), CONTINUE
            bracket = msgspec.structs.replace(bracket, live=bracket.live - 1)
            member = msgspec.structs.replace(member, live=False)
            return self._put(trial_id, member, bracket), STOP
        if now < milestone:
            return self._put(trial_id, member, bracket), CONTINUE
        scheduler = self._put(trial_id, member, bracket)
        if self._holds(bracket):
            return scheduler, PAUSE
        return scheduler._halve(member.bracket, trial_id)

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        """Forget the trial; if it was live, its bracket may now halve."""
        return self._forget(trial.trial_id)

    def on_trial_error(self, trial: TrialState) -> Self:
        return self._forget(trial.trial_id)

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self._forget(trial.trial_id)

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """Doomed trials first (to be resumed and stopped, see the module
        docstring), then Ray's order over the pending trials and the paused
        ones below their milestone."""
        doomed, live = self._waiting_trials(pending, paused)
        candidates: list[tuple[tuple[int, float, int, int], TrialState]] = []
        keys: dict[int, tuple[int, float, int]] = {}
        for waiting, trial, member, bracket in live:
            if waiting and not self._runnable(member, bracket):
                continue
            key = keys.get(member.bracket)
            if key is None:
                completion = bracket.completion(self.stop_last_trials)
                key = keys[member.bracket] = (bracket.band, completion, bracket.s)
            candidates.append(((*key, member.order), trial))
        return first_fitting(doomed, _in_order(candidates), fits)

    def debug_string(self) -> str:
        """Ray's summary: stops and brackets, then per band each bracket's
        size, milestone, completion and live trials."""
        out = [
            f"Using HyperBand: num_stopped={self.num_stopped} total_brackets={self.bracket_count}"
        ]
        band = -1
        for index in range(self.bracket_count):
            bracket = self.brackets.get(index)
            assert bracket is not None
            if bracket.band != band:
                band = bracket.band
                out.append(f"Round #{band}:")
            completion = bracket.completion(self.stop_last_trials)
            out.append(
                f"  Bracket(Max Size (n)={bracket.size}, Milestone (r)={bracket.milestone}, "
                f"completed={completion:.1%}): {{live: {bracket.live}}}"
            )
        return "\n".join(out)

    def trials_to_stop(self) -> tuple[str, ...]:
        """The trials a halving stopped while they were PAUSED, in the order
        they were added (see `TrialScheduler.trials_to_stop`)."""
        return tuple(trial_id for trial_id, _ in sorted(self.doomed.items(), key=itemgetter(1)))

    def _waiting_trials(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState]
    ) -> tuple[list[TrialState], list[tuple[bool, TrialState, Member, Bracket]]]:
        """The trials `choose_trial_to_run` is offered that this scheduler
        tracks, pending ones first, each in the order given: the doomed
        ones, and the live ones, each with whether it is paused, its member
        and its bracket."""
        doomed: list[TrialState] = []
        live: list[tuple[bool, TrialState, Member, Bracket]] = []
        for waiting, trial in [(False, t) for t in pending] + [(True, t) for t in paused]:
            member = self.members.get(trial.trial_id)
            if member is None:
                continue
            if not member.live:
                doomed.append(trial)
                continue
            bracket = self.brackets.get(member.bracket)
            assert bracket is not None
            live.append((waiting, trial, member, bracket))
        return doomed, live

    # -- brackets ---------------------------------------------------------------

    def _open_bracket(self, band: int, slots: int) -> tuple[Bracket, int, int]:
        """Ray's retry loop: the band's next slot, or a new band when this
        one has all its slots; slots whose first milestone is 0 stay empty."""
        eta, per_band = self.reduction_factor, brackets_per_band(self.max_t, self.reduction_factor)
        plans = self.plans()
        while True:
            if slots == per_band:
                band, slots = band + 1, 0
            s, slots = self._bracket_for_slot(slots, per_band), slots + 1
            plan = plans.get(s)
            if plan is None:  # its first milestone is 0
                continue
            size, milestone = plan.sizes[0], plan.milestones[0]
            bracket = Bracket(
                band=band,
                s=s,
                size=size,
                milestone=milestone,
                halvings_left=s,
                total_work=total_work(size, milestone, s, self.max_t, eta),
            )
            return bracket, band, slots

    def plans(self) -> dict[int, BracketPlan]:
        """The band's bracket plans by `s` (none for a bracket whose first
        milestone is 0): what each bracket does, and where the plots and
        the dashboard draw its milestones."""
        return {plan.s: plan for plan in band_plan(self.max_t, self.reduction_factor)}

    def _bracket_for_slot(self, slot: int, per_band: int) -> int:
        """Which bracket `s` fills a band's `slot`: Ray's HyperBand fills
        the one that never halves first."""
        return slot

    def _holds(self, bracket: Bracket) -> bool:
        """Whether a trial that reached the milestone waits there without
        the bracket halving. HyperBand never holds: a bracket halves once
        every live trial is at its milestone, filled or not."""
        return False

    def _runnable(self, member: Member, bracket: Bracket) -> bool:
        """Whether a paused live trial has work to do in its bracket now."""
        return member.time < bracket.milestone or (
            bracket.halvings_left == 0 and not self.stop_last_trials
        )

    def _halve(self, index: int, current: str | None) -> tuple[Self, Verdict]:
        """Halve bracket `index` while every live trial reached its milestone
        (Ray's `_process_bracket`, repeated). `current` is the trial whose
        result triggered it (None after a removal); its verdict is STOP if a
        halving dropped it or it is done, CONTINUE if it was kept and is
        below the new milestone, PAUSE if it waits for the others."""
        bracket = self.brackets.get(index)
        assert bracket is not None
        members, doomed = self.members, self.doomed
        stopped = self.num_stopped
        verdict = PAUSE
        while bracket.below == 0 and bracket.live > 0 and bracket.halvings_left > 0:
            live = []
            for trial_id in bracket.members:
                member = members.get(trial_id)
                if member is not None and member.live:
                    live.append((trial_id, member))
            live.sort(key=lambda pair: _sort_key(pair[1]))
            halvings_left = bracket.halvings_left - 1
            plan, halving = self.plans()[bracket.s], bracket.s - halvings_left
            size, milestone = plan.sizes[halving], plan.milestones[halving]
            kept = live[-size:]
            dropped = live[:-size]
            stopped += len(dropped)
            if halvings_left == 0 and self.stop_last_trials:
                # Kept trials already past the last milestone are done.
                dropped += [(i, m) for i, m in kept if m.time >= milestone]
                kept = [(i, m) for i, m in kept if m.time < milestone]
            for trial_id, member in dropped:
                members = members.set(trial_id, msgspec.structs.replace(member, live=False))
                if trial_id == current:
                    verdict = STOP
                else:
                    doomed = doomed.set(trial_id, member.order)
            bracket = msgspec.structs.replace(
                bracket,
                size=size,
                milestone=milestone,
                halvings_left=halvings_left,
                live=len(kept),
                below=sum(1 for _, m in kept if m.time < milestone),
            )
        if current is not None and verdict is not STOP:
            member = members.get(current)
            assert member is not None
            verdict = CONTINUE if self._runnable(member, bracket) else PAUSE
        scheduler = evolve(
            self,
            brackets=self.brackets.set(index, bracket),
            members=members,
            doomed=doomed,
            num_stopped=stopped,
        )
        return scheduler, verdict

    # -- bookkeeping ------------------------------------------------------------

    def _put(self, trial_id: str, member: Member, bracket: Bracket) -> Self:
        return evolve(
            self,
            members=self.members.set(trial_id, member),
            brackets=self.brackets.set(member.bracket, bracket),
        )

    def _forget(self, trial_id: str) -> Self:
        member = self.members.get(trial_id)
        if member is None:
            return self
        scheduler = evolve(
            self, members=self.members.discard(trial_id), doomed=self.doomed.discard(trial_id)
        )
        if not member.live:
            return scheduler
        bracket = self.brackets.get(member.bracket)
        assert bracket is not None
        bracket = msgspec.structs.replace(
            bracket,
            live=bracket.live - 1,
            below=bracket.below - (member.time < bracket.milestone),
        )
        scheduler = evolve(scheduler, brackets=scheduler.brackets.set(member.bracket, bracket))
        scheduler, _ = scheduler._halve(member.bracket, None)
        return scheduler
