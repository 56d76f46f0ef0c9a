"""`CLIReporter`, as Ray Tune scripts make it, and reporters of the
user's own (`ProgressReporter`, `CLIReporter` subclasses), called as Ray's
output engine calls them."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pydantic
import pytest

import tunecore
from tunecore import CLIReporter, JupyterNotebookReporter, ProgressReporter, RunConfig, Tuner
from tunecore.experiment.trial import Trial


def test_columns_are_added_once_and_given_as_lists_or_dicts() -> None:
    reporter = CLIReporter(metric_columns=["loss"], parameter_columns={"lr": "LR"})
    reporter.add_metric_column("acc", "accuracy")
    with pytest.raises(ValueError, match="already shows the metric column 'acc'"):
        reporter.add_metric_column("acc")
    reporter.add_parameter_column("batch")
    columns = reporter.columns
    assert dict(columns.metrics) == {"loss": "loss", "acc": "accuracy"}
    assert columns.parameters == {"lr": "LR", "batch": "batch"}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: CLIReporter(max_progress_rows=0), "max_progress_rows=0"),
        (lambda: CLIReporter(max_report_frequency=0), "max_report_frequency=0"),
        (lambda: CLIReporter(metric_columns="loss"), "metric_columns='loss'"),
    ],
)
def test_bad_settings_name_the_field_and_the_value(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_run_config_takes_only_a_progress_reporter() -> None:
    assert isinstance(RunConfig(progress_reporter=CLIReporter()).progress_reporter, CLIReporter)
    with pytest.raises(pydantic.ValidationError, match=r"progress_reporter=.* is not a tunecore"):
        RunConfig(progress_reporter=object())


def test_a_notebook_reporter_takes_ray_s_overwrite_and_the_columns() -> None:
    """`JupyterNotebookReporter(overwrite=True)` as Ray's notebooks make it
    (it was an alias of `CLIReporter`, which refused `overwrite`)."""
    reporter = JupyterNotebookReporter(overwrite=False, metric_columns=["loss"])
    assert reporter.overwrite is False
    assert reporter.columns.metrics == {"loss": "loss"}
    assert JupyterNotebookReporter().overwrite is True
    assert isinstance(RunConfig(progress_reporter=reporter).progress_reporter, CLIReporter)


def train(config: dict[str, Any]) -> None:
    for step in range(3):
        tunecore.report({"loss": config["x"] * 10 + step})


class Recording(ProgressReporter):
    """Ray's interface implemented directly: records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def setup(
        self,
        start_time: float | None = None,
        total_samples: int | None = None,
        metric: str | None = None,
        mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        told = {"total_samples": total_samples, "metric": metric, "mode": mode}
        self.calls.append(("setup", told))

    def should_report(self, trials: list[Trial], done: bool = False) -> bool:
        self.calls.append(("should_report", done))
        return True

    def report(self, trials: list[Trial], done: bool, *sys_info: str) -> None:
        self.calls.append(("report", (done, [(str(t), t.status) for t in trials], sys_info)))


def fit(tmp_path: Path, reporter: ProgressReporter, verbose: int = 1) -> tunecore.ResultGrid:
    return Tuner(
        train,
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=tunecore.TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
        run_config=RunConfig(
            name="rep",
            storage_path=str(tmp_path),
            executor="in_process",
            progress_reporter=reporter,
            verbose=verbose,
        ),
    ).fit()


def test_a_reporter_of_ones_own_is_called_as_ray_calls_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reporter = Recording()
    fit(tmp_path, reporter)
    kinds = [kind for kind, _ in reporter.calls]
    assert kinds[0] == "setup"
    assert reporter.calls[0][1] == {"total_samples": 2, "metric": "loss", "mode": "min"}
    # Asked after every round, then once more with done=True, which reports.
    assert kinds.count("should_report") == kinds.count("report") > 2
    assert reporter.calls[-2] == ("should_report", True)
    done, trials, sys_info = reporter.calls[-1][1]
    assert done is True
    assert [status for _, status in trials] == ["TERMINATED", "TERMINATED"]
    assert [name.rsplit("_", 1)[1] for name, _ in trials] == ["00000", "00001"]
    assert sys_info[0].startswith("Using FIFO scheduling algorithm")
    assert sys_info[1].startswith("Logical resource usage: ")
    assert sys_info[1].endswith(" CPUs, 0/0 GPUs")
    # It replaces tunecore's status and summary, as it replaces Ray's table.
    out = capsys.readouterr().out
    assert "== Status ==" not in out
    assert "Number of trials" not in out


def test_verbose_0_calls_no_reporter(tmp_path: Path) -> None:
    reporter = Recording()
    fit(tmp_path, reporter, verbose=0)
    assert [kind for kind, _ in reporter.calls] == ["setup"]


class ExperimentTerminationReporter(CLIReporter):
    """Ray's reporters guide: reports only on experiment termination."""

    def should_report(self, trials: list[Trial], done: bool = False) -> bool:
        return done


def test_a_cli_reporter_subclass_prints_its_status_when_it_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fit(tmp_path, ExperimentTerminationReporter(metric_columns=["loss"]))
    out = capsys.readouterr().out
    assert out.count("== Status ==") == 1
    status = out[out.index("== Status ==") :].splitlines()
    assert status[1].startswith("Current time: ")
    assert status[2].startswith("Using FIFO scheduling algorithm")
    assert status[4] == "TERMINATED trials:"
    assert status[5].startswith(" - train_")
    assert "loss=12" in status[5]
    assert status[6].startswith(" - train_")
    assert "loss=22" in status[6]


class Broken(ProgressReporter):
    def should_report(self, trials: list[Trial], done: bool = False) -> bool:
        return True

    def report(self, trials: list[Trial], done: bool, *sys_info: str) -> None:
        raise RuntimeError("the reporter broke")


def test_a_reporter_that_raises_is_logged_once_and_the_run_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="tunecore.api.reporting"):
        grid = fit(tmp_path, Broken())
    assert grid.num_terminated == 2
    logged = [r for r in caplog.records if "Broken.report raised RuntimeError" in r.getMessage()]
    assert len(logged) == 1


def test_the_base_class_must_be_implemented() -> None:
    with pytest.raises(NotImplementedError):
        ProgressReporter().should_report([])
    with pytest.raises(NotImplementedError):
        ProgressReporter().report([], True)


def test_rays_arguments_are_taken_in_rays_order() -> None:
    """`CLIReporter(metric_columns, parameter_columns, total_samples,
    max_progress_rows, max_error_rows, max_column_length,
    max_report_frequency, infer_limit, print_intermediate_tables, metric,
    mode, sort_by_metric)`, as Ray's signature has them."""
    reporter = CLIReporter(["loss"], ["lr"], 10, 5, 2, 12, 1.0, 3, False, "loss", "min", True)
    assert (reporter.max_progress_rows, reporter.max_report_frequency) == (5, 1.0)
    assert (reporter.metric, reporter.mode, reporter.print_intermediate_tables) == (
        "loss",
        "min",
        False,
    )
    columns = reporter.columns
    assert (columns.sort_by_metric, columns.max_column_length, columns.max_error_rows) == (
        True,
        12,
        2,
    )
    notebook = JupyterNotebookReporter(False, ["loss"], sort_by_metric=True)
    assert notebook.overwrite is False
    assert notebook.columns.sort_by_metric is True


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_error_rows": -1}, "max_error_rows=-1"),
        ({"max_column_length": 2}, "max_column_length=2"),
        ({"mode": "best"}, "mode='best'"),
    ],
)
def test_bad_display_settings_name_the_field(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CLIReporter(**settings)
