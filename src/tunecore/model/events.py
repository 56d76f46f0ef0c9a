"""Events: past-tense facts and requests that drive the core.

Each carries every non-deterministic input it depends on (its timestamp
`at`, the result, the error text, the worker location), so applying the same
events always gives the same state. They are a tagged union: the type name
is written into the encoded record and decoding picks the class by it.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from tunecore.model.checkpoint import CheckpointRef
from tunecore.model.errors import InvalidFieldError, floats_as_decoded, unset_unless_true
from tunecore.model.json import JsonDict, JsonValue
from tunecore.model.resources import Resources
from tunecore.model.trial import Location

LATEST_AT = 253402300799.0
"""9999-12-31 23:59:59 UTC: the last moment a `datetime` shows, so the
newest time an event may carry (error.txt and trial names format it)."""


class _EventBase(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """`at` is when it happened, in seconds since the epoch (checked, as a
    log record that decodes must never crash the code formatting it)."""

    at: float

    def __post_init__(self) -> None:
        if not 0 <= self.at <= LATEST_AT:  # NaN fails too
            raise InvalidFieldError(
                f"{type(self).__name__}.at", self.at, f"seconds since the epoch, 0 to {LATEST_AT}"
            )
        floats_as_decoded(self, "at")


class _TrialEventBase(_EventBase, frozen=True, kw_only=True, tag=True):
    trial_id: str


class StartRequested(_TrialEventBase, frozen=True, kw_only=True, tag=True):
    """Resources were found: start (or resume) the trial."""


class TrialStarted(_TrialEventBase, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """The worker for a RUNNING trial is up, at `location`. `dirname` is
    the trial's directory name, recorded by the shell on the trial's first
    start when a `trial_dirname_creator` named it (`TrialState.dirname`):
    the creator can give two trials one name, and the rule that makes a
    name safe can change between versions, so the log keeps the name the
    trial's files are under. Omitted when None (logs before it had none)."""

    location: Location = Location()
    dirname: str | None = None


