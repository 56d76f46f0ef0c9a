"""ASHA's rungs: the milestones, the rung and standing state both variants
keep, and the rung math they share (`tunecore.core.schedulers.asha` has the
scheduler and the theory of operation; `asha_stopping` and `asha_promotion`
the two variants' rules).

Why one `Rung` type for both variants: `ASHAScheduler.rungs` is written into
event logs and snapshots as `tuple[tuple[Rung, ...], ...]` whatever the
variant, so a rung type per variant would change the stored form. A rung
therefore holds both variants' fields; each variant reads and writes only
its own (stopping: `scores`; promotion: `ranked` and `waiting`), and the
other ones stay empty, which msgspec stores as the defaults they are.

Each rung counts what it recorded (`recorded`, NaN included) and keeps the
scores sorted (`SortedChunks`: sorted tuples of at most 1024 keys; an insert
copies one chunk and the chunk index), so a cutoff or a rank costs O(log n)
plus a bounded copy, never a sort.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import msgspec

from tunecore.core.persistent import SortedChunks
from tunecore.core.rng import Rng, seeded, weighted_index
from tunecore.model import InvalidFieldError
from tunecore.model.numbers import is_number


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


def check_milestone_fields(
    owner: str, max_t: float, grace_period: float, reduction_factor: float
) -> None:
    """The numbers the milestones are computed from, as `owner`'s fields:
    `max_t` and `grace_period` finite and > 0, `grace_period <= max_t`,
    `reduction_factor` finite and > 1."""
    _require_positive(f"{owner}.max_t", max_t, "a finite number > 0")
    _require_positive(f"{owner}.grace_period", grace_period, "a finite number > 0 and <= max_t")
    if grace_period > max_t:
        raise InvalidFieldError(
            f"{owner}.grace_period", grace_period, f"a finite number > 0 and <= max_t ({max_t})"
        )
    _require_positive(f"{owner}.reduction_factor", reduction_factor, "a finite number > 1")
    if reduction_factor <= 1:
        raise InvalidFieldError(
            f"{owner}.reduction_factor", reduction_factor, "a finite number > 1"
        )


def _require_positive(field: str, value: object, expected: str) -> None:
    if not (is_number(value) and 0 < value < math.inf):
        raise InvalidFieldError(field, value, expected)


def empty_rungs(
    grace_period: float, max_t: float, reduction_factor: float, brackets: int
) -> tuple[tuple[Rung, ...], ...]:
    """The rungs of a scheduler that recorded nothing yet: bracket `s`'s at
    `rung_milestones(..., s)`, for each of the `brackets`."""
    return tuple(
        tuple(Rung(milestone=m) for m in rung_milestones(grace_period, max_t, reduction_factor, s))
        for s in range(brackets)
    )


def draw_bracket(
    rungs: tuple[tuple[Rung, ...], ...], rng: Rng | None, seed: int
) -> tuple[int, Rng | None]:
    """A new trial's bracket and the generator after the draw: Ray's softmax
    over the brackets' rung counts, from `rng` (`seed` before the first
    draw); bracket 0 and no draw when there is one bracket."""
    if len(rungs) <= 1:
        return 0, rng
    sizes = [len(bracket_rungs) for bracket_rungs in rungs]
    largest = max(sizes)
    weights = [math.exp(size - largest) for size in sizes]
    drawn, bracket = weighted_index(rng if rng is not None else seeded(seed), weights)
    return bracket, drawn


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
        """Ray's cutoff (stopping variant): None when nothing was recorded,
        NaN when only NaN was, else the interpolated `(1 - 1/rf) * 100`th
        percentile."""
        if not self.recorded:
            return None
        if not self.scores:
            return math.nan
        return interpolated_percentile(self.scores, (1 - 1 / reduction_factor) * 100)

    def promotions(self, reduction_factor: float) -> int:
        """The paper's `k` (promotion variant): how many of this rung's
        trials may go further."""
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


class Move(NamedTuple):
    """What a variant's rule changes for one trial: the rung at `level`
    of the trial's bracket becomes `rung`, and the trial's standing
    `standing`."""

    level: int
    rung: Rung
    standing: Standing


def first_unrecorded(rungs: tuple[Rung, ...], recorded: int) -> float:
    """The smallest milestone not in `recorded` (inf when all are)."""
    for index, rung in enumerate(rungs):
        if not recorded >> index & 1:
            return float(rung.milestone)
    return math.inf


def highest_reached(rungs: tuple[Rung, ...], now: float) -> int:
    """The index of the highest milestone `<= now` (-1: none)."""
    index = len(rungs) - 1
    while index >= 0 and rungs[index].milestone > now:
        index -= 1
    return index
