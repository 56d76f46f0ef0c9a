"""A whole experiment as msgpack bytes, and back.

`ExperimentState` keeps its trials in persistent maps, which msgspec does
not encode, and derived bookkeeping (queues, counters, resources in use)
that must never disagree with the trials. A snapshot stores only the facts,
the trials in creation order, the configuration, the policies and the
experiment-level fields, and `from_snapshot` derives the rest, so a decoded
state is consistent by construction.

The snapshot is generic in its policy types because decoding needs concrete
classes: `BUILTIN` decodes everything tunecore ships, its schedulers being
those of the registry (`tunecore.core.schedulers.registry`); a user's own
policy is decoded by naming its type,
`decode_state(data, ExperimentSnapshot[MyScheduler, MySearcher])`, or by
adding it to a registry (`snapshot_kind(SCHEDULERS.including(...))`).
"""

from __future__ import annotations

from typing import Any, Generic, TypeAlias, TypeVar, cast

import immutables
import msgspec

from tunecore.core.experiment.books import Books
from tunecore.core.experiment.state import ExperimentConfig, ExperimentState, trials_in_order
from tunecore.core.registry import Registry, StoredBefore
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.core.search.external import ExternalSearcher
from tunecore.core.search.generator import BasicVariantGenerator
from tunecore.core.search.limiter import ConcurrencyLimiter
from tunecore.core.search.repeater import Repeater
from tunecore.core.stoppers import BuiltinStopper
from tunecore.model import Resources, TrialState
from tunecore.model.analysis import compact
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.model.json import flatten

SNAPSHOT_FORMAT = 2
"""The newest format this tunecore reads and writes. Format 2 (0.1.0,
issue 41) keeps a trial's metric analysis compact, only the stats its last
result does not tell (`model.analysis`), where format 1 kept all of them
under the same key: a format-1 snapshot is compacted as it decodes
(`_compacted`). A state whose trials have no result yet reads the same in
both, and is written as format 1 (`format_of`): a new experiment's log
header is what older tunecores wrote and read."""

COMPACT_ANALYSIS_FORMAT = 2

_Inner: TypeAlias = BasicVariantGenerator | ExternalSearcher
_Searchable: TypeAlias = _Inner | Repeater[_Inner]
BuiltinSearcher: TypeAlias = _Searchable | ConcurrencyLimiter[_Searchable]


class NewerSnapshotError(msgspec.DecodeError):
    """A snapshot of a newer format than this tunecore reads: a
    `msgspec.DecodeError`, like every other snapshot that cannot be read."""


S = TypeVar("S")
R = TypeVar("R")


class ExperimentSnapshot(
    msgspec.Struct, Generic[S, R], frozen=True, kw_only=True, omit_defaults=True
):
    """The facts of an experiment; see the module docstring. Fields added
    later have defaults (omitted when default), so older snapshots decode
    and re-encode to the same bytes."""

    format: int
    config: ExperimentConfig
    scheduler: S
    searcher: R | None
    stopper: BuiltinStopper | None = None
    trials: list[TrialState]
    total: Resources | None
    started_at: float | None
    now: float
    stopping: str | None
    done: bool
    error: str | None


FACTS: tuple[str, ...] = tuple(
    name for name in ExperimentSnapshot.__struct_fields__ if name not in ("format", "trials")
)
"""The experiment-level fields a snapshot keeps as they are: its own
declaration is their one list. Everything else in `ExperimentState` is the
trials or counted from them."""


def to_snapshot(state: ExperimentState) -> ExperimentSnapshot[object, object]:
    facts: dict[str, Any] = {name: getattr(state, name) for name in FACTS}
    trials = trials_in_order(state)
    return ExperimentSnapshot(format=format_of(trials), trials=trials, **facts)


def format_of(trials: list[TrialState]) -> int:
    """The oldest format that reads `trials` as they are: format 1 until a
    trial has a result (an analysis to keep compact)."""
    if any(trial.has_result for trial in trials):
        return COMPACT_ANALYSIS_FORMAT
    return 1


