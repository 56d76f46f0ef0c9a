"""Names a Ray Tune script reaches through `import tunecore as tune`."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore as tune
from tunecore import FailureConfig, RunConfig, TuneConfig, Tuner
from tunecore.model import JsonValue
from tunecore.shell.trial_view import Trial


def train(config: dict[str, object]) -> None:
    for step in range(3):
        tune.report({"loss": float(step)})


def fails(config: dict[str, object]) -> None:
    tune.report({"loss": 1.0})
    raise ValueError(f"bad x={config['x']}")


def run_config(tmp_path: Path, **fields: object) -> RunConfig:
    return RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process", **fields)  # type: ignore[arg-type]


def test_the_submodules_need_no_import_of_their_own() -> None:
    assert tune.schedulers.ASHAScheduler is not None
    assert tune.search.BasicVariantGenerator is not None
    assert tune.stopper.MaximumIterationStopper is not None
    assert tune.logger.LoggerCallback is not None
    assert tune.result.TRAINING_ITERATION == "training_iteration"
    assert issubclass(tune.logger.LoggerCallback, tune.Callback)


class Recorder(tune.logger.LoggerCallback):
    """A user's logger in Ray's style: only the log_trial_* methods."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def log_trial_start(self, trial: Trial) -> None:
        self.events.append(("start", str(trial)))

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        self.events.append(("result", str(result["loss"])))

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        self.events.append(("end", "failed" if failed else "ok"))


def test_a_logger_callback_gets_its_log_methods_called(tmp_path: Path) -> None:
    recorder = Recorder()
    Tuner(train, run_config=run_config(tmp_path, callbacks=[recorder])).fit()
    kinds = [kind for kind, _ in recorder.events]
    assert kinds == ["start", "result", "result", "result", "end"]
    assert recorder.events[-1] == ("end", "ok")


class CountingJson(tune.logger.JsonLoggerCallback):
    def __init__(self) -> None:
        super().__init__()
        self.results = 0

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        self.results += 1
        super().log_trial_result(iteration, trial, result)


def test_a_logger_made_without_arguments_replaces_the_default_of_its_kind(
    tmp_path: Path,
) -> None:
    mine = CountingJson()
    (result,) = Tuner(train, run_config=run_config(tmp_path, callbacks=[mine])).fit()
    assert mine.results == 3
    # Written once (by the user's logger), not twice.
    lines = (result.path / "result.json").read_text().splitlines()
    assert [json.loads(line)["loss"] for line in lines] == [0.0, 1.0, 2.0]
    # The default's other files are still written, each row once.
    with (result.path / "progress.csv").open(newline="") as file:
        assert [row["loss"] for row in csv.DictReader(file)] == ["0.0", "1.0", "2.0"]


def test_tensorboard_files_are_written_by_default_when_tensorboardx_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tensorboardX")
    (result,) = Tuner(train, run_config=run_config(tmp_path / "on")).fit()
    assert list(result.path.glob("events.out.tfevents.*"))
    monkeypatch.setenv("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")
    (result,) = Tuner(train, run_config=run_config(tmp_path / "off")).fit()
    assert not list(result.path.glob("events.out.tfevents.*"))


def test_fail_fast_raise_raises_the_trials_error_after_the_run(tmp_path: Path) -> None:
    tuner = Tuner(
        fails,
        param_space={"x": tune.grid_search([1, 2])},
        tune_config=TuneConfig(max_concurrent_trials=1),
        run_config=run_config(tmp_path, name="ff", failure_config=FailureConfig(fail_fast="raise")),
    )
    with pytest.raises(tune.TuneError, match="bad x=1") as raised:
        tuner.fit()
    # As in Ray, where the trial's own exception propagates: `except ValueError` catches it.
    assert isinstance(raised.value, ValueError)
    assert "fail_fast='raise': the experiment in" in str(raised.value)
    # Everything recorded is kept: the experiment can be read back.
    grid = tune.ResultGrid.from_path(tmp_path / "ff")
    assert grid.num_errors == 1
