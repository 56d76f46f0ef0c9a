"""One driver per experiment: `Tuner.fit()`, for a new experiment and for
`Tuner.restore`, holds the experiment directory's driver lock for its whole
run; a second driver is refused with a message naming the first, and a lock
left by a killed driver is taken over."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import tunecore
from tests.shell.test_lock import held_by_another_process, kill
from tunecore import FailureConfig, RunConfig, Tuner
from tunecore.cli import main
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import read_log
from tunecore.shell.lock import ExperimentLockedError, driver_lock
from tunecore.shell.replay import replay


def three_steps(config: dict[str, float]) -> None:
    for step in range(1, 4):
        tunecore.report({"loss": config["x"] + step})


def broken(config: dict[str, float]) -> None:
    raise RuntimeError("this trainable always fails")


class Crash(BaseException):
    """Not an Exception: callbacks' errors are contained, this one is not."""


class CrashAtFirstStep(Callback):
    """The driver dying mid-run, leaving an unfinished experiment."""

    def on_step_end(self, iteration: int, trials: object) -> None:
        raise Crash


class SecondDriver(Callback):
    """While the first driver runs, a second tries to continue the same
    experiment; what it raised is kept."""

    def __init__(self, experiment_dir: Path) -> None:
        self.experiment_dir = experiment_dir
        self.refused: ExperimentLockedError | None = None

    def on_step_end(self, iteration: int, trials: object) -> None:
        if self.refused is None:
            with pytest.raises(ExperimentLockedError) as refused:
                Tuner.restore(self.experiment_dir, three_steps).fit()
            self.refused = refused.value


def tuner(
    tmp_path: Path,
    trainable: Callable[[dict[str, float]], None] = three_steps,
    callbacks: list[object] | None = None,
    failure_config: FailureConfig | None = None,
) -> Tuner:
    return Tuner(
        trainable,
        param_space={"x": tunecore.grid_search([1.0, 2.0])},
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            callbacks=callbacks or [],
            failure_config=failure_config or FailureConfig(),
        ),
    )


def crashed_experiment(tmp_path: Path) -> Path:
    with pytest.raises(Crash):
        tuner(tmp_path, callbacks=[CrashAtFirstStep()]).fit()
    return tmp_path / "exp"


def test_a_restore_while_the_first_driver_runs_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    experiment = crashed_experiment(tmp_path)
    second = SecondDriver(experiment)
    results = Tuner.restore(experiment, three_steps, callbacks=[second]).fit()
    assert second.refused is not None
    assert f"pid {os.getpid()} on host " in str(second.refused)
    assert not results.errors
    assert [r.metrics["training_iteration"] for r in results] == [3, 3]
    replay(experiment, verify=True)  # one driver's records only: replays as logged


def test_a_new_fit_into_a_directory_a_driver_holds_is_refused(tmp_path: Path) -> None:
    (tmp_path / "exp").mkdir()
    with driver_lock(tmp_path / "exp"), pytest.raises(ExperimentLockedError, match="in use"):
        tuner(tmp_path).fit()
    assert not (tmp_path / "exp" / "events.log").exists()


def test_an_experiment_a_driver_holds_is_not_set_aside_by_a_new_fit_of_its_name(
    tmp_path: Path,
) -> None:
    experiment = crashed_experiment(tmp_path)
    logged = read_log(experiment).events
    with driver_lock(experiment), pytest.raises(ExperimentLockedError, match="in use"):
        tuner(tmp_path).fit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp"]
    assert read_log(experiment).events == logged


def test_a_restore_of_an_experiment_a_driver_holds_is_refused(tmp_path: Path) -> None:
    experiment = crashed_experiment(tmp_path)
    before = (experiment / "events.log").read_bytes()
    with (
        held_by_another_process(experiment) as holder,
        pytest.raises(ExperimentLockedError, match=f"pid {holder.pid} on host "),
    ):
        Tuner.restore(experiment, three_steps).fit()
    assert (experiment / "events.log").read_bytes() == before


def test_a_restore_takes_over_the_lock_of_a_killed_driver(tmp_path: Path) -> None:
    experiment = crashed_experiment(tmp_path)
    with held_by_another_process(experiment) as holder:
        kill(holder)
        results = Tuner.restore(experiment, three_steps).fit()
    assert [r.metrics["training_iteration"] for r in results] == [3, 3]


def test_the_lock_is_released_when_fit_returns_or_raises(tmp_path: Path) -> None:
    tuner(tmp_path).fit()
    with driver_lock(tmp_path / "exp"):
        pass
    experiment = crashed_experiment(tmp_path / "crashed")  # a BaseException out of fit
    with driver_lock(experiment):
        pass
    failing = tuner(tmp_path / "raised", broken, failure_config=FailureConfig(fail_fast="raise"))
    with pytest.raises(tunecore.TuneError):
        failing.fit()
    with driver_lock(tmp_path / "raised" / "exp"):
        pass


def test_the_cli_refuses_a_second_resume_with_the_bad_input_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    experiment = crashed_experiment(tmp_path)
    with driver_lock(experiment):
        code = main(
            ["resume", str(experiment), "--trainable", "tests.api.test_driver_lock:three_steps"]
        )
    assert code == 2
    assert f"in use by another driver (pid {os.getpid()} on host " in capsys.readouterr().err


def test_the_cli_refuses_a_resume_through_a_symlinked_lock_file_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    experiment = crashed_experiment(tmp_path / "crashed")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (experiment / "driver.lock").unlink()
    (experiment / "driver.lock").symlink_to(victim)
    code = main(
        ["resume", str(experiment), "--trainable", "tests.api.test_driver_lock:three_steps"]
    )
    assert code == 2
    assert f"{experiment / 'driver.lock'} is a symlink (to {victim})" in capsys.readouterr().err
    assert victim.read_text() == "precious"
