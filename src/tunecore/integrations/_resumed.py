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
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tunecore.model import JsonValue
from tunecore.result import TRAINING_ITERATION
from tunecore.shell.storage.layout import read_result_rows

Result = Mapping[str, JsonValue]


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


def _iteration(result: Result) -> int:
    value = result.get(TRAINING_ITERATION)
    return int(value) if isinstance(value, int | float) else 0
