"""Putting a trial's result files back in line with the event log when an
experiment resumes.

The loop writes a result to result.json and progress.csv just before it
logs the event (callbacks see a result first, so that one can ask for a
checkpoint), so after a crash a trial's files hold every logged result,
perhaps one more, and maybe half a line. A trial that will run again restarts from its newest
persistent checkpoint and reports the results after it once more. So, for
each trial that reported anything:

- one that will run again keeps the rows up to and including the last one
  at its checkpoint's `training_iteration` (none without a checkpoint): the
  rest it reports again;
- a finished one (also one a resume with `resume_unfinished=False` ends)
  keeps the rows up to its last logged result: a row written after it was
  never logged, and the last result, if missing, is written back (a trial
  stopped before it reported anything has no result to get back).

Either way no result is lost and none is written twice. progress.csv is
rewritten from the same rows whenever its count disagrees (a crash can
come between the two files' appends) or its header lacks a key of theirs
(cells of new keys wait in memory for the next whole rewrite: see
storage), and each file is replaced
atomically, so a crash during the repair leaves something the next resume
repairs again.
"""

from __future__ import annotations

from collections.abc import Callable

from tunecore.core.checkpoints import current_checkpoint
from tunecore.core.experiment import ExperimentState
from tunecore.core.results import DONE
from tunecore.model import JsonValue, TrialState
from tunecore.shell.storage import ExperimentStorage, to_json_value

Row = dict[str, JsonValue]


def repair_result_files(
    storage: ExperimentStorage,
    state: ExperimentState,
    dirname_of: Callable[[TrialState], str] | None = None,
) -> int:
    """Repair the files of every trial that has a directory (see the module
    docstring); returns how many trials' files changed. `dirname_of` is the
    user's `trial_dirname_creator`, if the experiment had one."""
    changed = 0
    for trial in sorted(state.trials.values(), key=lambda t: state.index[t.trial_id]):
        name = storage.trial_dirname(trial.spec, None if dirname_of is None else dirname_of(trial))
        directory = storage.experiment_dir / name
        if not directory.is_dir():
            continue
        rows = storage.read_results(directory)
        kept = rows_to_keep(trial, rows)
        if kept != rows or not storage.progress_in_line(directory, kept):
            storage.rewrite_results(directory, kept)
            changed += 1
    return changed


def rows_to_keep(trial: TrialState, rows: list[Row]) -> list[Row]:
    """The rows of `trial`'s result.json that stay; see the module docstring."""
    if not trial.is_finished:
        checkpoint = current_checkpoint(trial)
        upto = 0 if checkpoint is None else checkpoint.training_iteration
        last = max(
            (i for i, row in enumerate(rows) if row.get("training_iteration") == upto),
            default=-1,
        )
        return rows[: last + 1]
    final = trial.last_result
    if not final:
        return rows
    row = _as_row(final)
    if rows and _same_result(rows[-1], row):
        return rows
    if len(rows) >= 2 and _same_result(rows[-2], row):
        return rows[:-1]  # written, then the driver died before logging it
    return [*rows, row]


def _same_result(written: Row, final: Row) -> bool:
    """Whether `written` is the row of `final`. A stop marks the last result
    `done` after its row was written, so `done` may differ."""
    return _without_done(written) == _without_done(final)


def _without_done(row: Row) -> Row:
    return {key: value for key, value in row.items() if key != DONE}


def _as_row(result: Row) -> Row:
    """A result as result.json stores it (JSON's own value types)."""
    value = to_json_value(result)
    assert isinstance(value, dict)
    return value
