"""Resuming an experiment from its event log (`Tuner.restore`), end to end
on the in-process executor. A `Crash` raised from a callback stands for the
driver dying mid-run (the chaos test SIGKILLs a real one on Ray)."""

from __future__ import annotations

import csv
import functools
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pytest

import tunecore
from tunecore import CheckpointConfig, FailureConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.api.tuner import RunParts, with_parts
from tunecore.cli import main
from tunecore.core.experiment.snapshot import ExperimentSnapshot
from tunecore.core.schedulers.base import CONTINUE, PAUSE, Verdict
from tunecore.core.search import BasicVariantGenerator
from tunecore.model import JsonDict, JsonValue, TrialState, TrialStatus
from tunecore.schedulers import ASHAScheduler, FIFOScheduler
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import LogError, read_log
from tunecore.shell.executors.inprocess import InProcessExecutor, this_machine
from tunecore.shell.replay import replay
from tunecore.shell.resume import rows_to_keep
from tunecore.shell.trainable import make_worker_trainable
from tunecore.shell.trial_view import Trial

ITERATIONS = 8


class Crash(BaseException):
    """Not an Exception: callbacks' errors are contained, this one is not."""


class CrashAfter(Callback):
    """Kills the driver once `results` results are logged and their
    commands carried out (at the end of that loop step)."""

    def __init__(self, results: int) -> None:
        self.left = results

    def on_trial_result(
        self,
        iteration: int,
        trials: object,
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        self.left -= 1

    def on_step_end(self, iteration: int, trials: object) -> None:
        if self.left <= 0:
            raise Crash


def checkpointed_step() -> int:
    """The step the trial's checkpoint holds: 0 without one."""
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is None:
        return 0
    with checkpoint.as_directory() as directory:
        return int(Path(directory, "step").read_text())


def report_step(metrics: dict[str, float], step: int) -> None:
    """Report `metrics` with a checkpoint of `step`."""
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "step").write_text(str(step))
        tunecore.report(metrics, checkpoint=tunecore.Checkpoint.from_directory(directory))


def counting(config: dict[str, float]) -> None:
    """Resumes from its checkpoint; the loss depends only on config and step."""
    for step in range(checkpointed_step() + 1, ITERATIONS + 1):
        report_step({"loss": config["x"] + 1.0 / step}, step)


def failing_until_marker(config: dict[str, str]) -> None:
    """Fails at step 3 while the marker file is missing."""
    start = checkpointed_step()
    for step in range(start + 1, 5):
        if step == 3 and not Path(config["marker"]).exists():
            raise RuntimeError("the marker is missing")
        report_step({"loss": float(step), "started_at": start}, step)


def experiment(tmp_path: Path, callbacks: list[Callback]) -> Tuner:
    return Tuner(
        counting,
        param_space={"x": tunecore.uniform(0.0, 1.0)},
        tune_config=TuneConfig(
            metric="loss",
            mode="min",
            num_samples=6,
            seed=7,
            max_concurrent_trials=1,  # one order of events, so runs compare exactly
            scheduler=ASHAScheduler(max_t=ITERATIONS, grace_period=2, reduction_factor=2),
        ),
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            callbacks=callbacks,
        ),
    )


def iterations(result_file: Path) -> list[int]:
    return [json.loads(line)["training_iteration"] for line in result_file.read_text().splitlines()]


def summary(results: ResultGrid) -> list[tuple[str, object, object, str]]:
    return sorted(
        (r.trial_id.split("_")[1], r.config["x"], r.metrics["training_iteration"], r.status.value)
        for r in results
    )