class ResultReported(_TrialEventBase, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """The trainable reported one result. `stopped_by` names the user's own
    stopper (code, run by the shell before this event is logged) that ends
    the trial on this result, so replay needs no user code. `allocation`
    is, likewise, what the user's `resources_allocation_function` answered
    on it: the trial's resources after this result (its current ones when
    the function said None), asked only when the scheduler wanted it.
    `decision` is what a scheduler of the user's written against Ray's
    imperative API (`ImperativeScheduler`) returned for it, asked only
    when the core wanted it."""

    result: JsonDict
    stopped_by: str | None = None
    allocation: Resources | None = None
    decision: Literal["CONTINUE", "PAUSE", "STOP"] | None = None


class CheckpointSaved(_TrialEventBase, frozen=True, kw_only=True, tag=True):
    """A requested save finished."""

    checkpoint: CheckpointRef


class TrialRestored(_TrialEventBase, frozen=True, kw_only=True, tag=True):
    """The worker finished restoring the checkpoint it was started from."""


class TrialFailed(_TrialEventBase, frozen=True, kw_only=True, tag=True):
    """The trainable raised, or its worker died; `error` is the traceback."""

    error: str


class PauseRequested(_TrialEventBase, frozen=True, kw_only=True, tag=True):
    """Pause a RUNNING trial, keeping an in-memory checkpoint to resume from."""


class StopRequested(_TrialEventBase, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """Stop the trial for good."""

    request: str = ""
    """The inbox request's name, when one asked (a resume never takes it twice)."""


class ResourcesUpdateRequested(_TrialEventBase, frozen=True, kw_only=True, tag=True):
    """Change what a PENDING or PAUSED trial asks for."""

    resources: Resources


class ClusterResourcesChanged(_EventBase, frozen=True, kw_only=True, tag=True):
    """The cluster's total resources, as the shell measured them."""

    total: Resources


class TrialRequested(_EventBase, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """Add a trial with this config from outside the searcher (the CLI's
    `add`, or a user's own search loop)."""

    config: JsonDict
    experiment_tag: str = ""
    request: str = ""
    """The inbox request's name, when one asked (a resume never takes it twice)."""


class ValuesDrawn(_EventBase, frozen=True, kw_only=True, tag=True):
    """Values of a user's functions, computed by the shell for a policy
    that asked for them (`ValuesWanted`: a `sample_from` in the param space
    for the searcher, a function in PBT's `hyperparam_mutations` for the
    scheduler). Logged, so replay and resume need no user code. `key` and
    the values' order are the request's."""

    owner: Literal["searcher", "scheduler"]
    key: int
    values: list[JsonValue]


class Asked(_EventBase, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """A searcher object in the shell answered the ask the core's
    `ExternalSearcher` waited for (`key`, for trial `trial_id`): the shell
    told it the first `told` untold entries, in order, then asked once and
    got `config` (None: nothing now; `finished`: never again). Logged, so
    replay needs neither the object nor its package, and a resume re-runs
    the same tells and asks to rebuild it."""

    key: int
    trial_id: str
    told: int = 0
    config: JsonDict | None = None
    finished: bool = False


class SearcherFailed(_EventBase, frozen=True, kw_only=True, tag=True):
    """The searcher object in the shell raised (or suggested a config
    outside the param space): the experiment ends with `error`, keeping
    everything recorded so far.

    `resumable`: True (the shell always sets it) leaves the unfinished
    trials as an `ExperimentInterrupted` does (running ones wait again,
    to restart from their newest persistent checkpoint), so a restore runs
    them again, as Ray Tune does. Logs written before the field lack it:
    there the failure stopped them for good (TERMINATED), and their replay
    does so again. Unset unless True, so such a log's bytes are as
    written."""

    error: str
    resumable: bool | UnsetType = UNSET

    def __post_init__(self) -> None:
        super().__post_init__()
        unset_unless_true(self, "resumable")


class Tick(_EventBase, frozen=True, kw_only=True, tag=True):
    """Time passed without anything else happening; lets time limits fire."""


class ChainRan(_EventBase, frozen=True, kw_only=True, tag=True):
    """The worker of `trial_id` is done with the trials chained behind it
    (`ChainTrials`): it ran `ran` (in order), and none of the others. Those
    it did not run leave the chain: they start as any waiting trial, after
    the ones it ran, which hold their results, or their worker."""

    trial_id: str
    ran: tuple[str, ...] = ()


class SchedulerAnswered(_EventBase, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """A scheduler object of the user's in the shell (Ray's imperative API,
    held in the core by `ImperativeScheduler`) was told the first `told`
    notes its core counterpart held untold (`on_trial_add`,
    `on_trial_complete`, ...) and, when `chose`, asked
    `choose_trial_to_run`, which named `chosen` (None: no trial). Logged,
    so replay needs neither the object nor its code."""

    told: int = 0
    chose: bool = False
    chosen: str | None = None


class SchedulerFailed(_EventBase, frozen=True, kw_only=True, tag=True):
    """A scheduler object of the user's raised (or answered something that
    is no verdict): the experiment ends with `error`; `resumable` as for
    `SearcherFailed`."""

    error: str
    resumable: bool | UnsetType = UNSET

    def __post_init__(self) -> None:
        super().__post_init__()
        unset_unless_true(self, "resumable")


class ExperimentStopRequested(_EventBase, frozen=True, kw_only=True, tag=True):
    """Stop every trial for good and end the experiment (a user's stop, a
    stopper's `stop_all`). Stopped trials are TERMINATED: a resume does not
    run them again."""

    reason: str = "stop requested"


class ExperimentInterrupted(_EventBase, frozen=True, kw_only=True, tag=True):
    """The driver is going away (Ctrl-C) and the experiment ends now, but
    nothing is finished by it: running trials wait again (PENDING, as after
    a crash), paused and pending ones stay as they are, and saves in flight
    are dropped. `Tuner.restore` / `tunecore resume` runs them on."""

    reason: str = "interrupted"


class ExperimentResumed(_EventBase, frozen=True, kw_only=True, tag=True):
    """The driver restarted after a crash or a stop and goes on from the
    replayed state. RUNNING trials wait again (their workers are gone);
    `resume_unfinished=False` ends unfinished trials instead;
    `resume_errored` retries trials in ERROR from their newest persistent
    checkpoint, `restart_errored` from scratch."""

    resume_unfinished: bool = True
    resume_errored: bool = False
    restart_errored: bool = False


TrialChangeEvent: TypeAlias = (
    StartRequested
    | TrialStarted
    | CheckpointSaved
    | TrialRestored
    | TrialFailed
    | PauseRequested
    | StopRequested
    | ResourcesUpdateRequested
)
"""A trial's events other than its results: each goes to the trial's
lifecycle as it is (a result goes there with its policies' verdict)."""

TrialEvent: TypeAlias = ResultReported | TrialChangeEvent

ExperimentEvent: TypeAlias = (
    TrialEvent
    | ClusterResourcesChanged
    | TrialRequested
    | ValuesDrawn
    | Asked
    | SearcherFailed
    | SchedulerAnswered
    | SchedulerFailed
    | Tick
    | ChainRan
    | ExperimentStopRequested
    | ExperimentInterrupted
    | ExperimentResumed
)
