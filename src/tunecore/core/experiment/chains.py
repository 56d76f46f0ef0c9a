"""Chained starts: which waiting trials a starting trial's worker may run
after it, and how chained trials are chosen.

A reused worker whose trial's function returns sits idle until the driver
has heard of the end, decided the next trial and sent it: a round trip and
the driver's turn per trial, most of a short trial's cost. With
`ExperimentConfig.chain_starts`, the core names, as it starts a trial, the
waiting trials that worker may run next, in order, each as soon as the one
before returns (`ChainTrials`, just before the `StartTrial`). That changes
no decision, because it is done only where none could differ:

- the trial and each chained one can go from start to end with no answer
  from the driver (`ends_alone`): the scheduler's horizon is unlimited (it
  decides nothing on any result; FIFO), there is no stopper and no
  stopping criterion, no checkpoint at a frequency or at the end, no
  export; each chained trial is fresh (never started, nothing to restore)
  and asks for the same resources;
- only trials left waiting once every trial that fits has started are
  chained (a chain never holds back a trial that could start now);
- while the trial runs, its chained trials are the last choice elsewhere
  (`reserved`): a place that frees meanwhile takes an unchained trial
  first, and a chained one only when no other fits, so no place waits
  for a chain. Once the trial has ended, its chained trials start before
  any other waiting trial, in order (`sort_waiting`): the trial a
  worker ran ahead is the trial the core starts there, and its start
  finds its results ready. The scheduler, which under an unlimited
  horizon only picks the first waiting trial that fits, sees the same
  trials run, in a slightly different order.

A chained trial taken from its chain while its worker may still run it
ahead is taken by the shell's start claim (`shell.executors.claim`): the
worker claims a chained trial before it runs it, the driver before it
starts it elsewhere, only the first claim succeeds, and a worker whose
claim fails ends its chain there, so a trial never runs twice.

A worker runs a chained trial only when the one before returned (not on an
error, a stop or a checkpoint), so a chain may run partly or not at all.
The shell says which ran (`ChainRan`); the others leave the chain and
start as usual, after those that ran: the last one that ran may still hold
its worker, and must get its place before a trial that needs a new one. A
chained trial the core never starts (the experiment stopped first) was run
for nothing: the shell drops what it produced.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from tunecore.core.checkpoints import current_checkpoint
from tunecore.core.schedulers.base import TrialScheduler, declared_horizon
from tunecore.core.stoppers import BuiltinStopper
from tunecore.model import TrialState, TrialStatus


def ends_alone(
    scheduler: TrialScheduler, stopper: BuiltinStopper | None, trial: TrialState
) -> bool:
    """Whether the trial's worker can take it from its start to its end
    with no answer from the driver: no decision on any of its results
    could be anything but CONTINUE, and nothing is asked of the worker at
    the end (a checkpoint, an export)."""
    spec = trial.spec
    policy = spec.checkpoint_policy
    if stopper is not None or spec.stopping_criterion or spec.export_formats:
        return False
    if policy.frequency or policy.at_end:
        return False
    horizon = declared_horizon(scheduler, trial.trial_id)
    return horizon is not None and horizon[1] == math.inf


def chain_for(
    limit: int,
    scheduler: TrialScheduler,
    stopper: BuiltinStopper | None,
    started: TrialState,
    waiting: Iterable[TrialState],
) -> tuple[str, ...]:
    """Up to `limit` waiting trials, in order, to chain behind `started`
    (a trial just started fresh); none when `started` itself needs the
    driver before its end."""
    if limit <= 0 or not _fresh(started, TrialStatus.RUNNING):
        return ()
    if not ends_alone(scheduler, stopper, started):
        return ()
    chained: list[str] = []
    for trial in waiting:
        if len(chained) == limit:
            break
        if (
            trial.chained_behind is None
            and _fresh(trial, TrialStatus.PENDING)
            and trial.spec.resources == started.spec.resources
            and ends_alone(scheduler, stopper, trial)
        ):
            chained.append(trial.trial_id)
    return tuple(chained)


def _fresh(trial: TrialState, status: TrialStatus) -> bool:
    """Never failed, nothing to restore, resources known."""
    return (
        trial.status is status
        and trial.num_failures == 0
        and not trial.awaiting_resources
        and current_checkpoint(trial) is None
    )


def reserved(trial: TrialState, trials: Mapping[str, TrialState]) -> bool:
    """Chained behind a trial that still runs: it starts nowhere else."""
    behind = trial.chained_behind
    return behind is not None and trials[behind].status is TrialStatus.RUNNING


@dataclass(frozen=True)
class Waiting:
    """The waiting trials as a start sees them (`sort_waiting`)."""

    released: str | None
    """The first chained behind a trial that has ended and that fits: it
    starts before any other."""
    free: list[TrialState]
    """The trials free to start anywhere, in order."""
    reserved: list[TrialState]
    """Those chained behind a trial that still runs, in order."""


def sort_waiting(
    waiting: Sequence[TrialState],
    trials: Mapping[str, TrialState],
    fits: Callable[[TrialState], bool],
) -> Waiting | None:
    """`Waiting`, in one pass; None when no waiting trial is chained (the
    scheduler then chooses among them all, as without chains)."""
    free: list[TrialState] = []
    held: list[TrialState] = []
    for trial in waiting:
        if trial.chained_behind is None:
            free.append(trial)
        elif reserved(trial, trials):
            held.append(trial)
        elif fits(trial):
            return Waiting(trial.trial_id, [], [])
        else:
            free.append(trial)
    return Waiting(None, free, held) if held else None
