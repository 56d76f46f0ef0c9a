"""Commands: what the shell must do next, in the imperative.

The core only ever returns these; the shell carries them out and reports
back with events. They are the only channel from the core to the shell:
what a policy waits for from the user's code (`DrawValues`, `AskSearcher`,
`ResolveResources`) and how far a worker may train on (`until`) come as
commands too, never by the shell reading the core's state after an event.
Tagged like events so a command stream can be logged and compared byte
for byte (`shell.journal` digests it).

`until` is the run-ahead horizon (`core.experiment.horizons`): up to where
the trial's worker may go on producing results without waiting for the
driver's answers; None, none. It is filled in by `step` on every command
that hands a worker training, from the state the step ends in.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from tunecore.model.checkpoint import CheckpointRef, CheckpointStorage
from tunecore.model.json import JsonDict

Horizon: TypeAlias = tuple[str, float]
"""`(key, threshold)`: a scheduler decides nothing but CONTINUE on a trial's
results until one whose flattened `key` reaches (>=) `threshold`. (Here,
with the commands that carry it; `model.decision` gives it to the
schedulers.)"""


class StartTrial(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Start the trial's worker, restoring `restore_from` first when set."""

    trial_id: str
    restore_from: CheckpointRef | None = None
    until: Horizon | None = None


class ChainTrials(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Comes right before the `StartTrial` of `trial_id`: the shell may run
    the waiting trials `then`, in order, on that trial's worker, each as
    soon as the one before it returns, without waiting for the driver (the
    experiment's `chain_starts`). The core keeps them from starting
    anywhere else while `trial_id` runs, and starts them first once it has
    ended: a chained trial's start then finds its results ready. A shell
    that does not chain ignores this; the trials start as usual. `until`
    holds each chained trial's run-ahead horizon, in the order of `then`."""

    trial_id: str
    then: tuple[str, ...]
    until: tuple[Horizon | None, ...] = ()


class ContinueTrial(msgspec.Struct, frozen=True, kw_only=True, tag=True, gc=False):
    """Let a RUNNING trial produce its next result."""

    trial_id: str
    until: Horizon | None = None


class SaveCheckpoint(msgspec.Struct, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """Ask the worker for a checkpoint; it comes back as `CheckpointSaved`.
    `result` labels it (its iteration names the checkpoint) when that is not
    the trial's last result: after PBT's exploit the worker saves the
    donor's restored state. (Omitted when None, so the commands of runs
    logged before it encode, and hash, as they did.)"""

    trial_id: str
    storage: CheckpointStorage
    result: JsonDict | None = None


class PauseTrial(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Release the trial's worker; it resumes later from its memory checkpoint."""

    trial_id: str


class StopTrial(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Release the trial's worker for good. `error`, when set, is the entry to
    append to the trial's error.txt."""

    trial_id: str
    error: str | None = None


class DeleteCheckpoint(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Retention dropped this persistent checkpoint: remove it from storage."""

    trial_id: str
    checkpoint: CheckpointRef


class ResetTrial(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Give the running trial a new config and restore it from `restore_from`
    (PBT's exploit: another trial's checkpoint). The shell reuses the worker
    when the trainable can reset its config, else restarts it. It must copy
    the checkpoint before any later DeleteCheckpoint could remove it."""

    trial_id: str
    config: JsonDict
    experiment_tag: str
    restore_from: CheckpointRef | None = None
    until: Horizon | None = None


class RecordExploit(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Write PBT's policy line for an exploit (`log_config=True`), as Ray
    does: append it to the experiment's `pbt_global.txt`, and to the trial's
    `pbt_policy_<trial_id>.txt` after copying the donor's file over it (a
    trial's file is the schedule that led to its state). The line is
    `[trial_tag, donor_tag, trial_iteration, donor_iteration, donor_config,
    config]`, the tags being the trials' original ones."""

    trial_id: str
    donor_id: str
    trial_tag: str
    donor_tag: str
    trial_iteration: int
    donor_iteration: int
    donor_config: JsonDict
    config: JsonDict


class ResolveResources(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Work out what the new trial asks for from its config (a callable
    given to `with_resources`, a class's `default_resource_request`) and
    report it with `ResourcesUpdateRequested`; the trial waits until then."""

    trial_id: str


class DrawValues(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Call the user's functions a policy holds the places of (`owner`'s
    `ValuesWanted`: the param space's `sample_from`s for the searcher, PBT's
    mutation functions or `custom_explore_fn` for the scheduler) at `paths`,
    with `config` where they take one, and report their values with
    `ValuesDrawn` under `key`. A shell that has not the functions (a restore
    not given PBT's) answers nothing, and the policy does without."""

    owner: Literal["searcher", "scheduler"]
    key: int
    paths: tuple[tuple[str | int, ...], ...]
    config: JsonDict = {}


class AskSearcher(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Tell the searcher object in the shell the entries its core
    counterpart (`ExternalSearcher`) holds untold, the first `told` of them,
    then ask it for trial `trial_id`'s config, and report the answer with
    `Asked` under `key` (or `SearcherFailed`)."""

    key: int
    trial_id: str
    told: int


class AskScheduler(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Tell the user's scheduler object in the shell the first `told` notes
    its core counterpart (`ImperativeScheduler`) holds untold, then, when
    `choose`, ask its `choose_trial_to_run`; report with `SchedulerAnswered`
    (or `SchedulerFailed`)."""

    told: int
    choose: bool


class ExperimentDone(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """The experiment is over: every trial finished and nothing more will be
    suggested, or it was stopped. `error` says why when it ended badly (a
    `fail_fast` failure, a dead end such as paused trials nothing can resume)."""

    error: str | None = None


Command: TypeAlias = (
    StartTrial
    | ChainTrials
    | ContinueTrial
    | SaveCheckpoint
    | PauseTrial
    | StopTrial
    | DeleteCheckpoint
    | ResetTrial
    | RecordExploit
    | ResolveResources
    | DrawValues
    | AskSearcher
    | AskScheduler
    | ExperimentDone
)