def test_a_crashed_experiment_resumes_as_if_it_never_stopped(tmp_path: Path) -> None:
    baseline = experiment(tmp_path / "baseline", []).fit()
    with pytest.raises(Crash):
        experiment(tmp_path / "crashed", [CrashAfter(results=11)]).fit()
    directory = tmp_path / "crashed" / "exp"
    before = replay(directory).state
    running = [t.trial_id for t in before.trials.values() if t.status is TrialStatus.RUNNING]
    assert running  # it died mid-trial

    resumed = Tuner.restore(directory, counting).fit()

    # Same trials (ids, configs from the searcher's saved state), same ASHA
    # decisions, same ends as the run that never stopped.
    assert summary(resumed) == summary(baseline)
    assert {r.trial_id for r in resumed} >= set(before.trials.keys())
    for result in resumed:
        rows = iterations(result.path / "result.json")
        assert rows == list(range(1, len(rows) + 1)), result.trial_id  # no gap, no repeat
        assert rows[-1] == result.metrics["training_iteration"]
        csv_rows = (result.path / "progress.csv").read_text().splitlines()
        assert len(csv_rows) == len(rows) + 1  # the header
    final = replay(directory)  # the whole log, crash and resume included, replays
    assert final.state.done
    assert final.snapshots_verified >= 1


def test_resume_works_from_the_log_alone(tmp_path: Path) -> None:
    with pytest.raises(Crash):
        experiment(tmp_path, [CrashAfter(results=5)]).fit()
    directory = tmp_path / "exp"
    shutil.rmtree(directory / "snapshots")
    results = Tuner.restore(directory, counting).fit()
    assert all(r.status is TrialStatus.TERMINATED for r in results)
    assert len(results) == 6


def test_a_save_in_flight_when_the_driver_died_does_not_hold_back_the_end(
    tmp_path: Path,
) -> None:
    """The trial stops at iteration 3 and its last checkpoint is being
    taken when the driver dies: the save died with it, and the resumed
    experiment must end (it used to wait for that save forever)."""
    tuner = Tuner(
        counting,
        param_space={"x": 0.5},
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            stop={"training_iteration": 3},
            checkpoint_config=CheckpointConfig(checkpoint_at_end=True),
            callbacks=[CrashAfter(results=3)],
        ),
    )
    with pytest.raises(Crash):
        tuner.fit()
    directory = tmp_path / "exp"
    crashed = replay(directory).state
    assert crashed.saves == 1  # the stop's save was in flight
    (result,) = Tuner.restore(directory, counting).fit()
    assert result.status is TrialStatus.TERMINATED
    assert iterations(result.path / "result.json") == [1, 2, 3]
    assert replay(directory).state.done


def test_a_progress_csv_a_row_short_is_repaired(tmp_path: Path) -> None:
    """A crash between a result's result.json line and its progress.csv row
    leaves the CSV short; the resume rewrites it from result.json."""
    first = experiment(tmp_path, []).fit()
    short = next(r for r in first if r.metrics["training_iteration"] == ITERATIONS)
    progress = short.path / "progress.csv"
    progress.write_text("".join(progress.read_text().splitlines(keepends=True)[:-1]))
    (again,) = [
        r for r in Tuner.restore(tmp_path / "exp", counting).fit() if r.trial_id == short.trial_id
    ]
    assert len(progress.read_text().splitlines()) == ITERATIONS + 1  # the header
    assert iterations(again.path / "result.json") == list(range(1, ITERATIONS + 1))


def test_result_files_behind_the_log_get_the_logged_rows_back(tmp_path: Path) -> None:
    """A driver killed while its background writer still held a trial's
    last lines and its params.json: the resume writes them from the log."""
    first = experiment(tmp_path, []).fit()
    full = next(r for r in first if r.metrics["training_iteration"] == ITERATIONS)
    result_file = full.path / "result.json"
    lines = result_file.read_text().splitlines(keepends=True)
    result_file.write_text("".join(lines[:2]))
    (full.path / "progress.csv").unlink()
    params = (full.path / "params.json").read_text()
    (full.path / "params.json").unlink()
    (again,) = [
        r for r in Tuner.restore(tmp_path / "exp", counting).fit() if r.trial_id == full.trial_id
    ]
    assert result_file.read_text().splitlines(keepends=True) == lines
    assert len((again.path / "progress.csv").read_text().splitlines()) == ITERATIONS + 1
    assert (again.path / "params.json").read_text() == params


