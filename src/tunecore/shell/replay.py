"""Rebuild an experiment from its event log, without Ray and without
running any user code.

`replay` starts from the state in the log's header and feeds every event to
`step`, exactly as the live loop did, so it returns the same final state
and the same command stream. With `verify` it checks each snapshot it passes
(the live state and command digest at that point) and raises
`ReplayMismatchError` naming the first record where they differ.
`rebuild` is the fast path a resume takes: the newest snapshot that is
sealed to this log and decodes (`tunecore.shell.journal`), then only the
events after it; `latest` reads a log and takes that path. What a
snapshot does not keep (every result a trial reported, every ask of a
searcher object) takes one `HistoryWalk` from the first event, shared by
every reader that registers a visitor on it (`LoggedResults` is one). A snapshot
whose seal does not match the log is ignored with a warning, by replay
too; one without a seal (an older tunecore's) is still compared with the
replayed state by `verify`.

States decode with the built-in schedulers and searchers; an experiment run
with a policy type of the user's own passes `kind`,
`ExperimentSnapshot[MyScheduler, MySearcher]` (the types are code, which
the log names but never holds).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from tunecore.core.experiment import ExperimentState, step
from tunecore.core.experiment.snapshot import (
    BUILTIN,
    SnapshotKind,
    decode_state,
    encode_state,
)
from tunecore.core.results import as_heard, is_end_marker
from tunecore.model import (
    Command,
    ExperimentEvent,
    ExperimentResumed,
    JsonDict,
    Rejection,
    ResultReported,
)
from tunecore.shell.collector import collector_paused
from tunecore.shell.eventlog import (
    HEADER_OFFSET,
    CorruptLogError,
    LogContents,
    LogError,
    LogHeader,
    TornTail,
    read_log,
)
from tunecore.shell.journal import EMPTY_DIGEST, SnapshotFile, SnapshotStore, chain_digest
from tunecore.shell.resume import logged_rows

logger = logging.getLogger(__name__)


class ReplayMismatchError(LogError):
    """Replay disagrees with what the live run recorded."""


@dataclass
class Replayed:
    """The outcome of a replay: the state after the last event, and the
    commands `step` returned, each with the number of its event (1-based)."""

    header: LogHeader
    state: ExperimentState
    records: int
    digest: bytes
    commands: list[tuple[int, Command]] = field(default_factory=list)
    rejected: int = 0
    snapshots_verified: int = 0
    torn: TornTail | None = None
    set_aside: list[Path] = field(default_factory=list)
    """Where a truncation kept what it cut: the log's bytes, the snapshots."""
    snapshot: SnapshotFile | None = None
    """The snapshot a `rebuild` started from, if any; `snapshot_state` is
    its state (what a resume's `shell.files_mark` compares with)."""
    snapshot_state: ExperimentState | None = None


def replay(
    experiment_dir: str | Path,
    *,
    verify: bool = True,
    keep_commands: bool = True,
    truncate: bool = False,
    quiet: bool = False,
    kind: SnapshotKind = BUILTIN,
) -> Replayed:
    """Every event from the first; see the module docstring. `~` in
    `experiment_dir` is expanded."""
    with collector_paused():
        return _replay(
            Path(experiment_dir).expanduser(),
            verify=verify,
            keep_commands=keep_commands,
            truncate=truncate,
            quiet=quiet,
            kind=kind,
        )


def _replay(
    experiment_dir: Path,
    *,
    verify: bool,
    keep_commands: bool,
    truncate: bool,
    quiet: bool,
    kind: SnapshotKind,
) -> Replayed:
    snapshots = SnapshotStore(experiment_dir)
    contents = read_log(experiment_dir, truncate=truncate, quiet=quiet, covered=snapshots.covered())
    set_aside = [] if contents.quarantined is None else [contents.quarantined]
    if truncate:
        set_aside += snapshots.set_aside_beyond(contents)
    checkpoints = set(snapshots.available()) if verify else set()
    replayed = Replayed(
        header=contents.header,
        state=_initial_state(contents, kind),
        records=0,
        digest=EMPTY_DIGEST,
        torn=contents.torn,
        set_aside=set_aside,
    )
    for event in contents.events:
        _advance(replayed, event, keep_commands)
        if replayed.records in checkpoints:
            _verify(replayed, snapshots, contents, kind)
    return replayed


