"""tunecore's own files in an experiment directory are never reached
through a symbolic link nor read from a special file: a link planted in
their place is skipped (or refused) with a message naming it, and nothing
outside the experiment directory is written, read or deleted. `log_to_file`
may not name those files either."""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pydantic
import pytest

import tunecore
from tests.api.test_resume_trust import HERE, crafted, steps
from tests.fifo_watchdog import fifo_watchdog
from tunecore import ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.cli import main
from tunecore.model import TrialSpec, TrialStatus
from tunecore.shell.eventlog import LogError, read_log
from tunecore.shell.inbox import AddTrialRequest, Inbox
from tunecore.shell.journal import SnapshotStore
from tunecore.shell.storage.layout import ExperimentStorage, read_result_rows
from tunecore.shell.storage.own_files import NotRegularFileError, read_bytes


def failing(config: dict[str, object]) -> None:
    tunecore.report({"loss": 1.0})
    raise RuntimeError("the trial broke")


def run(tmp_path: Path, trainable: Callable[[dict[str, object]], None]) -> ResultGrid:
    return Tuner(
        trainable,
        tune_config=TuneConfig(trial_dirname_creator=lambda trial: "the_trial"),
        run_config=RunConfig(
            storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process"
        ),
    ).fit()


def test_an_error_txt_linked_outside_is_not_appended_to(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    trial_dir = tmp_path / "exp" / "the_trial"
    trial_dir.mkdir(parents=True)
    (trial_dir / "error.txt").symlink_to(victim)
    with caplog.at_level(logging.WARNING):
        (result,) = run(tmp_path, failing)
    assert result.status is TrialStatus.ERROR
    assert "the trial broke" in str(result.error)
    assert victim.read_text() == "precious\n"
    assert any(f"{trial_dir / 'error.txt'}: " in r.getMessage() for r in caplog.records)


def test_result_files_linked_outside_are_neither_appended_to_nor_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "victim.json"
    victim.write_text('{"loss": -999}\n')
    storage = ExperimentStorage(tmp_path, "exp")
    trial_dir = storage.experiment_dir / "the_trial"
    trial_dir.mkdir()
    for name in ("result.json", "progress.csv"):
        (trial_dir / name).symlink_to(victim)
    with caplog.at_level(logging.WARNING):
        storage.append_result(trial_dir, {"loss": 1.0})
        storage.append_result(trial_dir, {"loss": 2.0, "new": 1})
        storage.flush_progress(trial_dir)
        storage.close()
        assert read_result_rows(trial_dir) is None
    assert victim.read_text() == '{"loss": -999}\n'
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "a symbolic link, not a regular file" in warned
    assert str(trial_dir / "result.json") in warned
    assert str(trial_dir / "progress.csv") in warned


def test_a_resume_replaces_a_result_json_link_rather_than_read_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (first,) = Tuner(
        steps,
        run_config=RunConfig(
            storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process"
        ),
    ).fit()
    result_json = first.path / "result.json"
    outside = tmp_path / "outside.json"
    outside.write_bytes(result_json.read_bytes())
    result_json.unlink()
    result_json.symlink_to(outside)  # as well /dev/zero, which was read until memory ran out
    kept = outside.read_bytes()
    with caplog.at_level(logging.WARNING):
        Tuner.restore(str(tmp_path / "exp"), trainable=steps).fit()
    assert f"Ignoring {result_json}: " in caplog.text
    assert not result_json.is_symlink()
    assert outside.read_bytes() == kept


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_special_files_are_refused_unread(tmp_path: Path, target: str) -> None:
    if target == "fifo":
        target = str(tmp_path / "fifo")
        os.mkfifo(target)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(NotRegularFileError, match="a symbolic link, not a regular file"):
        read_bytes(link)
    with pytest.raises(NotRegularFileError, match="not a regular file"):
        read_bytes(Path(target))


def test_an_events_log_that_is_a_symlink_is_a_log_error(tmp_path: Path) -> None:
    run(tmp_path, steps)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = tmp_path / "exp" / "events.log"
    log.rename(elsewhere / "events.log")
    log.symlink_to(elsewhere / "events.log")
    with pytest.raises(LogError, match=re.escape(f"{log} is not an event log: a symbolic link")):
        read_log(tmp_path / "exp")


def test_a_snapshot_linked_to_a_special_file_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SnapshotStore(tmp_path)
    store.directory.mkdir(parents=True, exist_ok=True)
    store.path(5).symlink_to("/dev/zero")
    with caplog.at_level(logging.WARNING):
        assert store.load(5) is None
    assert "a symbolic link, not a regular file" in caplog.text


def test_an_inbox_linked_to_another_directory_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "victim"
    Inbox(tmp_path / "other").post(AddTrialRequest(config={"lr": 0.1}))
    victim = tmp_path / "other" / "inbox"
    kept = sorted(victim.iterdir())
    (tmp_path / "exp").mkdir()
    inbox = Inbox(tmp_path / "exp")
    inbox.directory.symlink_to(victim)
    with caplog.at_level(logging.WARNING):
        assert inbox.take(at=1.0) == []
        assert inbox.take(at=2.0) == []
    assert sorted(victim.iterdir()) == kept
    [warning] = [r.getMessage() for r in caplog.records]
    assert f"{inbox.directory} is not a directory" in warning


@pytest.mark.parametrize(
    "log_to_file",
    [
        "progress.csv",
        "result.json",
        "error.txt",
        "params.json",
        ("out.txt", "result.json"),
        "checkpoint_000001/out.txt",
    ],
)
def test_log_to_file_naming_a_file_tunecore_keeps_is_refused(
    log_to_file: str | tuple[str, str],
) -> None:
    name = log_to_file if isinstance(log_to_file, str) else log_to_file[1]
    with pytest.raises(
        pydantic.ValidationError,
        match=re.escape(f"log_to_file={name!r} names a file tunecore keeps"),
    ):
        RunConfig(log_to_file=log_to_file)


def test_a_crafted_header_naming_result_json_as_output_is_a_log_error(tmp_path: Path) -> None:
    directory = crafted(
        tmp_path / "exp", f"{HERE}:steps", {"x": 1}, output_files=("result.json", "err.txt")
    )
    with pytest.raises(LogError, match=re.escape("RunSettings.output_files='result.json' names")):
        Tuner.restore(str(directory), trainable=steps).fit()


def files_under(directory: Path) -> dict[Path, bytes]:
    return {p.relative_to(directory): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def test_a_resume_never_writes_into_a_trial_directory_linked_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trial directory replaced by a link to someone else's: the resume
    wrote result.json, progress.csv and the trial's TensorBoard file there
    (then failed), as a `file://` storage refuses it."""
    config = RunConfig(storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process")
    assert Tuner(failing, run_config=config).fit().errors
    [stored] = (tmp_path / "exp").glob("failing_*")
    theirs = tmp_path / "someone_else"
    stored.rename(theirs)
    stored.symlink_to(theirs, target_is_directory=True)
    before = files_under(theirs)

    with pytest.raises(NotRegularFileError, match=f"symbolic link.*{stored}"):
        Tuner.restore(str(tmp_path / "exp"), failing, restart_errored=True).fit()
    resume = ["resume", str(tmp_path / "exp"), "--trainable", f"{__name__}:failing"]
    assert main([*resume, "--restart-errored"]) == 2  # one line, no traceback

    assert files_under(theirs) == before
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tunecore resume: error: {stored}: a symbolic link")


def test_a_new_trial_never_writes_into_a_link_planted_at_its_directory(tmp_path: Path) -> None:
    """A `trial_dirname_creator` name can be guessed, and a link planted
    there before the run."""
    theirs = tmp_path / "someone_else"
    theirs.mkdir()
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "the_trial").symlink_to(theirs, target_is_directory=True)

    with pytest.raises(NotRegularFileError, match=r"symbolic link.*the_trial"):
        run(tmp_path, steps)

    assert files_under(theirs) == {}


def test_a_request_is_never_posted_into_an_inbox_linked_elsewhere(tmp_path: Path) -> None:
    """The driver reads no request from an inbox that is a link, so a
    request posted through it (`tunecore stop`, `tunecore add`) went into
    the directory linked to, and was never taken."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "exp").mkdir()
    inbox = Inbox(tmp_path / "exp")
    inbox.directory.symlink_to(victim, target_is_directory=True)

    with pytest.raises(NotRegularFileError, match=f"symbolic link.*{inbox.directory}"):
        inbox.post(AddTrialRequest(config={"lr": 0.1}))

    assert list(victim.iterdir()) == []


def test_a_fifo_in_place_of_a_result_file_does_not_hang_a_reader(tmp_path: Path) -> None:
    """Results whose trial directory is not where its default name says
    (a `trial_dirname_creator`) are looked for in every directory's
    result.json, which was opened as any file: a FIFO there blocked
    `ResultGrid.from_path` forever. (If it blocks again, the watchdog opens
    the FIFO's other end after 20 s, and the test fails instead of
    hanging.)"""
    run(tmp_path, steps)
    planted = tmp_path / "exp" / "planted"
    planted.mkdir()
    fifo = planted / "result.json"
    os.mkfifo(fifo)
    with fifo_watchdog(fifo) as unblocked:
        [result] = ResultGrid.from_path(str(tmp_path / "exp"))

    assert not unblocked.is_set()
    assert result.path == str(tmp_path / "exp" / "the_trial")


def test_a_trial_directory_swapped_for_a_link_mid_run_is_not_written_through(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The experiment directory is listed for links once per run, so a
    trial directory removed and replaced by a link to someone else's
    while the run went on had the driver write through it: error.txt,
    params.json, a progress.csv rewritten for a new key and the resume's
    repair all landed in the other directory. Each is now opened from the
    experiment directory one component at a time, never following a link."""
    storage = ExperimentStorage(tmp_path, "exp", background=True)  # as the Tuner's
    trial = TrialSpec(trial_id="t_00000", trainable_name="train", config={"lr": 0.1})
    trial_dir = storage.trial_dir(trial)
    storage.write_params(trial_dir, trial.config)
    storage.append_result(trial_dir, {"loss": 1.0})
    storage.drain()
    theirs = tmp_path / "someone_else"
    theirs.mkdir()
    (theirs / "precious.txt").write_text("keep me")
    shutil.rmtree(trial_dir)
    trial_dir.symlink_to(theirs, target_is_directory=True)

    with caplog.at_level(logging.WARNING):
        storage.append_result(trial_dir, {"loss": 2.0, "new": 1})
        storage.append_error(trial_dir, "the trial broke\n")
        storage.write_params(trial_dir, {"lr": 0.2})
        storage.flush_progress(trial_dir)
        storage.drain()
        with pytest.raises(NotRegularFileError, match=f"symbolic link.*{trial_dir}"):
            storage.rewrite_results(trial_dir, [{"loss": 1.0}])
        storage.close()

    assert files_under(theirs) == {Path("precious.txt"): b"keep me"}
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "a symbolic link in place of a directory" in warned
    assert str(trial_dir) in warned


def snapshot_tree(directory: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under `directory` (links not followed): its kind and,
    for a regular file, its bytes."""
    entries: dict[str, tuple[int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            entries[str(path.relative_to(directory))] = (mode, data)
    return entries


def test_results_read_through_a_linked_trial_directory_never_hang_nor_write(
    tmp_path: Path,
) -> None:
    """A trial directory that is a link is followed for reading, as Ray's
    readers follow it (someone may have moved a trial to another disk);
    every file in it is still opened as tunecore's own (a FIFO or a link
    there is refused unread) and nothing is written anywhere. A link
    loop in place of a trial directory is no directory."""
    run(tmp_path, steps)
    [first] = ResultGrid.from_path(str(tmp_path / "exp"))
    trial_dir = tmp_path / "exp" / "the_trial"
    moved = tmp_path / "other_disk" / "the_trial"
    moved.parent.mkdir()
    trial_dir.rename(moved)
    trial_dir.symlink_to(moved, target_is_directory=True)
    [followed] = ResultGrid.from_path(str(tmp_path / "exp"))
    read, written = followed.metrics_dataframe, first.metrics_dataframe
    assert read is not None
    assert written is not None
    assert list(read["loss"]) == list(written["loss"]) == [1.0, 0.5, 1.0 / 3]

    (moved / "result.json").unlink()
    fifo = moved / "result.json"
    os.mkfifo(fifo)
    (tmp_path / "exp" / "loop").symlink_to(tmp_path / "exp" / "loop")
    before = snapshot_tree(tmp_path)
    with fifo_watchdog(fifo) as unblocked:
        [result] = ResultGrid.from_path(str(tmp_path / "exp"))
        assert result.metrics_dataframe is None  # no regular result.json to read
    assert not unblocked.is_set()
    assert snapshot_tree(tmp_path) == before


def planting(names: list[str], outside: Path) -> Callable[[dict[str, object]], None]:
    """A trainable that plants links to `outside` in its own trial
    directory at `names` (its own path for "."), then reports three
    results with a checkpoint each."""

    def trainable(config: dict[str, object]) -> None:
        trial_dir = Path(tunecore.get_context().get_trial_dir())
        for name in names:
            if name == ".":
                plant_in_place_of(trial_dir, outside)
            else:
                (trial_dir / name).symlink_to(outside, target_is_directory=True)
        for step in range(1, 4):
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "state").write_text(str(step))
                tunecore.report(
                    {"loss": float(step)}, checkpoint=tunecore.Checkpoint.from_directory(directory)
                )

    return trainable


def plant_in_place_of(trial_dir: Path, outside: Path) -> None:
    """Moves the trial directory away and puts a link to `outside` at its
    path. The driver's writer may make the directory again between the
    move and the link (CI saw `FileExistsError` there once), so a
    directory found back at the path is moved away too, until the link
    is in place."""
    for attempt in range(100):
        trial_dir.rename(trial_dir.with_name(f"moved_away_{attempt}"))
        try:
            trial_dir.symlink_to(outside, target_is_directory=True)
        except FileExistsError:
            continue
        return
    raise AssertionError(f"{trial_dir} came back 100 times")


@pytest.mark.parametrize(
    ("planted", "finishes"),
    [
        (["checkpoint_000002"], True),
        (["checkpoint_000001", "checkpoint_000003"], True),
        (["."], False),
    ],
)
def test_a_link_a_trial_plants_where_its_checkpoint_goes_takes_no_run_down(
    tmp_path: Path, planted: list[str], finishes: bool
) -> None:
    """A trainable that put a link to a directory outside the experiment
    where its next checkpoint goes (`checkpoint_000002`), or in place of
    its whole trial directory, made the driver raise out of `fit()`
    ("trial_dir ... is not inside the experiment directory"): one trial
    took the run down. The link at a checkpoint's name is tunecore's to
    replace (by the checkpoint's directory; its target is untouched); a
    trial directory that is a link fails that trial only."""
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    grid = Tuner(
        planting(planted, outside),
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(
            storage_path=str(tmp_path / "results"),
            name="exp",
            verbose=0,
            executor="in_process",
            checkpoint_config=tunecore.CheckpointConfig(num_to_keep=1),
        ),
    ).fit()
    assert files_under(outside) == {Path("keep.txt"): b"keep"}
    [result] = grid
    if finishes:
        assert not grid.errors
        assert result.metrics["loss"] == 3.0
        assert result.checkpoint is not None
        with result.checkpoint.as_directory() as directory:
            assert Path(directory, "state").read_text() == "3"
    else:
        [error] = grid.errors
        assert "symbolic link" in str(error)