def from_snapshot(snapshot: ExperimentSnapshot[S, R]) -> ExperimentState:
    """The experiment, with every derived field recomputed from the trials."""
    trials: immutables.Map[str, TrialState] = immutables.Map(
        (trial.spec.trial_id, trial) for trial in snapshot.trials
    )
    facts: dict[str, Any] = {name: getattr(snapshot, name) for name in FACTS}
    saves = sum(len(trial.saving_to) for trial in snapshot.trials)
    settled = ExperimentState(trials=trials, saves=saves, **facts)
    return msgspec.structs.replace(settled, **Books.of(settled, snapshot.trials).counts())


def encode_state(state: ExperimentState) -> bytes:
    return to_msgpack(to_snapshot(state))


SnapshotKind: TypeAlias = type[ExperimentSnapshot[Any, Any]]


def snapshot_kind(schedulers: Registry = SCHEDULERS) -> SnapshotKind:
    """The snapshot type that decodes the schedulers of `schedulers` and the
    built-in searchers. (The union is built at run time from the table, so
    it is subscripted as a value; its static type is the protocol's.)"""
    generic: Any = ExperimentSnapshot
    return cast(SnapshotKind, generic[schedulers.union(), BuiltinSearcher])


BUILTIN: SnapshotKind = snapshot_kind()
"""Decodes every policy tunecore ships."""

BUILTIN_BEFORE: SnapshotKind = snapshot_kind(SCHEDULERS.as_before())
"""Decodes what older tunecores stored of the policies it ships, where that
differs (`Entry.stored_before`): tried only when `BUILTIN` refuses a
snapshot."""


def decode_state(data: bytes, kind: SnapshotKind = BUILTIN) -> ExperimentState:
    """Decode a snapshot; a snapshot written by a newer tunecore is refused.
    Raises only `msgspec.DecodeError` (`msgspec.ValidationError` naming the
    field for a value of the wrong type). A built-in policy stored in an
    older form (`BUILTIN_BEFORE`) is upgraded to the form it has today."""
    try:
        snapshot = from_msgpack(data, kind)
    except msgspec.ValidationError:
        if kind is not BUILTIN:
            raise
        snapshot = _stored_before(data)
    if snapshot.format > SNAPSHOT_FORMAT:
        raise NewerSnapshotError(
            f"this experiment snapshot has format {snapshot.format}, newer than the "
            f"{SNAPSHOT_FORMAT} this tunecore reads; upgrade tunecore to load it"
        )
    if snapshot.format < COMPACT_ANALYSIS_FORMAT:
        snapshot = msgspec.structs.replace(snapshot, trials=_compacted(snapshot.trials))
    return from_snapshot(snapshot)


def _compacted(trials: list[TrialState]) -> list[TrialState]:
    """Format-1 trials, whose stored analysis is the whole one, as format 2
    keeps them: the stats the last result does not tell, and the numeric
    metrics of the last result that have none (`model.analysis.compact`,
    the rule the step keeps)."""
    return [_compact_trial(trial) for trial in trials]


def _compact_trial(trial: TrialState) -> TrialState:
    if not (trial.stats_beyond_last or trial.last_result):
        return trial
    kept, unanalysed = compact(trial.stats_beyond_last, flatten(trial.last_result))
    return msgspec.structs.replace(trial, recorded_stats=kept, unanalysed=unanalysed)


def _stored_before(data: bytes) -> ExperimentSnapshot[Any, Any]:
    """The snapshot as an older tunecore stored it, its scheduler upgraded;
    the error `BUILTIN` gave when it is not that either."""
    try:
        snapshot = from_msgpack(data, BUILTIN_BEFORE)
    except msgspec.ValidationError:
        return from_msgpack(data, BUILTIN)  # raises the error of today's form
    scheduler = snapshot.scheduler
    if isinstance(scheduler, StoredBefore):
        return msgspec.structs.replace(snapshot, scheduler=scheduler.upgraded())
    return snapshot
