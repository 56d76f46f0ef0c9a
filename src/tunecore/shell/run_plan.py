"""What `ExperimentLoop` is given: the run's plan and its parts.

`RunPlan` holds the decisions made once, before the run, from the user's
settings and the environment (`tunecore.api.plan.plan_run`, a pure
function): whether trials are chained on a reused worker and how many,
when a trial's directory is made, where a trial's output goes. It is data,
so a test states a plan without building a `Tuner`. `LoopParts` holds the
objects the loop drives and reports to (the workers, the storage, the log,
the callbacks, the user's code), built by the assembly (`api.tuner`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tunecore.core.experiment import ExperimentState
from tunecore.model import JsonDict, Resources, TrialState
from tunecore.shell.allocations import ResourceAllocator
from tunecore.shell.callbacks import CallbackList
from tunecore.shell.executors.base import Executor
from tunecore.shell.functions import UserFunctions
from tunecore.shell.imperative import SchedulerRuntime
from tunecore.shell.inbox import Inbox
from tunecore.shell.journal import Journal
from tunecore.shell.searchers import SearcherRuntime
from tunecore.shell.stoppers import UserStoppers
from tunecore.shell.storage.layout import ExperimentStorage
from tunecore.shell.storage.store import Store
from tunecore.shell.trial_view import TrialViews


@dataclass(frozen=True)
class RunPlan:
    """The run's decisions, each made once before it starts. The defaults
    are a plain run: no chains, directories made at once, no output files."""

    chain_starts: int | None = 0
    """How many waiting trials a starting trial's worker may run after it
    (`ExperimentConfig.chain_starts`); None on a resume, which goes on with
    the logged config's."""
    run_chains: bool = False
    """Whether the chains the core makes (`ChainTrials`) go to the executor:
    only when nothing of the user's watches a trial start (a callback, a
    stopper of their own) and nothing is shipped to a storage, since a
    chained trial's function runs before the core starts it."""
    trial_dirs_at_once: bool = True
    """Whether a trial's directory is made as it starts (a callback of the
    user's may open files in it: Ray's logging guide does), or left to the
    storage's file queue (`ExperimentStorage.trial_dir`)."""
    chdir: bool = False
    """Whether a trial's worker runs in the trial's directory
    (`TuneConfig.chdir_to_trial_dir`, or Ray's default there)."""
    output_files: tuple[str, str] | None = None
    """The files in the trial's directory its stdout and stderr go to
    (`RunConfig.log_to_file`), or None."""
    sync_artifacts: bool = False
    """`SyncConfig.sync_artifacts`: a trial's artifacts go to the storage."""
    sync_artifacts_on_checkpoint: bool = True
    """`SyncConfig.sync_artifacts_on_checkpoint`."""
    strict_metrics: bool = True
    """Whether a result missing the metric fails its trial (unless
    `TUNE_DISABLE_STRICT_METRIC_CHECKING=1`)."""
    stop_on_sigint: bool = True
    """Whether the first Ctrl-C ends the run and `fit()` returns, as Ray's
    SIGINT handler has it; any later one raises `KeyboardInterrupt` from
    `fit()`. False (`TUNE_DISABLE_SIGINT_HANDLER=1`, Ray's switch for its
    handler): the first one raises. Either way the log is left whole."""
    draws_seed: bool = False
    """Whether the search is unseeded and gets a fresh seed, announced so
    the run can be repeated (a new experiment's only)."""
    poll_seconds: float = 1.0
    """How long the loop waits for the workers' events before a `Tick`."""
    mark_files: bool = False
    """Whether snapshots may vouch for the trial files (`shell.files_mark`)
    from the start: a new run's; a resume's only once it has repaired them
    (the loop then turns it on), and never an experiment shipped to a
    storage."""


@dataclass(frozen=True)
class LoopParts:
    """The objects `ExperimentLoop` drives; each None is a part this run
    does without."""

    executor: Executor
    storage: ExperimentStorage
    callbacks: CallbackList
    journal: Journal | None = None
    """The event log and its snapshots (None: nothing is logged)."""
    clock: Callable[[], float] = time.time
    """Where event timestamps come from."""
    on_state: Callable[[ExperimentState], None] | None = None
    """Called with the state after every round (the progress output)."""
    views: TrialViews = field(default_factory=TrialViews)
    """The trials as callbacks see them, and their names."""
    trial_dirname: Callable[[TrialState], str] | None = None
    """The user's `trial_dirname_creator`."""
    resources_of: Callable[[JsonDict], Resources] | None = None
    """A trial's resources from its config, by the user's function."""
    inbox: Inbox | None = None
    """Where `tunecore stop` and `tunecore add` post requests."""
    stopper: UserStoppers | None = None
    """Stoppers of the user's own, which judge each result here."""
    functions: UserFunctions | None = None
    """The user's `sample_from` functions."""
    allocator: ResourceAllocator | None = None
    """A `ResourceChangingScheduler`'s allocation function."""
    searchers: SearcherRuntime | None = None
    """A searcher object of the user's, which the core asks through here."""
    scheduler_object: SchedulerRuntime | None = None
    """A scheduler object of the user's (Ray's imperative API), likewise."""
    store: Store | None = None
    """The storage an experiment is shipped to, if not a local directory."""
    lease_generation: int = 0
    """The generation of this driver's lease on `store`, which its workers
    check before they write there (`TrialContext.lease_generation`)."""
    after_shipped: Callable[[Callable[[], None]], None] | None = None
    """Runs an action once the log that ordered it is in `store`."""
