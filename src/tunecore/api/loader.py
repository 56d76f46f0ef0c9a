"""An experiment read from its directory: the state its event log rebuilds
and each trial's directory, without Ray and without the user's code.

The log is only read (never cut or appended to), so this works on a
finished experiment and on one still running: a record the writer is in
the middle of is left out, quietly. Trial directories are found the way
the run named them (`ExperimentStorage.trial_dirname`, the name the log
records if it does); a directory a user's `trial_dirname_creator` named,
in a log from before the name was recorded, is found by the trial id its
result.json lines carry. An experiment in storage (a URI) is read from a
local copy of its state (`shell.mirror.remote`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import BUILTIN, SnapshotKind
from tunecore.model import TrialState
from tunecore.model.storable import MAX_RECORD_BYTES
from tunecore.shell.collector import collector_paused
from tunecore.shell.eventlog import read_log
from tunecore.shell.mirror.remote import StoredExperiment, is_stored, open_stored
from tunecore.shell.replay import rebuild
from tunecore.shell.storage.layout import ExperimentStorage, experiment_dirname
from tunecore.shell.storage.own_files import open_fd
from tunecore.shell.trial_files import RESULT_FILE


@dataclass(frozen=True)
class LoadedExperiment:
    """The rebuilt state, and where each trial's files are (in `path`, a
    local copy when the experiment is `stored`). `dirs` are strings, not
    `Path`s: a result gives its directory as a string, and making a `Path`
    of each of 100,000 trials' to turn it back was a fifth of reading
    them back."""

    path: Path
    state: ExperimentState
    dirs: dict[str, str]
    stored: StoredExperiment | None = None


def load_experiment(
    path: str | os.PathLike[str],
    kind: SnapshotKind = BUILTIN,
    storage_filesystem: object = None,
) -> LoadedExperiment:
    """Read the experiment in `path` (`~` expanded), or at a URI (or a path
    in `storage_filesystem`). `kind` decodes a scheduler or searcher type
    of the user's own, as for `replay`."""
    with collector_paused():
        stored = (
            open_stored(path, storage_filesystem) if is_stored(path, storage_filesystem) else None
        )
        directory = stored.local if stored is not None else Path(path).expanduser().resolve()
        contents = read_log(directory, quiet=True, lazy=True)
        state = rebuild(contents, directory, kind).state
        dirs = _trial_dirs(directory, state.trials.values())
        return LoadedExperiment(directory, state, dirs, stored)


def _trial_dirs(directory: Path, trials: Iterable[TrialState]) -> dict[str, str]:
    names: dict[str, str]
    if experiment_dirname(directory.name) == directory.name:
        # (Else ExperimentStorage would make a directory of the safe name.)
        storage = ExperimentStorage(directory.parent, directory.name)
        names = {t.spec.trial_id: storage.trial_dirname(t.spec, t.dirname) for t in trials}
    else:
        names = {t.spec.trial_id: t.spec.trial_id for t in trials}
    present = _subdirectories(directory)
    missing = {trial_id for trial_id, name in names.items() if name not in present}
    prefix = os.path.join(directory, "")
    dirs = {trial_id: prefix + name for trial_id, name in names.items()}
    if missing:
        dirs.update(_named_by_results(directory, missing))
    return dirs


def _subdirectories(directory: Path) -> set[str]:
    """The names of `directory`'s subdirectories (symlinks followed, as
    Ray's readers follow them: a trial moved to another disk and linked
    back is read), from one listing rather than a `stat` per trial: a
    trial's directory name is one path component (`safe_name`). A link
    that leads nowhere, or in a loop, is no directory (a loop raised)."""
    with os.scandir(directory) as entries:
        return {entry.name for entry in entries if _is_dir(entry)}


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # ELOOP: a link in a loop
        return False


def _named_by_results(directory: Path, trial_ids: set[str]) -> dict[str, str]:
    """The directories whose result.json is of one of `trial_ids` (by its
    first line's `trial_id`). Each is opened as tunecore's own file
    (`own_files`: a FIFO there blocked the read forever, a link to
    `/dev/zero` filled the memory), and only its first line is read."""
    found: dict[str, str] = {}
    for child in directory.iterdir():
        try:
            with os.fdopen(open_fd(child / RESULT_FILE), encoding="utf-8") as file:
                first = json.loads(file.readline(MAX_RECORD_BYTES))
        except (OSError, ValueError):
            continue
        trial_id = first.get("trial_id") if isinstance(first, dict) else None
        if trial_id in trial_ids:
            found[trial_id] = str(child)
    return found