@pytest.mark.parametrize("left", ["", '{\n  "x": '])
def test_a_params_json_cut_short_is_written_again(tmp_path: Path, left: str) -> None:
    """A new trial's params.json is created and written in one go, not
    beside its name and renamed: a driver killed in between leaves it
    empty or short, and the resume writes it whole again."""
    first = experiment(tmp_path, []).fit()
    trial = first[0]
    params = (trial.path / "params.json").read_text()
    (trial.path / "params.json").write_text(left)
    (again,) = [
        r for r in Tuner.restore(tmp_path / "exp", counting).fit() if r.trial_id == trial.trial_id
    ]
    assert (again.path / "params.json").read_text() == params


def test_a_progress_csv_missing_a_column_is_repaired(tmp_path: Path) -> None:
    """A driver that dies while the cells of a new key wait for progress.csv's
    next rewrite leaves the table without that column; the resume writes it."""
    first = experiment(tmp_path, []).fit()
    trial = first[0]
    progress = trial.path / "progress.csv"
    with progress.open(newline="") as file:
        rows = list(csv.reader(file))
    dropped = rows[0].index("training_iteration")
    with progress.open("w", newline="") as file:
        csv.writer(file).writerows(row[:dropped] + row[dropped + 1 :] for row in rows)
    Tuner.restore(tmp_path / "exp", counting).fit()
    with progress.open(newline="") as file:
        repaired = list(csv.DictReader(file))
    assert [row["training_iteration"] for row in repaired] == [
        str(i) for i in iterations(trial.path / "result.json")
    ]


def test_a_finished_experiment_resumed_runs_nothing_again(tmp_path: Path) -> None:
    first = experiment(tmp_path, []).fit()
    directory = tmp_path / "exp"
    files = {r.trial_id: (r.path / "result.json").read_text() for r in first}
    again = Tuner.restore(directory, counting).fit()
    assert summary(again) == summary(first)
    assert {r.trial_id: (r.path / "result.json").read_text() for r in again} == files


def test_resume_unfinished_false_ends_the_unfinished_trials(tmp_path: Path) -> None:
    with pytest.raises(Crash):
        experiment(tmp_path, [CrashAfter(results=5)]).fit()
    directory = tmp_path / "exp"
    waiting = {
        t.trial_id
        for t in replay(directory).state.trials.values()
        if t.status in (TrialStatus.RUNNING, TrialStatus.PENDING)
    }
    results = Tuner.restore(directory, counting, resume_unfinished=False).fit()
    ended = {r.trial_id: r for r in results}
    for trial_id in waiting:
        assert ended[trial_id].status is TrialStatus.TERMINATED


def errored_experiment(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "marker"
    Tuner(
        failing_until_marker,
        param_space={"marker": str(marker)},
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(
            name="err",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            failure_config=FailureConfig(max_failures=0),
            checkpoint_config=CheckpointConfig(num_to_keep=2),
        ),
    ).fit()
    marker.touch()
    return tmp_path / "err", marker


def test_resume_errored_retries_from_the_newest_checkpoint(tmp_path: Path) -> None:
    directory, _ = errored_experiment(tmp_path)
    (result,) = Tuner.restore(directory, failing_until_marker).fit()
    assert result.status is TrialStatus.ERROR  # errored trials stay so by default
    (result,) = Tuner.restore(directory, failing_until_marker, resume_errored=True).fit()
    assert result.status is TrialStatus.TERMINATED
    rows = [json.loads(line) for line in (result.path / "result.json").read_text().splitlines()]
    assert [r["training_iteration"] for r in rows] == [1, 2, 3, 4]
    assert [r["started_at"] for r in rows] == [0, 0, 2, 2]  # from the checkpoint at 2


def test_restart_errored_starts_over(tmp_path: Path) -> None:
    directory, _ = errored_experiment(tmp_path)
    (result,) = Tuner.restore(directory, failing_until_marker, restart_errored=True).fit()
    assert result.status is TrialStatus.TERMINATED
    rows = [json.loads(line) for line in (result.path / "result.json").read_text().splitlines()]
    assert [r["training_iteration"] for r in rows] == [1, 2, 3, 4]
    assert [r["started_at"] for r in rows] == [0, 0, 0, 0]


def test_a_second_fit_with_the_same_name_keeps_the_first_aside(tmp_path: Path) -> None:
    """Ray Tune runs a script again into the same directory; tunecore too,
    and the earlier experiment stays whole and restorable beside it."""
    first = experiment(tmp_path, []).fit()
    with pytest.warns(UserWarning, match="held an earlier experiment") as warned:
        second = experiment(tmp_path, []).fit()
    assert Path(second.experiment_path) == tmp_path / "exp"
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("exp_")]
    assert str(aside) in str(warned[0].message)
    assert len(replay(aside).state.trials) == len(first)
    assert len(replay(tmp_path / "exp").state.trials) == len(second)
    assert replay(aside).state.done