def latest(
    experiment_dir: str | Path, *, quiet: bool = False, kind: SnapshotKind = BUILTIN
) -> Replayed:
    """The state after the last event of `experiment_dir`'s log, read as
    `replay` reads it, but stepped from the newest usable snapshot on
    (`rebuild`): what a reader that only wants the state now (`tunecore
    status`) needs, at a cost that does not grow with the events the
    snapshot already covers. `~` is expanded."""
    experiment_dir = Path(experiment_dir).expanduser()
    with collector_paused():
        covered = SnapshotStore(experiment_dir).covered()
        contents = read_log(experiment_dir, quiet=quiet, covered=covered, lazy=True)
        return rebuild(contents, experiment_dir, kind)


def rebuild(
    contents: LogContents,
    experiment_dir: str | Path,
    kind: SnapshotKind = BUILTIN,
    *visitors: Visitor,
) -> Replayed:
    """The state after every event of `contents`, from the newest usable
    snapshot on (commands are not kept); a snapshot whose state does not
    decode is skipped with a warning. `visitors` are called as `walk`
    calls them, on each accepted event stepped here (those after the
    snapshot): for a reader that needs them besides the state (a resume's
    repair of the files its snapshot's mark leaves, `shell.files_mark`),
    without stepping them again."""
    with collector_paused():  # decoding a snapshot of 100,000 trials
        return _rebuild(contents, experiment_dir, kind, visitors)


def _rebuild(
    contents: LogContents,
    experiment_dir: str | Path,
    kind: SnapshotKind,
    visitors: tuple[Visitor, ...],
) -> Replayed:
    state, records, digest, used = None, 0, EMPTY_DIGEST, None
    store = SnapshotStore(experiment_dir)
    for snapshot in store.usable(contents):
        try:
            state = decode_state(snapshot.state, kind)
        except (msgspec.DecodeError, ValueError) as error:
            logger.warning(
                "Ignoring snapshot %s: its state does not decode (%s)",
                store.path(snapshot.records),
                error,
            )
            continue
        records, digest, used = snapshot.records, snapshot.digest, snapshot
        break
    if state is None:
        state = _initial_state(contents, kind)
    replayed = Replayed(
        header=contents.header,
        state=state,
        records=records,
        digest=digest,
        torn=contents.torn,
        snapshot=used,
        snapshot_state=None if used is None else state,
    )
    for event in contents.events[records:]:
        _advance(replayed, event, keep_commands=False, visitors=visitors)
    return replayed


class LoggedResults:
    """A `HistoryWalk` visitor: every result each trial reported, in order,
    as its result files got them live (its `last_result` after each
    accepted result, as the callbacks heard it, `as_heard`; a function's
    end marker is none), collected from the
    first event into `by_trial`: what a resume puts back when the files lag
    the log (an experiment in storage, whose result files are shipped less
    often than its log)."""

    def __init__(self) -> None:
        self.by_trial: dict[str, list[JsonDict]] = {}

    def __call__(self, _: ExperimentState, event: ExperimentEvent, after: ExperimentState) -> None:
        results = self.by_trial
        if isinstance(event, ResultReported) and not is_end_marker(event.result):
            trial = after.trials[event.trial_id]
            results.setdefault(event.trial_id, []).append(as_heard(trial.last_result))
        elif isinstance(event, ExperimentResumed):
            # That resume dropped from the files the results its trials
            # were to report again (`resume.rows_to_keep`): so do these.
            for trial_id, reported in results.items():
                results[trial_id] = logged_rows(after.trials[trial_id], reported)


Visitor = Callable[[ExperimentState, ExperimentEvent, ExperimentState], None]
"""What a walk calls for each accepted event: `visit(before, event, after)`."""


def walk(contents: LogContents, kind: SnapshotKind, *visitors: Visitor) -> None:
    """Step every event of `contents` from the header's state on, calling
    each of `visitors(before, event, after)` in turn for each one the core
    accepted: for what needs the whole history, which a snapshot does not
    keep (every result a trial reported; every ask and tell of a searcher
    object). One pass, however many visitors."""
    state = _initial_state(contents, kind)
    for event in contents.events:
        outcome = step(state, event)
        if isinstance(outcome, Rejection):
            continue
        for visit in visitors:
            visit(state, event, outcome[0])
        state = outcome[0]


