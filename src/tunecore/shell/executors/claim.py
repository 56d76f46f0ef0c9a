"""Who runs a chained trial: its start claim.

A trial chained behind another (`core.experiment.chains`, `Executor.start`'s
`then`) may be run by either of two parties that cannot wait for each
other: the worker holding the chain, once the trial before it has
returned, and the driver, when the core starts the trial elsewhere first.
`claim_start` settles which one does. Its contract, kept by every party
that may run a chained trial:

1. Whoever would run a chained trial claims it first: the worker before it
   runs the trial ahead (`TrialHost.train_many`), the executor for the
   driver before it starts the trial on another worker (`RayExecutor.start`).
2. Of all the claims of one trial exactly one succeeds, the first: a claim
   makes the trial's directory, atomically (one `mkdir`), on the storage
   the driver and the workers share. One that cannot make it (no such
   storage where it runs) fails: that party does not own the trial.
3. A party whose claim failed never runs the trial: a worker ends its chain
   there; the driver waits for that worker's reply and reports what it
   brings, or starts the trial as any other if the worker did not run it.
4. Nothing else makes a chained trial's directory before its claim: the
   loop hands a chained trial to the executor before it makes the trial's
   directory, and names its files meanwhile without making them
   (`ExperimentLoop._start`, `_path`).
5. A claim is never given back: the directory of a chained trial the core
   never started (the experiment stopped first), with what a worker wrote
   there, is deleted at the end of the run
   (`ExperimentLoop._drop_unstarted_chains`).

Executors that never run a chain ahead (in-process, simulated) make no
claim, and a trial that is not chained is never claimed.
"""

from __future__ import annotations

import os

from tunecore.shell.trainable.worker import TrialContext


def claim_start(context: TrialContext) -> bool:
    """Claim the chained trial `context` is for (see the module docstring):
    True for the one caller that owns it, and so runs it."""
    try:
        os.mkdir(context.trial_dir)
    except OSError:  # made already (or no place for it here): not ours
        return False
    return True
