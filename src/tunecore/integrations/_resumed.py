"""Which results a tracked run still needs when a driver opens it for a
trial that ran before (a resumed experiment): each result exactly once,
whatever the kill lost.

A resumed trial restarts from its last checkpoint and reports the results
after it once more; as it starts, its result.json holds exactly the
results up to that checkpoint (`tunecore.shell.resume`). A tracker's run
holds every result up to some `training_iteration` (what the tracker
itself says it holds), or less than the trial reported when the tracker
lost the end of what it was given (Comet's offline experiment keeps
nothing a killed process had not archived). So as the run is opened it
gets the rows of result.json past what it holds, and then every result
the trial reports again up to there is skipped.

A trial that ended inside a killed driver (its end and results are in the
log and its result.json) never starts again, so the above never happens
for it, though its tracker may hold less: W&B loses what a SIGKILLed
process had buffered, or had not yet opened the run; a tracker that
raised (the callbacks go on without it) or was added on resume holds
nothing of it. So `TrackerCallback.on_experiment_restore` (the resume's
hook, `Callback.on_experiment_restore`) asks the tracker, without
opening anything, how far each such trial's run got (`held_upto`), and
for a trial whose result.json goes further starts the trial's run as for
a trial that starts again (catching it up as above) and ends it at once,
failed for a trial in ERROR. A trial whose run holds all of result.json,
or that has no result, is left alone: nothing twice, no empty run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tunecore.model import JsonValue, TrialStatus
from tunecore.result import TRAINING_ITERATION
from tunecore.shell.callbacks import LoggerCallback
from tunecore.shell.storage.layout import read_result_rows
from tunecore.shell.trial_view import Trial

Result = Mapping[str, JsonValue]

logger = logging.getLogger(__name__)


class ResumedRuns:
    """Per trial, up to which `training_iteration` its reopened run holds
    the results (module docstring)."""

    def __init__(self) -> None:
        self._held_upto: dict[str, int] = {}

    def opened(self, trial_id: str, trial_dir: Path | None, held_upto: int) -> list[Result]:
        """The trial's run was opened holding results up to `held_upto`
        (0: none): the recorded results it lacks, to log now, in order."""
        rows = (read_result_rows(trial_dir) if trial_dir is not None else None) or []
        missing: list[Result] = [row for row in rows if _iteration(row) > held_upto]
        self._held_upto[trial_id] = max([held_upto, *(_iteration(row) for row in missing)])
        return missing

    def is_new(self, trial_id: str, result: Result) -> bool:
        """Whether the run lacks `result` (False for a result a restarted
        trial reports again)."""
        held_upto = self._held_upto.get(trial_id)
        if held_upto is None:
            return True
        if _iteration(result) <= held_upto:
            return False
        del self._held_upto[trial_id]
        return True

    def forget(self, trial_id: str) -> None:
        self._held_upto.pop(trial_id, None)


class TrackerCallback(LoggerCallback):
    """A logger keeping each trial as one run of a tracker, which on
    resume catches up the runs of trials restored as ended (module
    docstring). A subclass says how far a trial's run got
    (`held_upto`), and its `log_trial_start` opens the run with the rows
    of result.json it lacks (`ResumedRuns.opened`)."""

    def held_upto(self, trial: Trial) -> int | None:
        """The highest `training_iteration` the trial's run holds (0: none),
        None when the tracker has no run of it; found without opening
        the run."""
        raise NotImplementedError

    def on_experiment_restore(self, trials: Sequence[Trial]) -> None:
        """Each trial on its own: one the tracker cannot take (its server
        unreachable, say) is reported and the others still caught up."""
        for trial in trials:
            try:
                if lags(trial, self.held_upto):
                    self.log_trial_start(trial)
                    self.log_trial_end(trial, failed=trial.status == TrialStatus.ERROR)
            except Exception:
                logger.exception(
                    "%s could not catch up the run of trial %s, restored as ended; "
                    "the next resume tries again",
                    type(self).__name__,
                    trial.trial_id,
                )


_ENDED = (TrialStatus.TERMINATED, TrialStatus.ERROR)


def lags(trial: Trial, held_upto: Callable[[Trial], int | None]) -> bool:
    """Whether `trial` ended with results its tracker's run lacks: its
    result.json goes past what `held_upto` says the run holds."""
    if trial.status not in _ENDED or not trial.last_result:
        return False  # checked first: a trial without results has no directory to read
    directory = trial.directory
    rows = (read_result_rows(directory) if directory is not None else None) or []
    recorded = max((_iteration(row) for row in rows), default=0)
    return recorded > (held_upto(trial) or 0)


def _iteration(result: Result) -> int:
    value = result.get(TRAINING_ITERATION)
    return int(value) if isinstance(value, int | float) else 0
