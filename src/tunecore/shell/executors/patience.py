"""How long the Ray executor waits for a new actor to be placed before it
counts the actor as starved and ends the idle actors, which may hold what
it waits for (`PlacementPatience`).

Ray does not say which of two things keeps a new actor's first call from
returning: no node has room for it (idle actors may hold the resources),
or the machine is merely slow to start a worker process and run the
trial's `setup`. Ray's actor state is `PENDING_CREATION` in both cases,
and `ray.available_resources()` already counts an actor whose process is
starting as holding its resources, so an actor starting slowly next to an
idle one looks there exactly like an actor waiting for that idle one's
CPU. A fixed patience confuses the two on a loaded machine: every start
outlasts it, the idle actors are ended for nothing, each replacement is
slow to start again, and reuse collapses (every trial a new process).

So the patience follows this run's own starts: the floor
`PLACEMENT_PATIENCE_S`, or `PATIENCE_FACTOR` times the slowest of the last
`RECENT_PLACEMENTS` placements, whichever is longer, and never more than
`PLACEMENT_PATIENCE_MAX_S`: an actor that idle actors keep from being
placed is still rescued, within that bound, however slow the starts were.
A placement counts from the actor's creation, or from the last time the
executor ended an actor (gave resources back) if that came later: an
actor rescued that way counts only its start after the rescue, so one
rescue does not lengthen the patience of the next (they would feed on
each other, the patience growing with every rescue).
"""

from __future__ import annotations

import math
from collections import deque

PLACEMENT_PATIENCE_S = 5.0
"""The patience before any placement was seen, and its least (an actor
starts in about 0.4 s on an idle machine)."""

PLACEMENT_PATIENCE_MAX_S = 60.0
"""The most a new actor waits for idle actors to give their resources."""

PATIENCE_FACTOR = 2.0
RECENT_PLACEMENTS = 8


class PlacementPatience:
    """The new actors not placed yet (by trial), and how long they may wait."""

    def __init__(self) -> None:
        self._created: dict[str, float] = {}
        self._recent: deque[float] = deque(maxlen=RECENT_PLACEMENTS)
        self._freed_at = -math.inf

    def __contains__(self, trial_id: object) -> bool:
        """Whether the trial's new actor waits to be placed."""
        return trial_id in self._created

    def created(self, trial_id: str, now: float) -> None:
        self._created[trial_id] = now

    def placed(self, trial_id: str, now: float) -> None:
        """The actor's first call came back: how long it took is a sample."""
        created = self._created.pop(trial_id, None)
        if created is not None:
            self._recent.append(now - max(created, self._freed_at))

    def forget(self, trial_id: str) -> None:
        """The trial left its actor before it was placed: no sample."""
        self._created.pop(trial_id, None)

    def freed(self, now: float) -> None:
        """The executor ended an actor: its resources are free from now."""
        self._freed_at = now

    def seconds(self) -> float:
        """How long a new actor may wait now (see the module docstring)."""
        observed = PATIENCE_FACTOR * max(self._recent, default=0.0)
        return min(max(PLACEMENT_PATIENCE_S, observed), PLACEMENT_PATIENCE_MAX_S)

    def overdue(self, now: float) -> set[str]:
        """The trials whose new actor has waited longer than the patience."""
        patience = self.seconds()
        return {t for t, created in self._created.items() if now - created > patience}
