"""A user's own progress reporter, called as Ray Tune's output engine
calls it.

Ray's reporters guide has users subclass `ProgressReporter` (or
`CLIReporter`, overriding `should_report` or `report`) to decide when and
how progress is printed. Ray calls `setup(start_time=, total_samples=,
metric=, mode=)` once, then after every step of its loop
`should_report(trials, done=False)` and, when that is true,
`report(trials, done, scheduler_status, resources_in_use)`; once the
loop ends, the same with `done=True`. `UserReporting` does that on the
experiment loop's state hook, with the trials as the `Trial` views
callbacks get. Such a reporter replaces tunecore's status table and
final summary, as it replaces Ray's table.

An error in the user's reporter is logged (once per method and error
type) and the experiment goes on, as for a callback's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from tunecore.api.reporters import CLIReporter, ProgressReporter
from tunecore.core.experiment import ExperimentState, trials_in_order
from tunecore.model import TrialState
from tunecore.shell.progress import resources_line
from tunecore.shell.trial_view import DirOf, Trial, TrialViews

logger = logging.getLogger(__name__)


def prints_its_own(reporter: ProgressReporter | None) -> bool:
    """Whether `reporter` is the user's own (it decides when or how to
    print), rather than a `CLIReporter` that only sets tunecore's table."""
    if reporter is None:
        return False
    kind = type(reporter)
    return (
        kind.should_report is not CLIReporter.should_report or kind.report is not CLIReporter.report
    )


class UserReporting:
    """Calls a user's `ProgressReporter` (module docstring): `tick` is the
    loop's state hook, `finish` the report with `done=True`."""

    def __init__(
        self, reporter: ProgressReporter, views: TrialViews, dir_of: DirOf, verbose: int
    ) -> None:
        self._reporter = reporter
        self._views = views
        self._dir_of = dir_of
        self._on = verbose > 0  # Ray reports from verbosity 1 on
        self._logged: set[tuple[str, type[BaseException]]] = set()

    def setup(self, total_samples: int | None, metric: str | None, mode: str | None) -> None:
        self._call(
            "setup",
            lambda: self._reporter.setup(
                start_time=time.time(), total_samples=total_samples, metric=metric, mode=mode
            ),
        )

    def tick(self, state: ExperimentState) -> None:
        self._report(state, done=False)

    def finish(self, state: ExperimentState) -> None:
        self._report(state, done=True)

    def _report(self, state: ExperimentState, *, done: bool) -> None:
        if not self._on:
            return
        trials = [self._view(trial) for trial in trials_in_order(state)]
        if self._call("should_report", lambda: self._reporter.should_report(trials, done=done)):
            sys_info = (
                state.scheduler.debug_string(),
                resources_line(state.used, state.total, "Logical resource usage"),
            )
            self._call("report", lambda: self._reporter.report(trials, done, *sys_info))

    def _view(self, trial: TrialState) -> Trial:
        return self._views.of(trial, self._dir_of)

    def _call(self, method: str, call: Callable[[], object]) -> object:
        try:
            return call()
        except Exception as error:
            if (method, type(error)) not in self._logged:
                self._logged.add((method, type(error)))
                logger.exception(
                    "%s.%s raised %s (logged once; the experiment goes on)",
                    type(self._reporter).__name__,
                    method,
                    type(error).__name__,
                )
            return None