class HistoryWalk:
    """One pass over a log's whole history, shared by every reader that
    needs it (a resume: the result files' repair, `LoggedResults`; a
    searcher object's rebuild, `api.searching.restored_runtime`). Each
    reader `register`s its visitor, then `run` steps the log once (not at
    all without a visitor), calling the visitors in the order they came,
    then each reader's `then`, in the same order. A reader's answer is
    ready once `run` has returned."""

    def __init__(self, contents: LogContents, kind: SnapshotKind = BUILTIN) -> None:
        self._contents = contents
        self._kind = kind
        self._visitors: list[Visitor] = []
        self._then: list[Callable[[], None]] = []
        self._ran = False

    def register(self, visitor: Visitor, then: Callable[[], None] | None = None) -> None:
        """Have `visitor` called on every accepted event of the walk, and
        `then` (if given) once the walk is over."""
        if self._ran:
            raise RuntimeError("the walk has run: a visitor registered now sees nothing")
        self._visitors.append(visitor)
        if then is not None:
            self._then.append(then)

    def run(self) -> None:
        """The one pass (`walk`); a second call is an error: it would feed
        the visitors every event again."""
        if self._ran:
            raise RuntimeError("the walk has run already")
        self._ran = True
        if self._visitors:
            walk(self._contents, self._kind, *self._visitors)
        for then in self._then:
            then()


_OWN_TYPES = (
    "If it ran with a scheduler or searcher type of your own, pass its types: "
    "kind=ExperimentSnapshot[MyScheduler, MySearcher]"
)


def _initial_state(contents: LogContents, kind: SnapshotKind) -> ExperimentState:
    return header_state(contents.header, contents.path, kind)


def header_state(header: LogHeader, path: Path, kind: SnapshotKind = BUILTIN) -> ExperimentState:
    """The state in a log's header. One that does not decode makes the
    header corrupt (or, if a field has the wrong type, the experiment may
    have run with policy types of the user's own, which `kind` names)."""
    try:
        return decode_state(header.initial_state, kind)
    except msgspec.DecodeError as error:
        why = f"its initial state does not decode: {error}"
        if isinstance(error, msgspec.ValidationError):
            why += f". {_OWN_TYPES}"
        raise CorruptLogError(path, HEADER_OFFSET, 0, why) from error


def _advance(
    replayed: Replayed,
    event: ExperimentEvent,
    keep_commands: bool,
    visitors: tuple[Visitor, ...] = (),
) -> None:
    before = replayed.state
    outcome = step(before, event)
    replayed.records += 1
    if isinstance(outcome, Rejection):
        replayed.rejected += 1
        return
    replayed.state, commands = outcome
    for visit in visitors:
        visit(before, event, replayed.state)
    replayed.digest = chain_digest(replayed.digest, replayed.records, commands)
    if keep_commands:
        replayed.commands.extend((replayed.records, c) for c in commands)


def _verify(
    replayed: Replayed, snapshots: SnapshotStore, contents: LogContents, kind: SnapshotKind
) -> None:
    snapshot = snapshots.load(replayed.records)
    if snapshot is None:
        return
    path = contents.path
    if snapshot.seal and (why := snapshot.fits(contents)) is not None:
        logger.warning("Ignoring snapshot %s: %s", snapshots.path(replayed.records), why)
        return
    if snapshot.digest != replayed.digest:
        raise ReplayMismatchError(
            f"{path}: after record {replayed.records} the replayed commands differ from "
            "the live run's (command digest mismatch)"
        )
    if not _same_state(snapshot.state, replayed.state, kind):
        raise ReplayMismatchError(
            f"{path}: after record {replayed.records} the replayed state differs from "
            "the live run's snapshot"
        )
    replayed.snapshots_verified += 1


def _same_state(stored: bytes, state: ExperimentState, kind: SnapshotKind) -> bool:
    """Whether a snapshot holds `state`: the same bytes, or, for a snapshot
    an older tunecore wrote, the same bytes once this one has read it (a
    policy whose stored form grew, such as the median rule's persistent
    maps, encodes the same state differently now)."""
    encoded = encode_state(state)
    if stored == encoded:
        return True
    try:
        return encode_state(decode_state(stored, kind)) == encoded
    except msgspec.DecodeError:
        return False
