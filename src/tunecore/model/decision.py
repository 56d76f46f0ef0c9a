"""What a policy answers about a running trial's result, and how far ahead
it has already answered.

These are data the lifecycle, the schedulers and the shell all read: the
lifecycle carries a `Verdict` out, a scheduler returns one, and the shell's
executors let a worker train on up to a `Horizon`. They live here, below
all three, so none of them imports another for its vocabulary.
"""

from __future__ import annotations

import enum

import msgspec

from tunecore.model.checkpoint import CheckpointRef
from tunecore.model.commands import Horizon, RecordExploit
from tunecore.model.json import JsonDict
from tunecore.model.resources import Resources

__all__ = ["CONTINUE", "PAUSE", "STOP", "Decision", "Exploit", "Horizon", "Verdict"]


class Decision(enum.StrEnum):
    """CONTINUE keeps training, PAUSE releases the worker keeping a memory
    checkpoint, STOP ends the trial."""

    CONTINUE = "CONTINUE"
    PAUSE = "PAUSE"
    STOP = "STOP"


class Exploit(msgspec.Struct, frozen=True, kw_only=True):
    """PBT's verdict for a lagging trial: continue from `restore_from` (the
    donor's checkpoint) with `config` (the donor's, perturbed). `record`,
    when PBT logs its configs (`log_config`), is the policy line the shell
    writes. `restarts_from_donor`: the trial restarts from `restore_from`
    until it saves a checkpoint of its own (`TrialState.exploited`); False
    only for policies logged before, which replay as they ran."""

    donor_id: str
    config: JsonDict
    experiment_tag: str
    restore_from: CheckpointRef
    record: RecordExploit | None = None
    restarts_from_donor: bool = True


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """A scheduler's answer to one result.

    `checkpoint` asks for a persistent save before continuing or pausing
    (PBT keeps its top trials checkpointed so they can be cloned);
    `exploit`, with CONTINUE or PAUSE, replaces the trial's config and state
    with a donor's (a paused one resumes from the donor's state);
    `resources`, with PAUSE, changes what the paused trial asks for, so it
    resumes on a worker of that size (`ResourceChangingScheduler`).
    """

    decision: Decision
    checkpoint: bool = False
    exploit: Exploit | None = None
    resources: Resources | None = None


CONTINUE = Verdict(decision=Decision.CONTINUE)
PAUSE = Verdict(decision=Decision.PAUSE)
STOP = Verdict(decision=Decision.STOP)
