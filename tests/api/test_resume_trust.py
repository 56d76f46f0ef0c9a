"""A log read from disk never decides what code runs or where output goes
(issue 10, item 1): `Tuner.restore` and `tunecore resume` take the code from
the user and only check it against the log's record; `log_to_file` stays
inside the trial directory, whether the user or a log header names it."""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

import pydantic
import pytest

import tunecore
from tunecore import RunConfig, Tuner
from tunecore.api.restored import TrainableMismatchError, TrainableNotGivenError
from tunecore.cli import main
from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.core.experiment.snapshot import encode_state
from tunecore.core.search import BasicVariantGenerator
from tunecore.model import TrialStatus
from tunecore.shell.eventlog import LOG_FORMAT, EventLogWriter, LogError, LogHeader, RunSettings
from tunecore.shell.replay import replay

ATTACK = "subprocess:getoutput"
SHELL_COMMAND = {"touch MARKER": 1}  # subprocess.getoutput(config) runs "touch MARKER"
HERE = "tests.api.test_resume_trust"


def steps(config: dict[str, object]) -> None:
    for step in range(1, 4):
        tunecore.report({"loss": 1.0 / step})


def other(config: dict[str, object]) -> None:
    tunecore.report({"loss": 0.0})


def crafted(
    directory: Path,
    trainable: str,
    space: Mapping[str, object],
    output_files: tuple[str, str] | None = None,
) -> Path:
    """An experiment directory whose log holds only a header, as anyone who
    can write a file could make it: no trial has run yet."""
    directory.mkdir(parents=True)
    state = new_experiment(
        ExperimentConfig(trainable_name=trainable, trial_id_prefix="t"),
        searcher=BasicVariantGenerator(space, num_samples=1, seed=0),
    )
    header = LogHeader(
        format=LOG_FORMAT,
        tunecore_version="crafted",
        name=directory.name,
        trainable=trainable,
        settings=RunSettings(executor="in_process", verbose=0, output_files=output_files),
        initial_state=encode_state(state),
    )
    EventLogWriter.create(directory, header).close()
    return directory


