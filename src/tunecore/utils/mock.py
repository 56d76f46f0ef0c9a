"""Ray Tune's `ray.tune.utils.mock` helpers that its release tests use to
watch trials' statuses as a run goes: a `TrialStatusSnapshotTaker` callback
records each change of the statuses into a `TrialStatusSnapshot`, which
then says how many trials ran at once and whether all ended.

Ray's `FailureInjectorCallback` is not here: it kills cluster nodes through
Ray's private autoscaler commands (`tunecore._not_provided` says so when
it is imported).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tunecore._not_provided import not_provided_getattr
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial


class TrialStatusSnapshot:
    """The sequence of distinct {trial id: status} snapshots of a run."""

    def __init__(self) -> None:
        self._snapshots: list[dict[str, str]] = []

    def append(self, snapshot: dict[str, str]) -> None:
        """Keep `snapshot` unless it is empty or equals the latest one."""
        if snapshot and (not self._snapshots or snapshot != self._snapshots[-1]):
            self._snapshots.append(snapshot)

    def max_running_trials(self) -> int:
        """The most trials seen RUNNING at once (to check resource limits)."""
        return max(
            (sum(status == Trial.RUNNING for status in s.values()) for s in self._snapshots),
            default=0,
        )

    def all_trials_are_terminated(self) -> bool:
        """Whether the latest snapshot has every trial TERMINATED (False
        before any snapshot)."""
        if not self._snapshots:
            return False
        return all(status == Trial.TERMINATED for status in self._snapshots[-1].values())


class TrialStatusSnapshotTaker(Callback):
    """Records the trials' statuses into `snapshot` after every step."""

    def __init__(self, snapshot: TrialStatusSnapshot) -> None:
        self._snapshot = snapshot

    def on_step_end(self, iteration: int, trials: Sequence[Trial], **info: Any) -> None:
        self._snapshot.append({trial.trial_id: trial.status for trial in trials})


__getattr__ = not_provided_getattr(__name__)
