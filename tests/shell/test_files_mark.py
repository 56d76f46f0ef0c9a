"""A resume repairs only the trial files its snapshot's files mark leaves
(`tunecore.shell.files_mark`), and puts them back exactly as repairing
every trial from the whole log does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.api.test_restore import Crash, CrashAfter, counting, experiment, iterations
from tunecore import Tuner
from tunecore.core.experiment import ExperimentState, step
from tunecore.core.experiment.snapshot import BUILTIN, decode_state
from tunecore.model import ExperimentResumed, Rejection, TrialState, TrialStatus
from tunecore.shell import files_mark
from tunecore.shell.eventlog import read_log
from tunecore.shell.files_mark import files_place, repair_plan
from tunecore.shell.journal import Journal, SnapshotStore
from tunecore.shell.replay import HistoryWalk, LoggedResults, rebuild, replay
from tunecore.shell.resume import repair_result_files
from tunecore.shell.storage.layout import ExperimentStorage
from tunecore.shell.trial_files import RESULT_FILE

pytestmark = pytest.mark.skipif(
    not files_place(), reason="no boot id here: no mark is made or trusted"
)


def snapshots_until(monkeypatch: pytest.MonkeyPatch, records: int) -> None:
    """A snapshot after every round until the log holds `records` events,
    none after."""

    def early(self: Journal, state: ExperimentState, files: object = None) -> None:
        if self.records <= records:
            self.snapshot(state, files)  # type: ignore[arg-type]

    monkeypatch.setattr(Journal, "maybe_snapshot", early)


def killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An experiment whose driver died mid-run, its files as far behind
    the log as a kill can leave them: as they were at the newest snapshot
    (its mark), every row written after it lost."""
    snapshots_until(monkeypatch, 25)
    with pytest.raises(Crash):
        experiment(tmp_path, [CrashAfter(results=20)]).fit()
    directory = tmp_path / "exp"
    store = SnapshotStore(directory)
    closing = store.load(store.available()[-1])  # the one a kill does not leave
    assert closing is not None
    assert closing.files is None  # taken before the writes were drained
    store.path(closing.records).unlink()
    snapshot = store.load(store.available()[-1])
    assert snapshot is not None
    assert snapshot.files is not None
    marked = decode_state(snapshot.state)
    storage = ExperimentStorage(directory.parent, directory.name)
    for trial in replay(directory).state.trials.values():
        at_mark = marked.trials.get(trial.trial_id)
        if at_mark is not None and at_mark.is_finished:
            continue
        trial_dir = directory / storage.trial_dirname(trial.spec)
        result = trial_dir / RESULT_FILE
        size = snapshot.files.sizes.get(trial.trial_id, 0)
        if result.exists():
            result.write_bytes(result.read_bytes()[:size])
        (trial_dir / "progress.csv").unlink(missing_ok=True)
    return directory


def repaired(directory: Path, *, marked: bool) -> tuple[dict[str, str], int | None]:
    """Every trial file after a resume's repair, with or without the mark;
    how many trials the mark left to repair."""
    contents = read_log(directory, lazy=True)
    tail = LoggedResults()  # the results after the snapshot, as a resume's rebuild takes them
    rebuilt = rebuild(contents, directory, BUILTIN, tail)
    outcome = step(rebuilt.state, ExperimentResumed(at=1e9))
    assert not isinstance(outcome, Rejection)
    now = outcome[0]
    storage = ExperimentStorage(directory.parent, directory.name)

    def path_of(trial: TrialState) -> Path:
        return directory / storage.trial_dirname(trial.spec)

    assert rebuilt.snapshot is not None
    assert rebuilt.snapshot_state is not None
    plan = repair_plan(
        rebuilt.snapshot.files if marked else None,
        rebuilt.snapshot_state,
        after=contents.events[rebuilt.snapshot.records :],
        stepped=rebuilt.state,
        reported=tail.by_trial,
        now=now,
        path_of=path_of,
    )
    if plan is None:
        history, logged = HistoryWalk(contents), LoggedResults()
        history.register(logged)
        history.run()
        repair_result_files(storage, now, None, logged.by_trial)
    else:
        repair_result_files(storage, now, None, plan.logged, only=plan.trials)
    storage.close()
    files = {
        str(path.relative_to(directory)): path.read_text()
        for path in sorted(directory.glob("*/*"))
        if path.is_file() and path.suffix in {".json", ".csv"}
    }
    return files, None if plan is None else len(plan.trials)


def test_a_resume_repairs_what_the_mark_leaves_as_the_whole_log_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = killed(tmp_path, monkeypatch)
    lagged = {path: path.read_text() for path in directory.glob(f"*/{RESULT_FILE}")}
    whole = tmp_path / "whole" / "exp"
    shutil.copytree(directory, whole)
    by_mark, repaired_trials = repaired(directory, marked=True)
    by_log, none = repaired(whole, marked=False)
    assert none is None
    assert by_mark == by_log
    assert repaired_trials is not None
    assert 0 < repaired_trials < len(replay(directory).state.trials)
    back = {path for path, text in lagged.items() if path.read_text() != text}
    assert back  # rows the kill lost are back, from the log


def test_a_restore_from_a_mark_goes_on_as_from_the_whole_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = killed(tmp_path, monkeypatch)
    whole = tmp_path / "whole" / "exp"
    shutil.copytree(directory, whole)
    shutil.rmtree(whole / "snapshots")  # no mark: every trial, from the whole log
    by_mark = Tuner.restore(directory, counting).fit()
    by_log = Tuner.restore(whole, counting).fit()
    assert all(r.status is TrialStatus.TERMINATED for r in by_mark)
    for mark_result, log_result in zip(
        sorted(by_mark, key=lambda r: r.trial_id),
        sorted(by_log, key=lambda r: r.trial_id),
        strict=True,
    ):
        assert iterations(mark_result.path / RESULT_FILE) == iterations(
            log_result.path / RESULT_FILE
        )


def test_a_mark_of_another_boot_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine that crashed may have lost file writes its OS never synced."""
    directory = killed(tmp_path, monkeypatch)
    monkeypatch.setattr(files_mark, "files_place", lambda: "another boot")
    _, repaired_trials = repaired(directory, marked=True)
    assert repaired_trials is None
