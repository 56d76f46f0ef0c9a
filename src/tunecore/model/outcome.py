"""What applying an event returns: the new state and its commands, or a
rejection that explains why the event was illegal."""

from __future__ import annotations

import msgspec

from tunecore.model.commands import Command
from tunecore.model.trial import TrialState, TrialStatus


class Applied(msgspec.Struct, frozen=True, gc=False):
    """The event was legal: `state` replaces the old one, `commands` go to the shell."""

    state: TrialState
    commands: tuple[Command, ...] = ()


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    """The event was illegal; nothing changed. For an event about one trial,
    `trial_id` and its `status` say which and where it stood."""

    event: str
    reason: str
    trial_id: str | None = None
    status: TrialStatus | None = None

    def __str__(self) -> str:
        if self.trial_id is None:
            return f"{self.event} rejected: {self.reason}"
        return f"{self.event} rejected for trial {self.trial_id} ({self.status}): {self.reason}"
