"""What applying an event returns: the new state and its commands, or a
rejection that explains why the event was illegal."""

from __future__ import annotations

import msgspec

from tunecore.model.commands import Command
from tunecore.model.trial import TrialState, TrialStatus


class Applied(msgspec.Struct, frozen=True):
    """The event was legal: `state` replaces the old one, `commands` go to the shell."""

    state: TrialState
    commands: tuple[Command, ...] = ()


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    """The event was illegal in the trial's status; the trial is unchanged."""

    trial_id: str
    event: str
    status: TrialStatus
    reason: str

    def __str__(self) -> str:
        return f"{self.event} rejected for trial {self.trial_id} ({self.status}): {self.reason}"
