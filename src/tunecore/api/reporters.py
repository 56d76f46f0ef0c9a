"""Ray Tune's reporters: `ProgressReporter`, `CLIReporter`,
`JupyterNotebookReporter`.

Ray Tune scripts make a `CLIReporter` to choose the columns of the status
table (`metric_columns`, `add_metric_column`, `parameter_columns`), how
many trials it lists and how often it is printed, then pass it as
`RunConfig(progress_reporter=...)`. As it is, it only carries those
settings: the live table and the text status (`tunecore.shell.progress`)
draw them.

A reporter of the user's own (a `ProgressReporter` subclass, or a
`CLIReporter` with `should_report` or `report` overridden, as Ray's
reporters guide writes them) prints instead of tunecore's status: it is
called as Ray's output engine calls it (`tunecore.api.reporting`), and
`CLIReporter.report` prints the trials' status as text.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from tunecore.model import Mode
from tunecore.shell.progress import Columns, trial_lines
from tunecore.shell.trial_view import Trial

ColumnsGiven = Sequence[str] | Mapping[str, str] | None


class ProgressReporter:
    """Ray Tune's reporter interface: subclass it and implement
    `should_report` and `report` to print the progress your own way.
    `setup` is called once before either, as the experiment starts."""

    def setup(
        self,
        start_time: float | None = None,
        total_samples: int | None = None,
        metric: str | None = None,
        mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Told the experiment's start (a `time.time()`), its number of
        trials (None when a searcher decides) and its metric and mode."""

    def should_report(self, trials: list[Trial], done: bool = False) -> bool:
        """Whether `report` is called now: asked after every round of
        events, and once more at the end with `done=True`."""
        raise NotImplementedError

    def report(self, trials: list[Trial], done: bool, *sys_info: str) -> None:
        """Report `trials` (all of them, in creation order); `sys_info` are
        the scheduler's status and the resources in use, as text."""
        raise NotImplementedError


