"""The functional core: pure functions from (state, event) to (state, commands).

Nothing in this package reads a clock, touches a file, starts a thread or
draws unseeded randomness; an import-linter contract enforces it. Time,
results, errors and locations arrive inside events.

The names below are imported when first used (`tunecore._lazy`): a Ray
worker imports `tunecore.core.results` and `.stopping` to host a trial and
should not load the lifecycle with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunecore._lazy import lazy_attributes

if TYPE_CHECKING:
    from tunecore.core.checkpoints import current_checkpoint as current_checkpoint
    from tunecore.core.checkpoints import should_checkpoint as should_checkpoint
    from tunecore.core.lifecycle import TRANSITIONS as TRANSITIONS
    from tunecore.core.lifecycle import apply as apply
    from tunecore.core.lifecycle import format_transitions as format_transitions
    from tunecore.core.lifecycle import new_trial as new_trial
    from tunecore.core.lifecycle import reset_after_crash as reset_after_crash
    from tunecore.core.lifecycle import should_recover as should_recover
    from tunecore.core.lifecycle import transitions_dot as transitions_dot
    from tunecore.core.naming import trial_name as trial_name

# Each public name and the module it lives in.
_HOMES: dict[str, str] = {
    "TRANSITIONS": "tunecore.core.lifecycle",
    "apply": "tunecore.core.lifecycle",
    "current_checkpoint": "tunecore.core.checkpoints",
    "format_transitions": "tunecore.core.lifecycle",
    "new_trial": "tunecore.core.lifecycle",
    "reset_after_crash": "tunecore.core.lifecycle",
    "should_checkpoint": "tunecore.core.checkpoints",
    "should_recover": "tunecore.core.lifecycle",
    "transitions_dot": "tunecore.core.lifecycle",
    "trial_name": "tunecore.core.naming",
}

__all__ = [
    "TRANSITIONS",
    "apply",
    "current_checkpoint",
    "format_transitions",
    "new_trial",
    "reset_after_crash",
    "should_checkpoint",
    "should_recover",
    "transitions_dot",
    "trial_name",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would accept any name through it
    __getattr__, __dir__ = lazy_attributes(__name__, _HOMES, __all__)
