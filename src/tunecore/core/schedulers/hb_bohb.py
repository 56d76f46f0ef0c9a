"""HyperBand for BOHB, as Ray Tune implements it (`HyperBandForBOHB`).

BOHB (Falkner et al. 2018, "BOHB: Robust and Efficient Hyperparameter
Optimization at Scale") runs HyperBand's brackets with configs from a model
(`tunecore.search.bohb.TuneBOHB`) instead of random ones. Ray pairs that
searcher with this variant of its synchronous HyperBand
(`tunecore.core.schedulers.hyperband`, whose numbers, state and halving it
shares). What changes, as in Ray:

- Brackets are filled largest first: the band's first bracket is the one
  with the most trials and the most halvings (`s = s_max`), then `s_max - 1`
  and so on down to the bracket that never halves. (Plain HyperBand fills
  them the other way round.) Brackets whose first milestone is 0 are
  skipped, as there.
- A trial that reaches its bracket's milestone PAUSEs, and the bracket
  halves only when it is *filled* (it holds as many live trials as its size)
  and every live trial is at the milestone. A bracket that is not filled
  waits for the trials the searcher has still to suggest: BOHB's model
  learns from the results of the first ones in the meantime.
- A removal (a trial that completes early, errors or is stopped while
  waiting) halves a bracket whose remaining live trials are all at the
  milestone, filled or not (Ray's `on_trial_remove`).
- `choose_trial_to_run` takes brackets in the order they were created (no
  completion ordering) and, within one, trials in the order they were
  added: the first pending trial, or paused one the last halving kept, that
  fits. When none is left and nothing runs, a bracket that waits to be
  filled with every live trial at the milestone would wait for ever (the
  searcher is done, or stopped suggesting), so it is released, as Ray's
  fallback releases it (`_process_bracket` on brackets with paused trials).

How the release works without a scheduler that changes in
`choose_trial_to_run` (here a query): it resumes that bracket's best trial,
the one the halving is sure to keep. When that trial reports again, the
bracket halves first, as it stood (ranked by the results at the milestone,
as Ray's halving ranks them), if every live trial is still at the
milestone; then the result counts as usual. If a new trial joined the
bracket in the meantime, the bracket waits for it instead and the best
trial pauses again.

Deviations from Ray (python/ray/tune/schedulers/hb_bohb.py), and why:

- Everything `HyperBandScheduler` documents (paused trials a halving drops
  are stopped through `trials_to_stop`, trials STOP on reaching `max_t`,
  repeated halvings, no `KeyError` for a missing time attribute).
- Ray's release halves the bracket inside `choose_trial_to_run`; here the
  halving waits for the resumed trial's next result (see above). It ranks
  the trials by their results at the milestone, so the same trials go on
  as in Ray; the resumed one has run one step more. If a new trial joined
  the bracket before that result (a suggestion the shell was still
  asking for; Ray's searcher answers at once, and Ray starts the newcomer
  instead of releasing), the step was run for nothing.
- Ray tells the searcher each trial's budget by writing
  `result["hyperband_info"]["budget"]` and calls the searcher's
  `on_pause`/`on_unpause` from the scheduler (so that TuneBOHB's
  `max_concurrent` leaves paused trials out). Here results are the
  trainable's alone and the scheduler calls nothing: `TuneBOHB` takes the
  budget from the result's time attribute itself, and a concurrency limit
  counts paused trials (see `tunecore.search.bohb`).

The state is `HyperBandScheduler`'s (plain msgspec data, tagged
`HyperBandForBOHB`), so it round-trips through `tunecore.model.codec` and a
decoded scheduler continues with identical decisions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Self

from tunecore.core.schedulers.base import Fits, Verdict, first_fitting
from tunecore.core.schedulers.hyperband import (
    Bracket,
    HyperBandScheduler,
    Member,
    _in_order,
    _sort_key,
)
from tunecore.model import JsonDict, TrialState
from tunecore.model.numbers import is_number


class HyperBandForBOHB(HyperBandScheduler, frozen=True, kw_only=True, tag=True):
    """HyperBand as BOHB needs it; see the module docstring. Ray's
    arguments and defaults: `time_attr`, `metric`, `mode`, `max_t`,
    `reduction_factor`, `stop_last_trials`."""

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """HyperBand's rules, with the bracket held until filled; a result
        from the trial the release resumed first halves its bracket as it
        stood, as Ray halves it before resuming anyone."""
        released = self._released(trial.spec.trial_id, result)
        return HyperBandScheduler.on_trial_result(released, trial, result, trials)

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """Doomed trials first (as in `HyperBandScheduler`), then Ray's
        order: brackets as created, trials as added, pending or kept by the
        last halving; then, if nothing runs, the best trial of a bracket
        waiting at its milestone (the release, see the module docstring)."""
        doomed, live = self._waiting_trials(pending, paused)
        candidates: list[tuple[tuple[int, int], TrialState]] = []
        held: dict[int, list[tuple[Member, TrialState]]] = {}
        for waiting, trial, member, bracket in live:
            if waiting and not self._runnable(member, bracket):
                held.setdefault(member.bracket, []).append((member, trial))
                continue
            candidates.append(((member.bracket, member.order), trial))
        chosen = first_fitting(doomed, _in_order(candidates), fits)
        if chosen is not None:
            return chosen
        if len(live) < self._live_total():
            return None  # something runs: its result may fill or release a bracket
        for index in sorted(held):
            if self._bracket(index).below:
                continue
            _, best = max(held[index], key=lambda pair: (_sort_key(pair[0]), pair[0].order))
            if fits(best):
                return best.trial_id
        return None

    # -- HyperBandScheduler's hooks -----------------------------------------------

    def _bracket_for_slot(self, slot: int, per_band: int) -> int:
        """Largest bracket first (Ray's `s = s_max_1 - len(band) - 1`)."""
        return per_band - 1 - slot

    def _holds(self, bracket: Bracket) -> bool:
        """A trial at the milestone of a bracket that is not filled waits
        there for the trials still to come."""
        return not bracket.filled

    # -- helpers ------------------------------------------------------------------

    def _released(self, trial_id: str, result: JsonDict) -> Self:
        """This scheduler after the release of the trial's bracket, if the
        trial reports from its milestone while every live trial is there
        (only the release resumes such a trial); else this scheduler."""
        member = self.members.get(trial_id)
        if member is None or not member.live or not is_number(result.get(self.time_attr)):
            return self
        bracket = self._bracket(member.bracket)
        if bracket.halvings_left == 0 or bracket.below or member.time < bracket.milestone:
            return self
        released, _ = self._halve(member.bracket, None)
        return released

    def _bracket(self, index: int) -> Bracket:
        bracket = self.brackets.get(index)
        assert bracket is not None
        return bracket

    def _live_total(self) -> int:
        return sum(bracket.live for _, bracket in self.brackets.items())
