"""`tunecore.run` takes Ray Tune's `tune.run` arguments."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic
import pytest

import tunecore
from tunecore import TuneError
from tunecore.model import JsonValue

pytestmark = pytest.mark.usefixtures("ray_cluster")  # tune.run runs on Ray


def fails_for_odd_x(config: dict[str, object]) -> None:
    tunecore.report({"score": 1.0})
    if int(str(config["x"])) % 2:
        raise ValueError("odd")


def test_a_failed_trial_raises_unless_told_not_to(tmp_path: Path) -> None:
    space = {"x": tunecore.grid_search([1, 2])}
    with pytest.raises(TuneError, match="Trials did not complete: fails_for_odd_x_"):
        tunecore.run(fails_for_odd_x, config=space, storage_path=str(tmp_path), name="a", verbose=0)
    analysis = tunecore.run(
        fails_for_odd_x,
        config=space,
        local_dir=str(tmp_path),  # Ray's old name of storage_path
        name="b",
        verbose=0,
        raise_on_failed_trial=False,
    )
    assert sorted(str(t.status) for t in analysis.trials) == ["ERROR", "TERMINATED"]
    assert (tmp_path / "b").is_dir()


class Crash(BaseException):
    """Not an Exception: callbacks' errors are contained, this one is not."""


class CrashAtStep(tunecore.Callback):
    """Kills the driver at the first result of `step`."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_trial_result(
        self, iteration: int, trials: object, trial: object, result: Mapping[str, JsonValue]
    ) -> None:
        if result.get("step") == self.step:
            raise Crash


def four_steps(config: dict[str, object]) -> None:
    """Steps 1-4, each checkpointed; fails at step 3 the first time if
    `config["fail_once"]` names a file that does not exist yet."""
    step = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            step = int(Path(directory, "step").read_text())
    started_at = step
    marker = config.get("fail_once")
    while step < 4:
        step += 1
        if step == 3 and isinstance(marker, str) and not Path(marker).exists():
            Path(marker).touch()
            raise RuntimeError("step 3 fails once")
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tunecore.report(
                {"step": step, "started_at": started_at},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def steps_in(analysis: tunecore.ExperimentAnalysis) -> list[list[int]]:
    """Each trial's steps in its result.json, trials in id order."""
    steps = []
    for trial in sorted(analysis.trials, key=lambda t: t.trial_id):
        assert trial.path is not None
        lines = Path(trial.path, "result.json").read_text().splitlines()
        steps.append([int(json.loads(line)["step"]) for line in lines])
    return steps


def run_in(tmp_path: Path, **settings: Any) -> tunecore.ExperimentAnalysis:
    """`tunecore.run(four_steps, ...)` of the experiment "exp" in `tmp_path`."""
    return tunecore.run(four_steps, storage_path=str(tmp_path), name="exp", verbose=0, **settings)


def test_resume_goes_on_with_the_experiment_of_that_name(tmp_path: Path) -> None:
    space = {"x": tunecore.grid_search([1, 2])}
    with pytest.raises(Crash):
        run_in(tmp_path, config=space, callbacks=[CrashAtStep(2)])
    analysis = run_in(tmp_path, config=space, resume=True)
    assert [t.last_result["step"] for t in analysis.trials] == [4, 4]
    # Each went on from its checkpoint, and each step is in its file once.
    assert {t.last_result["started_at"] for t in analysis.trials} - {0}
    assert steps_in(analysis) == [[1, 2, 3, 4], [1, 2, 3, 4]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp"]  # no second experiment


def test_resume_auto_starts_an_experiment_that_is_not_there(tmp_path: Path) -> None:
    analysis = tunecore.run(
        four_steps, storage_path=str(tmp_path), name="new", resume="AUTO", verbose=0
    )
    assert [t.last_result["step"] for t in analysis.trials] == [4]


def test_errored_trials_are_resumed_only_when_asked(tmp_path: Path) -> None:
    config = {"fail_once": str(tmp_path / "failed")}
    first = run_in(tmp_path, config=config, raise_on_failed_trial=False)
    assert [str(t.status) for t in first.trials] == ["ERROR"]
    again = run_in(tmp_path, config=config, raise_on_failed_trial=False, resume="AUTO")
    assert [str(t.status) for t in again.trials] == ["ERROR"]  # errored trials are skipped
    retried = run_in(tmp_path, config=config, raise_on_failed_trial=False, resume="AUTO+ERRORED")
    assert [str(t.status) for t in retried.trials] == ["TERMINATED"]
    assert retried.trials[0].last_result["started_at"] == 2  # from its checkpoint
    assert steps_in(retried) == [[1, 2, 3, 4]]


@pytest.mark.parametrize(
    ("resume", "message"),
    [
        ("auto", "resume='auto': 'auto' is not one of True, False, 'AUTO'"),
        ("AUTO+NEVER", "resume='AUTO\\+NEVER': unknown suffix 'NEVER'"),
        (1.5, "resume=1.5: give True, False or 'AUTO'"),
    ],
)
def test_a_resume_setting_ray_does_not_know_is_refused(
    tmp_path: Path, resume: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        run_in(tmp_path, resume=resume)


@pytest.mark.parametrize("resume", ["ERRORED_ONLY", "LOCAL", "REMOTE+ERRORED", "PROMPT"])
def test_a_resume_setting_ray_deprecated_raises_its_deprecation_warning(
    tmp_path: Path, resume: str
) -> None:
    """Ray Tune 2.60 raises `DeprecationWarning` (an exception, not a
    warning issued) for these, before any trial runs."""
    base = resume.split("+", maxsplit=1)[0]
    message = f"'{base}' is deprecated. Please pass in one of \\(True, False, 'AUTO'\\)"
    with pytest.raises(DeprecationWarning, match=message):
        run_in(tmp_path, resume=resume)
    assert not list(tmp_path.rglob("result.json"))


def test_resume_config_refuses_what_a_restore_cannot_do() -> None:
    with pytest.raises(pydantic.ValidationError, match="unfinished='restart'"):
        tunecore.ResumeConfig(unfinished="restart")  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError, match="finished='resume'"):
        tunecore.ResumeConfig(finished=tunecore.ResumeConfig.ResumeType.RESUME)