class CLIReporter(ProgressReporter):
    """The console status's columns, rows and frequency, in Ray Tune's
    names. Columns are result keys (`/`-joined when nested) or, as a dict,
    keys mapped to the header to show; the experiment's metric is always
    shown first."""

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as Ray's scripts call it
        self,
        metric_columns: ColumnsGiven = None,
        parameter_columns: ColumnsGiven = None,
        total_samples: int | None = None,
        max_progress_rows: int = 20,
        max_error_rows: int = 20,
        max_column_length: int = 20,
        max_report_frequency: float = 5.0,
        infer_limit: int = 3,
        print_intermediate_tables: bool | None = None,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
        sort_by_metric: bool = False,
    ) -> None:
        """Ray's arguments, in Ray's order. `total_samples` and
        `infer_limit` are taken and change nothing: the status counts the
        experiment's own trials, and shows the experiment's metric plus the
        `metric_columns` asked for rather than guessing more.
        `print_intermediate_tables=False` prints the status only at the
        end."""
        counts: tuple[tuple[str, object, int], ...] = (
            ("max_progress_rows", max_progress_rows, 1),
            ("max_error_rows", max_error_rows, 0),
            ("max_column_length", max_column_length, 4),
        )
        for field, value, least in counts:
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"CLIReporter({field}={value!r}) must be an integer >= {least}")
        if not max_report_frequency > 0:
            raise ValueError(
                f"CLIReporter(max_report_frequency={max_report_frequency!r}) must be > 0 seconds"
            )
        if mode not in (None, "min", "max"):
            raise ValueError(f"CLIReporter(mode={mode!r}) must be 'min', 'max' or None")
        self.overwrite: bool | None = None
        """Redraw the status in place (True) or print it anew (False); None:
        as the output decides (a terminal redraws). Set by the notebook
        reporter."""
        self._metrics = _as_headers("metric_columns", metric_columns) or {}
        self._parameters = _as_headers("parameter_columns", parameter_columns)
        self.total_samples = total_samples
        self.max_progress_rows = max_progress_rows
        self.max_error_rows = max_error_rows
        self.max_column_length = max_column_length
        self.max_report_frequency = max_report_frequency
        self.infer_limit = infer_limit
        self.print_intermediate_tables = print_intermediate_tables
        self.metric = metric
        self.mode = mode
        self.sort_by_metric = bool(sort_by_metric)
        self._start_time = time.time()
        self._last_report_time = 0.0

    def setup(
        self,
        start_time: float | None = None,
        total_samples: int | None = None,
        metric: str | None = None,
        mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the start time, and the experiment's metric where none
        was given (Ray's)."""
        if start_time is not None:
            self._start_time = start_time
        if self.metric is None:
            self.metric = metric
            self.mode = mode  # type: ignore[assignment]

    def should_report(self, trials: list[Trial], done: bool = False) -> bool:
        """At the end, and when `max_report_frequency` seconds have passed
        since the last report (Ray's)."""
        now = time.time()
        if now - self._last_report_time > self.max_report_frequency:
            self._last_report_time = now
            return True
        return done

    def report(self, trials: list[Trial], done: bool, *sys_info: str) -> None:
        """Print the status of `trials` as text: the time, `sys_info`, then
        the trials by status (all of them once `done`)."""
        names = {trial.trial_id: str(trial) for trial in trials}
        running_for = datetime.timedelta(seconds=round(time.time() - self._start_time))
        now = datetime.datetime.now()
        lines = [
            "== Status ==",
            f"Current time: {now:%Y-%m-%d %H:%M:%S} (running for {running_for})",
            *sys_info,
            *trial_lines(
                [trial.state for trial in trials],
                metric=self.metric,
                mode=None if self.mode is None else Mode(self.mode),
                max_rows=len(trials) if done else self.max_progress_rows,
                name_of=lambda state: names[state.trial_id],
                columns=self.columns,
            ),
        ]
        print("\n".join(lines), flush=True)

    def add_metric_column(self, metric: str, representation: str | None = None) -> None:
        """Show `metric` too, headed `representation` (the key by default)."""
        if metric in self._metrics:
            raise ValueError(f"CLIReporter already shows the metric column {metric!r}")
        self._metrics[metric] = representation or metric

    def add_parameter_column(self, parameter: str, representation: str | None = None) -> None:
        """Show the config value `parameter`, instead of the parameters chosen
        by default once any is added."""
        parameters = self._parameters if self._parameters is not None else {}
        if parameter in parameters:
            raise ValueError(f"CLIReporter already shows the parameter column {parameter!r}")
        parameters[parameter] = representation or parameter
        self._parameters = parameters

    @property
    def columns(self) -> Columns:
        """What the status draws, as `tunecore.shell.progress` takes it."""
        return Columns(
            metrics=dict(self._metrics),
            parameters=self._parameters,
            sort_by_metric=self.sort_by_metric,
            max_column_length=self.max_column_length,
            max_error_rows=self.max_error_rows,
        )


class JupyterNotebookReporter(CLIReporter):
    """Ray's reporter for notebooks: the same status, redrawn in place in
    the notebook's output with `overwrite` (Ray's default), or printed anew
    each time without it."""

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as Ray's scripts call it
        self,
        overwrite: bool = True,
        metric_columns: ColumnsGiven = None,
        parameter_columns: ColumnsGiven = None,
        total_samples: int | None = None,
        max_progress_rows: int = 20,
        max_error_rows: int = 20,
        max_column_length: int = 20,
        max_report_frequency: float = 5.0,
        infer_limit: int = 3,
        print_intermediate_tables: bool | None = None,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
        sort_by_metric: bool = False,
    ) -> None:
        super().__init__(
            metric_columns,
            parameter_columns,
            total_samples,
            max_progress_rows,
            max_error_rows,
            max_column_length,
            max_report_frequency,
            infer_limit,
            print_intermediate_tables,
            metric,
            mode,
            sort_by_metric,
        )
        self.overwrite = overwrite


def _as_headers(field: str, given: ColumnsGiven) -> dict[str, str] | None:
    if given is None:
        return None
    if isinstance(given, str):
        raise ValueError(f"CLIReporter({field}={given!r}) must be a list or a dict of keys")
    if isinstance(given, Mapping):
        return {str(key): str(header) for key, header in given.items()}
    return {str(key): str(key) for key in given}
