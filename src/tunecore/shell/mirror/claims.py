"""Which driver generation holds a stored experiment, read from the names
in its `events/` alone (`stored_state`'s module docstring has the
layout): each driver claims its lease generation (`claim_name`) before
it reads anything, and fences the log where it took it over
(`fence_name`).

Kept apart from the rest of the stored layout so a trial's worker can
check, before it writes to storage, that no later driver took its
driver's experiment over (`check_not_taken_over`) without importing the
driver's log and storage modules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tunecore.shell.storage.store import Store

SEGMENT_DIR = "events"

GENERATION_DIGITS = "[0-9]{8,}"
"""A lease generation in a stored name (`claim_g00000003_...`): written
`{:08d}`, so eight ASCII digits or more. Every parser of such names uses
this. A generation past 99,999,999 (one a doctored lease or claim names
takes the next driver there) has more than eight, and a reader that
expected exactly eight left that driver's claim, fence and log objects
out: what it recorded was lost to the next resume, and its workers never
saw a later claim. ASCII only: `\\d` also takes other scripts' digits,
which `int` reads (eight Arabic-Indic digits made a second name for
generation 9)."""
_FENCE = re.compile(rf"^fence_g({GENERATION_DIGITS})_([0-9]{{16}})$")
_CLAIM = re.compile(rf"^claim_g({GENERATION_DIGITS})(?:_([0-9a-f]{{1,64}}))?$")


class TakenOverError(RuntimeError):
    """A driver of a later generation claimed the experiment: a writer of
    an earlier one (a paused driver's worker) must store nothing."""


def fence_name(lease: int, offset: int) -> str:
    return f"{SEGMENT_DIR}/fence_g{lease:08d}_{offset:016d}"


def claim_name(lease: int, token: str) -> str:
    return f"{SEGMENT_DIR}/claim_g{lease:08d}_{token}"


def claimants(names: list[str], lease: int) -> set[str]:
    """The tokens of the drivers that claimed generation `lease`, from a
    listing of `events/` (a claim without a token, as tunecores before
    this wrote, is the token "")."""
    tokens = set()
    for name in names:
        if (match := _CLAIM.match(name)) is not None and int(match.group(1)) == lease:
            tokens.add(match.group(2) or "")
    return tokens


@dataclass(frozen=True)
class Fences:
    """Where each lease generation's driver took the stored log over:
    generation -> the log offset its driver went on from."""

    offsets: dict[int, int] = field(default_factory=dict)
    claimed: frozenset[int] = frozenset()
    """The generations whose driver took the lease (`claim_name`)."""

    def limit(self, lease: int) -> int | None:
        """Up to which log offset an object of generation `lease` is
        trusted: the lowest fence of a later generation (None: no limit)."""
        later = [offset for generation, offset in self.offsets.items() if generation > lease]
        return min(later) if later else None

    def newest(self) -> int:
        """The highest generation that claimed or fenced the log (0: none)."""
        return max(self.claimed | self.offsets.keys(), default=0)


def fences_of(names: list[str]) -> Fences:
    """The claims and fences in a listing of `events/`."""
    offsets: dict[int, int] = {}
    claimed = set()
    for name in names:
        if (match := _FENCE.match(name)) is not None:
            generation, offset = int(match.group(1)), int(match.group(2))
            offsets[generation] = min(offset, offsets.get(generation, offset))
        elif (match := _CLAIM.match(name)) is not None:
            claimed.add(int(match.group(1)))
    return Fences(offsets, frozenset(claimed))


def check_not_taken_over(store: Store, generation: int, what: str) -> None:
    """`TakenOverError` if a driver of a later generation than
    `generation` claimed the experiment in `store`, before a writer of
    `generation` (a worker of that driver) would `what`. A driver claims
    before it reads anything, so once it has, nothing the older
    generation writes may replace what it stores. Generation 0 (no lease
    known) checks nothing."""
    if generation <= 0:
        return
    claimed = fences_of(store.list(SEGMENT_DIR)).newest()
    if claimed > generation:
        raise TakenOverError(
            f"{store.uri()}: another driver (generation {claimed}) took this experiment over "
            f"from this worker's driver (generation {generation}); the worker does not "
            f"{what}, so nothing it writes replaces what the new driver stores"
        )