def test_restore_of_something_that_is_no_experiment_says_so(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="not a tunecore experiment directory"):
        Tuner.restore(tmp_path)


# -- which result rows a resume keeps ------------------------------------------------------


def rows(*iterations_: int) -> list[dict[str, JsonValue]]:
    return [{"training_iteration": i, "loss": 1.0 / i} for i in iterations_]


def trial_with(status: TrialStatus, checkpoint_at: int | None, last: int) -> TrialState:
    from tunecore.core import new_trial  # noqa: PLC0415
    from tunecore.model import (  # noqa: PLC0415
        CheckpointHistory,
        CheckpointRef,
        CheckpointStorage,
        TrialSpec,
    )

    trial = new_trial(TrialSpec(trial_id="t_00000", trainable_name="f", config={}))
    history = (
        CheckpointHistory()
        if checkpoint_at is None
        else CheckpointHistory(
            persistent=(
                CheckpointRef(
                    storage=CheckpointStorage.PERSISTENT,
                    path="/c",
                    training_iteration=checkpoint_at,
                ),
            )
        )
    )
    import msgspec  # noqa: PLC0415

    return msgspec.structs.replace(
        trial, status=status, checkpoints=history, recorded_result=rows(last)[0]
    )


def test_a_trial_that_runs_again_keeps_the_rows_up_to_its_checkpoint() -> None:
    trial = trial_with(TrialStatus.PENDING, checkpoint_at=3, last=5)
    assert rows_to_keep(trial, rows(1, 2, 3, 4, 5)) == rows(1, 2, 3)
    # after an earlier failure, iteration 3 came twice: the later one counts
    assert rows_to_keep(trial, rows(1, 2, 3, 2, 3, 4)) == rows(1, 2, 3, 2, 3)
    no_checkpoint = trial_with(TrialStatus.PENDING, checkpoint_at=None, last=2)
    assert rows_to_keep(no_checkpoint, rows(1, 2)) == []


def test_a_finished_trial_gets_back_a_last_row_the_crash_left_unwritten() -> None:
    trial = trial_with(TrialStatus.TERMINATED, checkpoint_at=3, last=5)
    assert rows_to_keep(trial, rows(1, 2, 3, 4)) == rows(1, 2, 3, 4, 5)
    assert rows_to_keep(trial, rows(1, 2, 3, 4, 5)) == rows(1, 2, 3, 4, 5)


def test_a_finished_trial_drops_a_row_written_but_never_logged() -> None:
    """Callbacks see a result before it is logged: a driver that died in
    between left one row more than the log holds (a resume with
    resume_unfinished=False then finishes the trial at its logged result)."""
    trial = trial_with(TrialStatus.TERMINATED, checkpoint_at=3, last=5)
    assert rows_to_keep(trial, rows(1, 2, 3, 4, 5, 6)) == rows(1, 2, 3, 4, 5)


