"""The functional core: pure functions from (state, event) to (state, commands).

Nothing in this package reads a clock, touches a file, starts a thread or
draws unseeded randomness; an import-linter contract enforces it. Time,
results, errors and locations arrive inside events.
"""

from tunecore.core.checkpoints import current_checkpoint, should_checkpoint
from tunecore.core.lifecycle import (
    TRANSITIONS,
    apply,
    format_transitions,
    new_trial,
    reset_after_crash,
    should_recover,
    transitions_dot,
)
from tunecore.core.naming import trial_name

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
