"""A whole experiment as msgpack bytes, and back.

`ExperimentState` keeps its trials in persistent maps, which msgspec does
not encode, and derived bookkeeping (queues, counters, resources in use)
that must never disagree with the trials. A snapshot stores only the facts,
the trials in creation order, the configuration, the policies and the
experiment-level fields, and `from_snapshot` derives the rest, so a decoded
state is consistent by construction.

The snapshot is generic in its policy types because decoding needs concrete
classes: `BuiltinScheduler` and `BuiltinSearcher` cover everything tunecore
ships; a user's own policy is decoded by naming its type,
`decode_state(data, ExperimentSnapshot[MyScheduler, MySearcher])`.
"""

from __future__ import annotations

from typing import Generic, TypeAlias, TypeVar

import immutables
import msgspec

from tunecore.core.experiment.books import Books
from tunecore.core.experiment.state import ExperimentConfig, ExperimentState, trials_in_order
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.hb_bohb import HyperBandForBOHB
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.core.schedulers.median import MedianStoppingRule
from tunecore.core.schedulers.pb2 import PB2
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.schedulers.pbt_replay import PopulationBasedTrainingReplay
from tunecore.core.search.domains import SamplingDomain
from tunecore.core.search.external import ExternalSearcher
from tunecore.core.search.generator import BasicVariantGenerator
from tunecore.core.search.limiter import ConcurrencyLimiter
from tunecore.core.search.repeater import Repeater
from tunecore.core.stoppers import BuiltinStopper
from tunecore.model import Resources, TrialState
from tunecore.model.codec import from_msgpack, to_msgpack

SNAPSHOT_FORMAT = 1

BuiltinScheduler: TypeAlias = (
    FIFOScheduler
    | ASHAScheduler
    | HyperBandScheduler
    | HyperBandForBOHB
    | MedianStoppingRule
    | PopulationBasedTraining[SamplingDomain]
    | PB2
    | PopulationBasedTrainingReplay
)
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


def to_snapshot(state: ExperimentState) -> ExperimentSnapshot[object, object]:
    ordered = trials_in_order(state)
    return ExperimentSnapshot(
        format=SNAPSHOT_FORMAT,
        config=state.config,
        scheduler=state.scheduler,
        searcher=state.searcher,
        stopper=state.stopper,
        trials=ordered,
        total=state.total,
        started_at=state.started_at,
        now=state.now,
        stopping=state.stopping,
        done=state.done,
        error=state.error,
    )


def from_snapshot(snapshot: ExperimentSnapshot[S, R]) -> ExperimentState:
    """The experiment, with every derived field recomputed from the trials."""
    trials: immutables.Map[str, TrialState] = immutables.Map()
    for trial in snapshot.trials:
        trials = trials.set(trial.trial_id, trial)
    settled = ExperimentState(
        config=snapshot.config,
        scheduler=snapshot.scheduler,  # type: ignore[arg-type]
        searcher=snapshot.searcher,  # type: ignore[arg-type]
        stopper=snapshot.stopper,
        trials=trials,
        saves=sum(len(trial.saving_to) for trial in snapshot.trials),
        total=snapshot.total,
        started_at=snapshot.started_at,
        now=snapshot.now,
        stopping=snapshot.stopping,
        done=snapshot.done,
        error=snapshot.error,
    )
    return msgspec.structs.replace(settled, **Books.of(settled, snapshot.trials).counts())


def encode_state(state: ExperimentState) -> bytes:
    return to_msgpack(to_snapshot(state))


def decode_state(
    data: bytes,
    kind: type[ExperimentSnapshot[S, R]] = ExperimentSnapshot[  # type: ignore[assignment]
        BuiltinScheduler, BuiltinSearcher
    ],
) -> ExperimentState:
    """Decode a snapshot; a snapshot written by a newer tunecore is refused.
    Raises only `msgspec.DecodeError` (`msgspec.ValidationError` naming the
    field for a value of the wrong type)."""
    snapshot = from_msgpack(data, kind)
    if snapshot.format > SNAPSHOT_FORMAT:
        raise NewerSnapshotError(
            f"this experiment snapshot has format {snapshot.format}, newer than the "
            f"{SNAPSHOT_FORMAT} this tunecore reads; upgrade tunecore to load it"
        )
    return from_snapshot(snapshot)
