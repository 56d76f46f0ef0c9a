"""The protocol every built-in stopper follows.

A stopper is Ray Tune's `Stopper` as a pure policy: a frozen msgspec struct
holding its configuration and its progress, whose hook returns a new
stopper instead of mutating. The experiment state holds it, so it is logged,
snapshotted and replayed with everything else, and a resumed experiment
goes on with the stopper exactly where it was.

Two questions, as in Ray: does this result end its trial (`on_result`,
Ray's `__call__`), and does the whole experiment stop (`stop_all`)?
`stop_all` is asked after every event; time reaches it as `elapsed`, the
seconds the experiment has run by its events' timestamps (the time it was
down before a resume not counted), never a clock.

A user's own stopper (a function, or a `tunecore.stopper.Stopper`
subclass) is code and runs in the shell; see `tunecore.shell.stoppers`.
"""

from __future__ import annotations

from typing import Protocol, Self

from tunecore.model import JsonDict, JsonValue


class StopPolicy(Protocol):
    def on_result(self, trial_id: str, result: JsonDict) -> tuple[Self, bool]:
        """Take one accepted result of a running trial (flattened: '/'-joined
        keys); the new stopper, and whether the trial stops on it."""
        ...

    def stop_all(self, elapsed: float) -> str | None:
        """Why the whole experiment stops now, or None to go on."""
        ...


def number(value: JsonValue | None) -> float | None:
    """A metric's value as a float (a boolean counts as 0 or 1, as in Ray),
    or None when it is missing or not a number."""
    if isinstance(value, int | float):
        return float(value)
    return None
