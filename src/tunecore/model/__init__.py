"""The data layer: frozen msgspec structs and enums, nothing that does I/O.

Every value here serializes with msgspec alone (msgpack for the event log and
snapshots, JSON for people), so nothing tunecore persists is a pickle and
decoding a payload can only ever build these declared types.

The structs made on every event (`TrialState`, `MetricStats`, `Applied`,
`ContinueTrial`, and the experiment state) are declared `gc=False`. They
are immutable trees of plain data and never refer back to an owner, so they
can never be part of a reference cycle, and leaving them out of the cyclic
garbage collector's tracking is about 5 % of the cost of a result event.
"""

from tunecore.model.analysis import MetricStats
from tunecore.model.checkpoint import (
    CheckpointHistory,
    CheckpointPolicy,
    CheckpointRef,
    CheckpointStorage,
)
from tunecore.model.commands import (
    AskScheduler,
    AskSearcher,
    ChainTrials,
    Command,
    ContinueTrial,
    DeleteCheckpoint,
    DrawValues,
    ExperimentDone,
    PauseTrial,
    RecordExploit,
    ResetTrial,
    ResolveResources,
    SaveCheckpoint,
    StartTrial,
    StopTrial,
)
from tunecore.model.decision import Decision, Exploit, Horizon, Verdict
from tunecore.model.errors import InvalidFieldError
from tunecore.model.events import (
    Asked,
    ChainRan,
    CheckpointSaved,
    ClusterResourcesChanged,
    ExperimentEvent,
    ExperimentInterrupted,
    ExperimentResumed,
    ExperimentStopRequested,
    PauseRequested,
    ResourcesUpdateRequested,
    ResultReported,
    SchedulerAnswered,
    SchedulerFailed,
    SearcherFailed,
    StartRequested,
    StopRequested,
    Tick,
    TrialChangeEvent,
    TrialEvent,
    TrialFailed,
    TrialRequested,
    TrialRestored,
    TrialStarted,
    ValuesDrawn,
)
from tunecore.model.json import JsonDict, JsonValue
from tunecore.model.objective import Mode, ModeArg
from tunecore.model.outcome import Applied, Rejection
from tunecore.model.resources import Resources
from tunecore.model.trial import (
    Exploited,
    ExportFormat,
    Location,
    TrialSpec,
    TrialState,
    TrialStatus,
    parse_export_formats,
)

__all__ = [
    "Applied",
    "AskScheduler",
    "AskSearcher",
    "Asked",
    "ChainRan",
    "ChainTrials",
    "CheckpointHistory",
    "CheckpointPolicy",
    "CheckpointRef",
    "CheckpointSaved",
    "CheckpointStorage",
    "ClusterResourcesChanged",
    "Command",
    "ContinueTrial",
    "Decision",
    "DeleteCheckpoint",
    "DrawValues",
    "ExperimentDone",
    "ExperimentEvent",
    "ExperimentInterrupted",
    "ExperimentResumed",
    "ExperimentStopRequested",
    "Exploit",
    "Exploited",
    "ExportFormat",
    "Horizon",
    "InvalidFieldError",
    "JsonDict",
    "JsonValue",
    "Location",
    "MetricStats",
    "Mode",
    "ModeArg",
    "PauseRequested",
    "PauseTrial",
    "RecordExploit",
    "Rejection",
    "ResetTrial",
    "ResolveResources",
    "Resources",
    "ResourcesUpdateRequested",
    "ResultReported",
    "SaveCheckpoint",
    "SchedulerAnswered",
    "SchedulerFailed",
    "SearcherFailed",
    "StartRequested",
    "StartTrial",
    "StopRequested",
    "StopTrial",
    "Tick",
    "TrialChangeEvent",
    "TrialEvent",
    "TrialFailed",
    "TrialRequested",
    "TrialRestored",
    "TrialSpec",
    "TrialStarted",
    "TrialState",
    "TrialStatus",
    "ValuesDrawn",
    "Verdict",
    "parse_export_formats",
]
