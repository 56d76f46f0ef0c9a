"""Which trials' result files a resume must put back in line with the
event log, without reading every trial's files and stepping every event.

The loop writes a trial's result.json and progress.csv lines and its
params.json after logging, on the storage's background thread
(`shell.resume`). Before a periodic snapshot it drains that thread and
records in the snapshot a `FilesMark`: every file write of the events the
snapshot covers was done. The files a driver killed later leaves behind
can then be behind the log (or, by one unlogged row, ahead of it) only for
the trials the events after the snapshot changed, and for the trials not
finished then (a resume keeps their rows up to their checkpoint). A
resume repairs only those (`repair_plan`), with each one's logged results
rebuilt from its result.json as the mark found it (its length then, in
`FilesMark.sizes`) and the results logged after the snapshot: not from
every event of the log. Likewise only their directories, and those of the
trials that had exploit copies (`FilesMark.copies`), are looked through
for checkpoints a killed driver left (retention deletes at once).

A mark is trusted only where the files it vouches for can still be as the
driver left them: in the same boot of the same operating system (a
process killed keeps its writes in the OS's cache; a machine that crashed
may have lost writes never synced). An experiment moved or copied after
its driver died keeps its mark (a copy taken while a driver runs is no
experiment to resume: its files and its log were read at different
times). `files_place` names the boot. A mark of another boot, a snapshot
without one (the last one of a run, taken before its writes were
drained; an older tunecore's; an experiment kept in storage, whose files
are shipped later than its log), or an earlier resume logged after the
mark (whose repair rewrote files after it) leave the resume to the whole
log, as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from tunecore.core.experiment import ExperimentState
from tunecore.model import (
    ExperimentEvent,
    ExperimentResumed,
    JsonDict,
    TrialState,
)
from tunecore.shell.storage.layout import parse_result_rows
from tunecore.shell.storage.own_files import read_bytes
from tunecore.shell.trial_files import RESULT_FILE

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


class FilesMark(msgspec.Struct, frozen=True, kw_only=True):
    """In a snapshot: every trial file write of the events it covers was
    done when it was written (see the module docstring)."""

    place: str
    """`files_place` when the mark was made."""
    sizes: dict[str, int] = {}
    """The length of result.json then, in bytes, of each trial that was not
    finished and had reported."""
    copies: tuple[str, ...] = ()
    """The trials that had exploit copies (`shell.exploit_copies`) then."""


def files_place() -> str:
    """The boot of this operating system; empty where it has no id (then
    no mark is made or trusted)."""
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return ""


def make_mark(
    state: ExperimentState,
    path_of: Callable[[TrialState], Path],
    copies: Sequence[str],
) -> FilesMark | None:
    """The mark for a snapshot of `state`, once the file writes of its
    events are done (the caller drained them); `path_of` is a trial's
    directory, `copies` the trials with exploit copies. None where no
    mark can be trusted."""
    place = files_place()
    if not place:
        return None
    sizes = {}
    for trial in state.trials.values():
        if trial.is_finished or not trial.last_result:
            continue
        try:
            sizes[trial.trial_id] = os.stat(path_of(trial) / RESULT_FILE).st_size
        except FileNotFoundError:
            sizes[trial.trial_id] = 0
    return FilesMark(place=place, sizes=sizes, copies=tuple(copies))


@dataclass(frozen=True)
class RepairPlan:
    """The trials whose files a resume repairs, and the results the log
    holds of those that can be behind it (`resume.repair_result_files`);
    the trials whose directories may hold checkpoints a killed driver left
    (`resume.drop_unrecorded_checkpoints`): retention deletes at once, so
    only those changed since the mark, and those with exploit copies."""

    trials: frozenset[str]
    logged: dict[str, list[JsonDict]]
    checkpoints: frozenset[str]


def repair_plan(
    mark: FilesMark | None,
    marked: ExperimentState,
    *,
    after: Sequence[ExperimentEvent],
    stepped: ExperimentState,
    reported: Mapping[str, Sequence[JsonDict]],
    now: ExperimentState,
    path_of: Callable[[TrialState], Path],
) -> RepairPlan | None:
    """What a resume repairs, given the `mark` of the snapshot of state
    `marked`, the events logged `after` it (not the resume's own), the
    state they lead to (`stepped`) and each trial's results among them as
    its result files got them live (`reported`: the rebuild collected both
    as it stepped them, `replay.LoggedResults`), and the state `now` (the
    resume's event applied); None when the mark cannot be trusted (the
    module docstring), and the whole log decides."""
    if mark is None or mark.place != files_place():
        return None
    if any(isinstance(event, ExperimentResumed) for event in after):
        return None
    # The resume's event renews every trial, changing none's rows but for
    # its status (`rows_to_keep`): a trial repaired is one the events after
    # the mark changed, or one unfinished before or after the resume.
    trials = frozenset(
        trial_id
        for trial_id, trial in now.trials.items()
        if not trial.is_finished
        or (old := stepped.trials.get(trial_id)) is None
        or not old.is_finished
        or marked.trials.get(trial_id) is not old
    )
    logged: dict[str, list[JsonDict]] = {}
    for trial_id in trials:
        at_mark = marked.trials.get(trial_id)
        if at_mark is not None and at_mark.is_finished:
            # All its rows were in its files, and it reported nothing
            # since: its files are the log's (`rows_to_keep` does the rest).
            continue
        rows: list[JsonDict] = []
        if at_mark is not None and at_mark.last_result:
            size = mark.sizes.get(trial_id)
            written = None if size is None else _rows_in(path_of(now.trials[trial_id]), size)
            if written is None:
                return None  # not a mark this module made, or files changed by hand
            rows = written
        rows += reported.get(trial_id, ())
        if rows:
            logged[trial_id] = rows
    return RepairPlan(trials, logged, trials | frozenset(mark.copies))


def _rows_in(trial_dir: Path, size: int) -> list[JsonDict] | None:
    """The rows of the trial's result.json's first `size` bytes (whole lines: the mark
    was made with every write done); None if it no longer holds that many
    (it only grows between resumes: changed by hand)."""
    if size == 0:
        return []
    try:
        data = read_bytes(trial_dir / RESULT_FILE)
    except OSError:
        return None
    if len(data) < size:
        return None
    return list(parse_result_rows(data[:size].decode("utf-8", errors="replace")))