def test_a_trial_stopped_before_it_reported_gets_no_row() -> None:
    trial = trial_with(TrialStatus.TERMINATED, checkpoint_at=None, last=1)
    never_reported = msgspec.structs.replace(trial, recorded_result={})
    assert rows_to_keep(never_reported, []) == []


def test_a_stopped_trials_last_row_is_not_written_twice() -> None:
    """A stop marks the last result `done` after its row was written."""
    trial = trial_with(TrialStatus.TERMINATED, checkpoint_at=3, last=5)
    stopped = msgspec.structs.replace(trial, recorded_result={**trial.last_result, "done": True})
    written = [{**row, "done": False} for row in rows(1, 2, 3, 4, 5)]
    assert rows_to_keep(stopped, written) == written


def test_a_finished_trials_rows_lack_the_tag_its_last_result_has() -> None:
    """The files hold results as Ray's callbacks hear them, without
    `experiment_tag`; a file written before (with the tag) holds the same
    result, and is kept as it is."""
    trial = trial_with(TrialStatus.TERMINATED, checkpoint_at=3, last=5)
    tagged = msgspec.structs.replace(
        trial, recorded_result={**trial.last_result, "experiment_tag": "0_x=1"}
    )
    assert rows_to_keep(tagged, rows(1, 2, 3, 4)) == rows(1, 2, 3, 4, 5)
    written_before = [*rows(1, 2, 3, 4), {**rows(5)[0], "experiment_tag": "0_x=1"}]
    assert rows_to_keep(tagged, written_before) == written_before


def test_the_log_names_the_experiment_and_the_code_by_reference(tmp_path: Path) -> None:
    experiment(tmp_path, []).fit()
    header = read_log(tmp_path / "exp").header
    assert header.trainable == "tests.api.test_restore:counting"
    assert header.settings.executor == "in_process"


class EveryOtherPause(FIFOScheduler, frozen=True, tag=True):
    """A user's own scheduler: pauses each trial once, at its second result."""

    paused: tuple[str, ...] = ()

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[EveryOtherPause, Verdict]:
        if trial.trial_id in self.paused or result.get("training_iteration") != 2:
            return self, CONTINUE
        return msgspec.structs.replace(self, paused=(*self.paused, trial.trial_id)), PAUSE


def test_a_users_own_scheduler_is_replayed_and_resumed_given_its_type(tmp_path: Path) -> None:
    tuner = Tuner(
        counting,
        param_space={"x": tunecore.grid_search([0.1, 0.2])},
        tune_config=TuneConfig(scheduler=EveryOtherPause()),
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            callbacks=[CrashAfter(results=5)],
        ),
    )
    with pytest.raises(Crash):
        tuner.fit()
    directory = tmp_path / "exp"
    with pytest.raises(LogError, match=r"kind=ExperimentSnapshot\[MyScheduler, MySearcher\]"):
        replay(directory)
    kind = ExperimentSnapshot[EveryOtherPause, BasicVariantGenerator]
    crashed = replay(directory, kind=kind).state
    assert isinstance(crashed.scheduler, EveryOtherPause)
    assert crashed.scheduler.paused  # its own state came back
    results = Tuner.restore(directory, counting, snapshot_kind=kind).fit()
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 2
    for result in results:
        assert iterations(result.path / "result.json") == list(range(1, ITERATIONS + 1))


def test_a_moved_experiment_resumes_from_its_new_place(tmp_path: Path) -> None:
    """The log records checkpoints by their path inside the experiment
    directory, so a copy elsewhere (another disk, another machine) resumes."""
    with pytest.raises(Crash):
        experiment(tmp_path / "here", [CrashAfter(results=11)]).fit()
    crashed = replay(tmp_path / "here" / "exp").state
    paths = [c.path for t in crashed.trials.values() for c in t.checkpoints.persistent]
    assert paths
    assert not any(Path(p).is_absolute() for p in paths)
    moved = tmp_path / "there" / "exp"
    moved.parent.mkdir()
    (tmp_path / "here" / "exp").rename(moved)
    results = Tuner.restore(moved, counting).fit()
    assert all(r.status is TrialStatus.TERMINATED for r in results)
    for result in results:
        assert result.path.is_relative_to(moved)
        assert result.checkpoint is not None
        assert Path(result.checkpoint.path).is_relative_to(moved)
        rows = iterations(result.path / "result.json")
        assert rows == list(range(1, len(rows) + 1))


