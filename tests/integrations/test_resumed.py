"""`integrations._resumed.TrackerCallback.on_experiment_restore`: which
trials restored as ended get their tracker's run caught up, against
trials made by the real core and result.json files on disk."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import msgspec
import pytest

from tests.shell.test_callbacks import feed
from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.integrations._resumed import TrackerCallback
from tunecore.model import JsonValue, Resources, TrialStatus
from tunecore.model import events as ev
from tunecore.shell.trial_view import Trial


def trials_with_results(tmp_path: Path, reported: list[int]) -> list[Trial]:
    """One trial per entry, which reported that many results (the core's
    record) and has them in its result.json, in `tmp_path/<trial id>`."""
    state = new_experiment(ExperimentConfig(trainable_name="train"))
    state = feed(
        state,
        ev.ClusterResourcesChanged(at=1.0, total=Resources(cpu=len(reported))),
        *(ev.TrialRequested(at=2.0, config={"x": n}) for n in range(len(reported))),
    )
    trials = sorted(state.trials.values(), key=lambda t: t.trial_id)
    for trial, count in zip(trials, reported, strict=True):
        directory = tmp_path / trial.trial_id
        directory.mkdir()
        rows: list[dict[str, JsonValue]] = [
            {"training_iteration": i, "loss": 1.0 / i} for i in range(1, count + 1)
        ]
        (directory / "result.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
        state = feed(
            state,
            *(ev.ResultReported(at=3.0, trial_id=trial.trial_id, result=row) for row in rows),
        )
    return [Trial(state.trials[t.trial_id], dir_of=lambda t: tmp_path / t.trial_id) for t in trials]


def as_status(trial: Trial, status: TrialStatus) -> Trial:
    directory = trial.directory
    assert directory is not None
    return Trial(msgspec.structs.replace(trial.state, status=status), dir_of=lambda _: directory)


class Tracker(TrackerCallback):
    """Holds `held[trial_id]` of each trial; records what it is asked."""

    def __init__(self, held: dict[str, int | None], broken: str = "") -> None:
        self.held = held
        self.broken = broken
        self.asked: list[str] = []
        self.calls: list[tuple[str, str, bool]] = []

    def held_upto(self, trial: Trial) -> int | None:
        self.asked.append(trial.trial_id)
        if trial.trial_id == self.broken:
            raise ConnectionError("tracker down")
        return self.held[trial.trial_id]

    def log_trial_start(self, trial: Trial) -> None:
        self.calls.append(("start", trial.trial_id, False))

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        self.calls.append(("end", trial.trial_id, failed))


def test_only_ended_trials_the_tracker_holds_less_of_are_caught_up(tmp_path: Path) -> None:
    complete, behind, errored, no_run, running, no_results = trials_with_results(
        tmp_path, [3, 3, 2, 2, 1, 0]
    )
    trials = [
        as_status(complete, TrialStatus.TERMINATED),
        as_status(behind, TrialStatus.TERMINATED),
        as_status(errored, TrialStatus.ERROR),
        as_status(no_run, TrialStatus.TERMINATED),
        running,  # it starts again: caught up as it starts
        as_status(no_results, TrialStatus.TERMINATED),
    ]
    tracker = Tracker(
        {complete.trial_id: 3, behind.trial_id: 1, errored.trial_id: 0, no_run.trial_id: None}
    )
    tracker.on_experiment_restore(trials)
    assert tracker.calls == [
        ("start", behind.trial_id, False),
        ("end", behind.trial_id, False),
        ("start", errored.trial_id, False),
        ("end", errored.trial_id, True),
        ("start", no_run.trial_id, False),
        ("end", no_run.trial_id, False),
    ]
    # Neither the running trial nor the one without results was asked about.
    assert tracker.asked == [t.trial_id for t in (complete, behind, errored, no_run)]


def test_a_trial_the_tracker_cannot_take_is_reported_and_the_others_caught_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = (
        as_status(t, TrialStatus.TERMINATED) for t in trials_with_results(tmp_path, [2, 2])
    )
    tracker = Tracker({second.trial_id: None}, broken=first.trial_id)
    with caplog.at_level(logging.ERROR):
        tracker.on_experiment_restore([first, second])
    assert tracker.calls == [("start", second.trial_id, False), ("end", second.trial_id, False)]
    assert f"could not catch up the run of trial {first.trial_id}" in caplog.text
