"""ASHA's stopping variant (`variant="stopping"`, Ray Tune's
`AsyncHyperBandScheduler`): its recording rule, its horizon and its summary.
`tunecore.core.schedulers.asha` holds the scheduler that applies them.

A trial reaching a milestone it has not recorded is compared with the
*cutoff* of the scores that rung recorded *before* it; below the cutoff it
STOPs, otherwise it CONTINUEs; either way its score is then recorded.
Reaching `max_t` STOPs it. Waiting trials start in FIFO order.

The cutoff is Ray's interpolated percentile, so a Tune user gets the same
verdicts as with Ray: `numpy.nanpercentile(scores, (1 - 1/reduction_factor)
* 100)` with numpy's default linear method, reimplemented without numpy
(`asha_rungs.interpolated_percentile`): NaN scores are ignored; with the
`n` remaining scores sorted ascending, `v = (n - 1) * q` (`q` the percentile
as a fraction), `g = v - floor(v)`, and the cutoff lies between the scores
at `floor(v)` and `floor(v) + 1`, computed as numpy's `_lerp` does (`a + (b
- a) * g`, or `b - (b - a) * (1 - g)` when `g >= 0.5`), so the float is
bit-identical. Example: recorded `[1, 2, 3, 4]` at `reduction_factor=4`:
`q = 0.75`, `v = 2.25`, cutoff `3 + (4 - 3) * 0.25 = 3.25`. A rung that
recorded nothing has no cutoff; one that recorded only NaN has a NaN cutoff;
neither stops anyone. Ties: a score *equal* to the cutoff continues (Ray
compares with a strict `<`).

Ray's quirk is kept on purpose: a trial that jumps over several milestones
in one result records only at the highest one it reached; its next result
then records at the lower ones it skipped (Ray walks the rungs from the top
and skips the ones the trial recorded).
"""

from __future__ import annotations

import math

import msgspec

from tunecore.core.schedulers.asha_rungs import Move, Rung, Standing, first_unrecorded


def record(
    rungs: tuple[Rung, ...],
    standing: Standing,
    now: float,
    score: float,
    *,
    reduction_factor: float,
    stop_last_trials: bool,
) -> tuple[Move, bool] | None:
    """Ray's `_Bracket.on_result` for a trial of the bracket `rungs` with
    signed `score` at time `now`: walk the rungs from the top; the first
    one the trial reached and has not recorded decides (stop when below its
    cutoff) and records the score. With `stop_last_trials=False` a reached,
    recorded rung met first ends the walk (the decision to go on was taken
    there). The move and whether to stop; None when nothing is recorded."""
    recorded = standing.recorded
    for index in range(len(rungs) - 1, -1, -1):
        rung = rungs[index]
        done_here = recorded >> index & 1
        if now >= rung.milestone and done_here and not stop_last_trials:
            break
        if now < rung.milestone or done_here:
            continue
        cutoff = rung.cutoff(reduction_factor)
        stop = cutoff is not None and score < cutoff
        scores = rung.scores if math.isnan(score) else rung.scores.insert(score)
        updated = msgspec.structs.replace(rung, recorded=rung.recorded + 1, scores=scores)
        recorded |= 1 << index
        moved = msgspec.structs.replace(
            standing, recorded=recorded, next_at=first_unrecorded(rungs, recorded)
        )
        return Move(index, updated, moved), stop
    return None


def decides_at(standing: Standing, max_t: float, stop_last_trials: bool) -> float:
    """The time below which every result of the trial gets CONTINUE: its
    next milestone (`next_at`), or `max_t` when that stops it first."""
    last = max_t if stop_last_trials else math.inf
    return float(min(standing.next_at, last))


def describe(rungs: tuple[Rung, ...], reduction_factor: float) -> str:
    """A bracket in Ray's summary: each milestone, highest first, with its
    cutoff."""
    return " | ".join(
        f"Iter {float(r.milestone):.3f}: {r.cutoff(reduction_factor)}" for r in reversed(rungs)
    )
