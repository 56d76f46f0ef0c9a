"""Putting a trial's files back in line with the event log when an
experiment resumes: its result files, and its checkpoint directories
(`drop_unrecorded_checkpoints`).

The loop logs every result; its result.json and progress.csv lines, and
a trial's params.json, are written on the storage's background thread
(`shell.storage.file_queue`) or shipped to a remote storage later than the log. So
after a crash a trial's files may lack rows the log holds, hold one row
more (a result written before the driver died logging it), or half a line.
A trial that will run again restarts from its newest persistent checkpoint
and reports the results after it once more. So, for each trial that
reported anything:

- one that will run again keeps the rows up to and including the last one
  at its checkpoint's `training_iteration` (none without a checkpoint): the
  rest it reports again;
- a finished one (also one a resume with `resume_unfinished=False` ends)
  keeps the rows up to its last logged result: a row written after it was
  never logged.

Wherever the log's results (`replay.LoggedResults`) keep more rows than
the file, the rows come from the log; a missing params.json is written
from the trial's config.

Either way no result is lost and none is written twice. progress.csv is
rewritten from the same rows whenever its count disagrees (a crash can
come between the two files' appends) or its header lacks a key of theirs
(cells of new keys wait in memory for the next whole rewrite: see
storage), and each file is replaced
atomically, so a crash during the repair leaves something the next resume
repairs again.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from tunecore.core.checkpoints import current_checkpoint, dirname_generation
from tunecore.core.experiment import ExperimentState, trials_in_order
from tunecore.core.results import DONE, EXPERIMENT_TAG, TRAINING_ITERATION, as_heard
from tunecore.model import CheckpointRef, JsonDict, JsonValue, TrialState
from tunecore.shell.exploit_copies import EXPLOIT_PREFIX
from tunecore.shell.storage.layout import ExperimentStorage, to_json_value
from tunecore.shell.storage.store import Store, checkpoint_root

Row = dict[str, JsonValue]

logger = logging.getLogger(__name__)
# `checkpoint_NNNNNN`, or `checkpoint_NNNNNN_n`: the same iteration saved
# again after a restore to an earlier one (`ExperimentStorage.checkpoint_path`);
# either with `_g<generation>` on an object store (`core.checkpoints.generation_dirname`).
_CHECKPOINT_DIR = re.compile(r"^checkpoint_([0-9]{6,})(?:_([1-9][0-9]*))?$")


def repair_result_files(
    storage: ExperimentStorage,
    state: ExperimentState,
    dirname_of: Callable[[TrialState], str] | None = None,
    logged: Mapping[str, Sequence[JsonDict]] | None = None,
    only: Collection[str] | None = None,
) -> int:
    """Repair the files of every trial that has a directory (see the module
    docstring), or of the trials `only` names (`files_mark.repair_plan`:
    the others' files are the log's); returns how many trials' files
    changed. `dirname_of` is the user's `trial_dirname_creator`, if the
    experiment had one. `logged` (`replay.LoggedResults`) are the
    results the log holds, for files that may lag it (an experiment
    fetched from storage): where they keep more rows than the file, the
    rows come from them."""
    changed = 0
    storage.know_recorded(state.trials.values())
    for trial in trials_in_order(state):
        if only is not None and trial.trial_id not in only:
            continue
        name = storage.trial_dirname_of(trial, dirname_of)
        directory = storage.own_trial_dir(name)
        from_log = [] if logged is None else logged_rows(trial, logged.get(trial.trial_id, []))
        if from_log and not directory.is_dir():
            directory.mkdir(parents=True)
        if not directory.is_dir():
            continue
        if not storage.params_hold(directory, trial.spec.config):
            storage.write_params(directory, trial.spec.config)
        rows = storage.read_results(directory)
        kept = rows_to_keep(trial, rows)
        if len(from_log) > len(kept):
            kept = from_log
        if kept != rows or not storage.progress_in_line(directory, kept):
            storage.rewrite_results(directory, kept)
            changed += 1
    return changed


def drop_unrecorded_checkpoints(
    storage: ExperimentStorage,
    state: ExperimentState,
    dirname_of: Callable[[TrialState], str] | None = None,
    store: Store | None = None,
    *,
    only: Collection[str] | None = None,
    generation: int = 0,
) -> list[str]:
    """Delete the checkpoint directories retention dropped but a killed
    driver did not live to delete, and the copies PBT's exploits restored
    from (`exploit_NNNNNN`, see `shell.exploit_copies`: no state names
    them and nothing is being restored at a resume), in the experiment
    directory or, for an experiment kept in storage, in `store`; what was
    deleted.

    Retention's deletions are commands, which no resume issues again. What
    it drops is older than the newest checkpoint it keeps, so a trial's
    `checkpoint_NNNNNN` (or `checkpoint_NNNNNN_n`) directory is deleted
    only when its state names a later one in the same directory, by
    iteration then repeat count (`_save_order`), and not this one. A
    directory later than every named one stays: a save copied but never
    logged (the trial saves that iteration again, over it), or one the
    records cut by `replay --truncate` named (kept for whoever reads the
    quarantine file). A trial PBT sent back to an earlier iteration may
    leave an unrecorded save of an iteration below its newest named one:
    nothing names it, so it goes too. Only real directories are touched,
    by name, never through a symlink. Call it before the resumed loop
    runs: then no save is in flight.

    `generation` is the resuming driver's lease generation when its
    workers store checkpoints under their generation's names (an object
    store: `mirror.upload_fence.names_by_generation`), else 0. Then every
    directory no state names of an earlier generation goes too, later
    ones included: its trial saves under its own generation's names from
    now on (never over it), and no log will name it (only this driver's
    log grows; an earlier one's writes are fenced). Those are the killed
    driver's saves it never logged, and what its stale workers stored.
    `only` names the trials to look at
    (`files_mark.RepairPlan.checkpoints`), if not all."""
    dropped = []
    storage.know_recorded(state.trials.values())
    for trial in state.trials.values():
        if only is not None and trial.trial_id not in only:
            continue
        name = storage.trial_dirname_of(trial, dirname_of)
        named = [_directory_name(storage, ref) for ref in trial.checkpoints.persistent]
        newest = max(filter(None, map(_save_order, named)), default=None)
        for entry in _checkpoint_dirs(storage.experiment_dir / name, name, store):
            order = None if entry in named else _save_order(entry)
            dropped_by_retention = order is not None and newest is not None and order < newest
            earlier_generation = order is not None and generation > 1 and order[2] < generation
            if (
                not dropped_by_retention
                and not earlier_generation
                and not entry.startswith(EXPLOIT_PREFIX)
            ):
                continue
            if store is None:
                shutil.rmtree(storage.experiment_dir / name / entry)
            else:
                store.delete_dir(f"{name}/{entry}")
            dropped.append(f"{name}/{entry}")
    if dropped:
        logger.info(
            "Deleted %d checkpoint directories retention had dropped, or exploits had "
            "restored from (the driver was killed before it deleted them): %s",
            len(dropped),
            ", ".join(dropped),
        )
    return dropped


def _directory_name(storage: ExperimentStorage, checkpoint: CheckpointRef) -> str:
    """The name of the directory a recorded checkpoint is in
    (`checkpoint_000003` for `<trial>/checkpoint_000003/model.pt`): a
    trainable may name a file inside it."""
    try:
        return checkpoint_root(storage.portable(checkpoint).path)[0].split("/")[1]
    except ValueError:  # outside the experiment (a log is data): as it reads
        return Path(checkpoint.path).name


def _save_order(name: str) -> tuple[int, int, int] | None:
    """Where a checkpoint directory's name puts it among a trial's saves:
    its iteration, then how many times that iteration was saved before it
    (`checkpoint_000006_1` comes after `checkpoint_000006`), then the lease
    generation whose worker stored it (`checkpoint_000006_g2` comes after
    `checkpoint_000006`, which a stale worker of generation 1 may have
    stored after the take-over: no log names it); None for a name
    tunecore does not give."""
    base, generation = dirname_generation(name)
    match = _CHECKPOINT_DIR.match(base)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0), generation


def _checkpoint_dirs(directory: Path, name: str, store: Store | None) -> list[str]:
    """The names in a trial's directory that may be checkpoints: real
    directories only, locally (never a symlink, nor through one)."""
    if store is not None:
        return store.list(name)
    if directory.is_symlink() or not directory.is_dir():
        return []
    with os.scandir(directory) as entries:  # each entry's type without a stat of it
        return sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))


def logged_rows(trial: TrialState, results: Sequence[JsonDict]) -> list[Row]:
    """The rows of `trial` that stay, from the results the log holds."""
    return rows_to_keep(trial, [_as_row(dict(result)) for result in results])


def rows_to_keep(trial: TrialState, rows: list[Row]) -> list[Row]:
    """The rows of `trial`'s result.json that stay; see the module docstring."""
    if not trial.is_finished:
        checkpoint = current_checkpoint(trial)
        upto = 0 if checkpoint is None else checkpoint.training_iteration
        last = max(
            (i for i, row in enumerate(rows) if row.get(TRAINING_ITERATION) == upto),
            default=-1,
        )
        return rows[: last + 1]
    final = trial.last_result
    if not final:
        return rows
    row = _as_row(as_heard(final))
    if rows and _same_result(rows[-1], row):
        return rows
    if len(rows) >= 2 and _same_result(rows[-2], row):
        return rows[:-1]  # written, then the driver died before logging it
    return [*rows, row]


def _same_result(written: Row, final: Row) -> bool:
    """Whether `written` is the row of `final`. A stop marks the last result
    `done` after its row was written, so `done` may differ; and files
    written before tunecore kept `experiment_tag` out of them (as Ray
    does, `as_heard`) hold it."""
    return _compared(written) == _compared(final)


def _compared(row: Row) -> Row:
    return {key: value for key, value in row.items() if key not in _NOT_COMPARED}


_NOT_COMPARED = frozenset({DONE, EXPERIMENT_TAG})


def _as_row(result: Row) -> Row:
    """A result as result.json stores it (JSON's own value types)."""
    value = to_json_value(result)
    assert isinstance(value, dict)
    return value
