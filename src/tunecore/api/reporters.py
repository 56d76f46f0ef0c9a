"""`CLIReporter`: Ray Tune's settings for the console status.

Ray Tune scripts make one to choose the columns of the status table
(`metric_columns`, `add_metric_column`, `parameter_columns`), how many
trials it lists and how often it is printed, then pass it as
`RunConfig(progress_reporter=...)`. Here it only carries those settings;
the live table and the text status (`tunecore.shell.progress`) draw them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from tunecore.shell.progress import Columns

ColumnsGiven = Sequence[str] | Mapping[str, str] | None


class CLIReporter:
    """The console status's columns, rows and frequency, in Ray Tune's
    names. Columns are result keys (`/`-joined when nested) or, as a dict,
    keys mapped to the header to show; the experiment's metric is always
    shown first."""

    def __init__(
        self,
        *,
        metric_columns: ColumnsGiven = None,
        parameter_columns: ColumnsGiven = None,
        max_progress_rows: int = 20,
        max_report_frequency: float = 5.0,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
    ) -> None:
        if max_progress_rows < 1:
            raise ValueError(f"CLIReporter(max_progress_rows={max_progress_rows!r}) must be >= 1")
        if not max_report_frequency > 0:
            raise ValueError(
                f"CLIReporter(max_report_frequency={max_report_frequency!r}) must be > 0 seconds"
            )
        self.overwrite: bool | None = None
        """Redraw the status in place (True) or print it anew (False); None:
        as the output decides (a terminal redraws). Set by the notebook
        reporter."""
        self._metrics = _as_headers("metric_columns", metric_columns) or {}
        self._parameters = _as_headers("parameter_columns", parameter_columns)
        self.max_progress_rows = max_progress_rows
        self.max_report_frequency = max_report_frequency
        self.metric = metric
        self.mode = mode

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
        return Columns(metrics=dict(self._metrics), parameters=self._parameters)


class JupyterNotebookReporter(CLIReporter):
    """Ray's reporter for notebooks: the same status, redrawn in place in
    the notebook's output with `overwrite` (Ray's default), or printed anew
    each time without it."""

    def __init__(
        self,
        *,
        overwrite: bool = True,
        metric_columns: ColumnsGiven = None,
        parameter_columns: ColumnsGiven = None,
        max_progress_rows: int = 20,
        max_report_frequency: float = 5.0,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
    ) -> None:
        super().__init__(
            metric_columns=metric_columns,
            parameter_columns=parameter_columns,
            max_progress_rows=max_progress_rows,
            max_report_frequency=max_report_frequency,
            metric=metric,
            mode=mode,
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