@pytest.fixture
def attack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log naming `subprocess:getoutput`, run from the directory where the
    command would leave its MARKER."""
    monkeypatch.chdir(tmp_path)
    return crafted(tmp_path / "exp", ATTACK, SHELL_COMMAND)


def test_restore_without_a_trainable_imports_nothing_the_log_names(attack: Path) -> None:
    with pytest.raises(TrainableNotGivenError) as raised:
        Tuner.restore(attack).fit()
    message = str(raised.value)
    assert ATTACK in message
    assert "trainable=" in message
    assert "--trainable MODULE:FUNCTION" in message  # the log's path is never offered to run
    assert f"--trainable {ATTACK}" not in message
    assert not (attack.parent / "MARKER").exists()


def test_restore_with_another_trainable_says_which_two_differ(attack: Path) -> None:
    with pytest.raises(TrainableMismatchError) as raised:
        Tuner.restore(attack, trainable=steps).fit()
    assert ATTACK in str(raised.value)
    assert f"{HERE}:steps" in str(raised.value)
    assert not (attack.parent / "MARKER").exists()
    assert not replay(attack).state.trials  # nothing ran


def test_the_cli_resumes_nothing_the_log_names_and_leaves_sys_path_alone(
    attack: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(attack.parent))])
    before = list(sys.path)
    assert main(["resume", str(attack)]) == 2
    assert "--trainable" in capsys.readouterr().err
    assert not (attack.parent / "MARKER").exists()
    assert sys.path == before


def test_status_and_replay_read_the_crafted_log_without_running_it(attack: Path) -> None:
    assert main(["status", str(attack)]) == 0
    assert main(["replay", str(attack)]) == 0
    assert not (attack.parent / "MARKER").exists()


def test_the_trainable_the_log_records_resumes(tmp_path: Path) -> None:
    directory = crafted(tmp_path / "exp", f"{HERE}:steps", {"x": 1})
    (result,) = Tuner.restore(directory, trainable=steps).fit()
    assert result.status is TrialStatus.TERMINATED
    assert result.metrics["training_iteration"] == 3


def test_the_cli_resumes_with_the_trainable_the_user_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))  # --trainable puts the cwd first
    directory = crafted(tmp_path / "exp", f"{HERE}:steps", {"x": 1})
    assert main(["resume", str(directory), "--trainable", f"{HERE}:steps"]) == 0
    assert replay(directory).state.done


def test_the_cli_refuses_a_trainable_other_than_the_logs(
    attack: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["resume", str(attack), "--trainable", f"{HERE}:steps"]) == 2
    error = capsys.readouterr().err
    assert ATTACK in error
    assert f"{HERE}:steps" in error
    assert not (attack.parent / "MARKER").exists()


def test_a_name_this_process_registered_needs_no_trainable(tmp_path: Path) -> None:
    tunecore.register_trainable("registered_steps", steps)
    directory = crafted(tmp_path / "exp", "registered_steps", {"x": 1})
    (result,) = Tuner.restore(directory).fit()
    assert result.status is TrialStatus.TERMINATED


def test_a_mismatch_names_both_trainables(tmp_path: Path) -> None:
    directory = crafted(tmp_path / "exp", f"{HERE}:steps", {"x": 1})
    with pytest.raises(TrainableMismatchError, match=rf"'{HERE}:other'.*'{HERE}:steps'"):
        Tuner.restore(directory, trainable=other)
    with pytest.raises(TrainableMismatchError, match=rf"'{HERE}:other'.*'{HERE}:steps'"):
        Tuner.restore(directory, trainable=f"{HERE}:other")


def test_a_function_whose_module_was_renamed_resumes_with_a_warning(tmp_path: Path) -> None:
    """Ray compares only the function's name, so a renamed module resumes;
    here too, and a warning names both paths."""
    directory = crafted(tmp_path / "exp", "old_package.old_module:steps", {"x": 1})
    with pytest.warns(UserWarning, match=rf"'old_package.old_module:steps'.*'{HERE}:steps'"):
        tuner = Tuner.restore(directory, trainable=steps)
    (result,) = tuner.fit()
    assert result.status is TrialStatus.TERMINATED


# -- log_to_file ------------------------------------------------------------------


@pytest.mark.parametrize(
    "log_to_file",
    ["/tmp/escaped.txt", "../escaped.txt", "logs/../../escaped.txt", ("out.txt", "/etc/x")],
)
def test_log_to_file_outside_the_trial_dir_is_refused_when_configured(
    log_to_file: str | tuple[str, str],
) -> None:
    with pytest.raises(pydantic.ValidationError, match="log_to_file=") as raised:
        RunConfig(log_to_file=log_to_file)
    escaped = log_to_file if isinstance(log_to_file, str) else log_to_file[1]
    assert repr(escaped) in str(raised.value)


def test_tune_run_refuses_it_before_running_anything(tmp_path: Path) -> None:
    with pytest.raises(pydantic.ValidationError, match=re.escape("log_to_file='../out.txt'")):
        tunecore.run(steps, storage_path=str(tmp_path), log_to_file="../out.txt")
    assert not list(tmp_path.iterdir())


def test_log_to_file_inside_the_trial_dir_is_written(tmp_path: Path) -> None:
    def printing(config: dict[str, object]) -> None:
        print("hello from the trial")
        tunecore.report({"loss": 0.0})

    (result,) = Tuner(
        printing,
        run_config=RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            verbose=0,
            executor="in_process",
            log_to_file="out.txt",
        ),
    ).fit()
    assert "hello from the trial" in (result.path / "out.txt").read_text()


def test_a_crafted_header_aiming_output_outside_is_a_log_error(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    directory = crafted(
        tmp_path / "exp", f"{HERE}:steps", {"x": 1}, output_files=(str(outside), "../../e")
    )
    with pytest.raises(LogError, match=rf"RunSettings.output_files='{outside}'"):
        Tuner.restore(directory, trainable=steps).fit()
    assert not outside.exists()
    assert main(["resume", str(directory), "--trainable", f"{HERE}:steps"]) == 2
    assert not outside.exists()


def test_a_symlink_out_of_the_trial_dir_fails_the_trial_not_the_experiment(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    trial_dir = tmp_path / "exp" / "the_trial"
    trial_dir.mkdir(parents=True)
    (trial_dir / "logs").symlink_to(outside)
    (result,) = Tuner(
        steps,
        tune_config=tunecore.TuneConfig(trial_dirname_creator=lambda trial: "the_trial"),
        run_config=RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            verbose=0,
            executor="in_process",
            log_to_file="logs/out.txt",
        ),
    ).fit()
    assert result.status is TrialStatus.ERROR
    assert "log_to_file='logs/out.txt'" in str(result.error)
    assert not list(outside.iterdir())


@pytest.mark.parametrize("recorded", ["steps_2", "steps_13"])
def test_a_name_numbered_for_a_second_object_of_that_name_resumes(
    tmp_path: Path, recorded: str
) -> None:
    """A notebook that defines `steps` again (or wraps it in a second
    `with_parameters`) records `steps_2`: Ray compares the function's own
    name, so the same function given back resumes."""
    directory = crafted(tmp_path / "exp", recorded, {"x": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuner = Tuner.restore(directory, trainable=steps)
    (result,) = tuner.fit()
    assert result.status is TrialStatus.TERMINATED


@pytest.mark.parametrize("recorded", ["steps_1", "steps_x", "stepsy_2", "steps_2_", "other_2"])
def test_a_name_that_is_not_a_numbered_steps_is_a_mismatch(tmp_path: Path, recorded: str) -> None:
    directory = crafted(tmp_path / "exp", recorded, {"x": 1})
    with pytest.raises(TrainableMismatchError, match=re.escape(repr(recorded))):
        Tuner.restore(directory, trainable=steps)


def steps_with(config: dict[str, object], data: int = 0) -> None:
    tunecore.report({"loss": 1.0, "data": data})


def test_a_second_with_parameters_in_one_process_restores(tmp_path: Path) -> None:
    """Ray's data tutorial, in a notebook: the second wrapper is recorded
    as `with_parameters(steps_with)_2`, and restoring with it works."""
    Tuner(tunecore.with_parameters(steps_with, data=0))  # registers the bare name
    run = RunConfig(storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process")
    given = tunecore.with_parameters(steps_with, data=1)
    (first,) = Tuner(given, param_space={"x": 1}, run_config=run).fit()
    wrapped_again = tunecore.with_parameters(steps_with, data=1)  # as a new process would
    (again,) = Tuner.restore(str(tmp_path / "exp"), trainable=wrapped_again).fit()
    assert first.status is again.status is TrialStatus.TERMINATED
    assert again.metrics["data"] == 1
