"""`CLIReporter`, as Ray Tune scripts make it."""

from __future__ import annotations

import pydantic
import pytest

from tunecore import CLIReporter, JupyterNotebookReporter, RunConfig


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


def test_run_config_takes_only_a_cli_reporter() -> None:
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