def test_a_params_json_too_long_for_the_config_is_written_again_unread(tmp_path: Path) -> None:
    """A resume compares params.json with the config's own text; a longer
    file (here with trailing padding, which JSON would still parse) does
    not hold it and is replaced."""
    first = experiment(tmp_path, []).fit()
    trial = first[0]
    params = (trial.path / "params.json").read_text()
    (trial.path / "params.json").write_text(params + " " * 10_000)
    (again,) = [
        r for r in Tuner.restore(tmp_path / "exp", counting).fit() if r.trial_id == trial.trial_id
    ]
    assert (again.path / "params.json").read_text() == params


RESTORE_FINISHED = """
import sys
import ray
from tunecore import Tuner
from tests.api.test_restore import counting
results = Tuner.restore(sys.argv[1], counting).fit()
print(f"trials={len(results)} ray_initialized={ray.is_initialized()}")
"""


def finished_on_ray(tmp_path: Path) -> tuple[Path, ResultGrid]:
    """A finished experiment whose log says it ran on Ray (run in this
    process, so the test needs no cluster to make it)."""
    parts = RunParts(
        executor=InProcessExecutor(
            functools.partial(make_worker_trainable, counting), resources=this_machine()
        ),
        executor_kind="ray",
    )
    results = with_parts(
        parts,
        counting,
        param_space={"x": tunecore.grid_search([0.0, 1.0])},
        tune_config=TuneConfig(metric="loss", mode="min", chdir_to_trial_dir=False),
        run_config=RunConfig(name="exp", storage_path=str(tmp_path), verbose=1),
    ).fit()
    directory = tmp_path / "exp"
    assert read_log(directory).header.settings.executor == "ray"
    return directory, results


def test_restoring_a_finished_experiment_returns_its_results_without_starting_ray(
    tmp_path: Path,
) -> None:
    directory, results = finished_on_ray(tmp_path)
    log = (directory / "events.log").read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", RESTORE_FINISHED, str(directory)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines == [
        f"The experiment in {directory} had already finished: 2 trials (2 TERMINATED), "
        f"best trial counting_{results[0].trial_id} with loss=0.125. Nothing to resume; "
        "its results are returned as they are.",
        "trials=2 ray_initialized=False",
    ]
    assert (directory / "events.log").read_bytes() == log  # nothing was run, nothing logged


def test_resume_of_a_finished_experiment_prints_one_line_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = Tuner(
        counting,
        param_space={"x": tunecore.grid_search([0.0, 1.0])},
        run_config=RunConfig(name="exp", storage_path=str(tmp_path), executor="in_process"),
    ).fit()
    directory = tmp_path / "exp"
    log = (directory / "events.log").read_bytes()
    capsys.readouterr()
    code = main(["resume", str(directory), "--trainable", "tests.api.test_restore:counting"])
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [
        f"The experiment in {directory} had already finished: 2 trials (2 TERMINATED). "
        "Nothing to resume; its results are returned as they are.",
        f"Experiment directory: {directory}",
    ]
    assert (directory / "events.log").read_bytes() == log
    assert summary(Tuner.restore(directory, counting).fit()) == summary(first)


def test_a_finished_experiment_with_errors_to_retry_is_resumed(tmp_path: Path) -> None:
    directory, _ = errored_experiment(tmp_path)
    (result,) = Tuner.restore(directory, failing_until_marker, resume_errored=True).fit()
    assert result.status is TrialStatus.TERMINATED
