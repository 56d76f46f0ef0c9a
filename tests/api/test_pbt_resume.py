"""PBT's exploit copies (`shell.exploit_copies`) across runs: a run
deletes its own as it ends, and a resume deletes those a killed driver
left; the trials keep their directories (in-process executor)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import tunecore
from tunecore import TuneConfig, Tuner
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial

from .test_missing_checkpoints import Crash, exploiting, run_config, scoring


class SeesExploits(Callback):
    """Notes the exploit copies there are at each result; with `crash`,
    kills the driver at the first result after one exists."""

    def __init__(self, experiment: Path, *, crash: bool = False) -> None:
        self.experiment = experiment
        self.crash = crash
        self.seen: set[str] = set()
        self.most_at_once = 0  # copies one trial had at the same time

    def on_trial_result(self, iteration: int, trials: object, trial: Trial, result: object) -> None:
        copies = exploit_copies(self.experiment)
        self.seen |= copies
        per_trial = Counter(copy.split("/")[0] for copy in copies)
        self.most_at_once = max(self.most_at_once, *per_trial.values(), 0)
        if copies and self.crash:
            raise Crash


def exploit_copies(experiment: Path) -> set[str]:
    """Each exploit directory there is, as `trial dir/name`."""
    return {f"{copy.parent.name}/{copy.name}" for copy in experiment.glob("*/exploit_*")}


def tuner(tmp_path: Path, *callbacks: Callback) -> Tuner:
    return Tuner(
        scoring,
        param_space={"rate": tunecore.grid_search([0.5, 3.0])},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=exploiting([0.5, 3.0])),
        run_config=run_config(tmp_path, *callbacks, stop={"training_iteration": 20}),
    )


def test_a_run_keeps_one_exploit_copy_per_trial_and_deletes_it_as_it_ends(
    tmp_path: Path,
) -> None:
    seen = SeesExploits(tmp_path / "gone")
    grid = tuner(tmp_path, seen).fit()
    assert [r.error for r in grid] == [None, None]
    exploited = Counter(copy.split("/")[0] for copy in seen.seen)
    assert max(exploited.values(), default=0) > 2, "no trial exploited 3 times: nothing to prove"
    # A trial keeps only the copy it last restored from (and, while it
    # restores from the next one, that one too),
    assert seen.most_at_once == 2
    # and none once the run is over.
    assert exploit_copies(tmp_path / "gone") == set()


def test_a_resume_deletes_the_copies_a_killed_driver_left(tmp_path: Path) -> None:
    experiment = tmp_path / "gone"
    with pytest.raises(Crash):
        tuner(tmp_path, SeesExploits(experiment, crash=True)).fit()
    trial_dirs = sorted(p.name for p in experiment.glob("scoring_*"))
    assert len(trial_dirs) == 2
    # A driver killed outright deletes nothing: what it leaves, put back by hand.
    for trial_dir in trial_dirs:
        (experiment / trial_dir / "exploit_000001").mkdir()
        (experiment / trial_dir / "exploit_000001" / "score").write_text("1.0")

    grid = Tuner.restore(str(experiment), scoring).fit()
    assert [r.error for r in grid] == [None, None]

    # A run deletes only the copies it made: the sweep took the others.
    assert exploit_copies(experiment) == set()
    # The trials kept their directories (named by their first tag).
    assert sorted(p.name for p in experiment.glob("scoring_*")) == trial_dirs
