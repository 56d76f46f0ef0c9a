"""`tunecore resume` of an experiment that a searcher or scheduler object
of the user's ended by raising: as `Tuner.restore` does (see
tests/api/test_searcher_objects.py), the resume runs the trials the
failure cut short, and the rest of the search, with the object rebuilt
from the log. The objects below are importable with the trainable
(`--trainable tests.cli.test_resume_after_policy_failure:climb`), which
is how the resume finds their classes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, TuneError, Tuner
from tunecore.cli import main
from tunecore.model import JsonDict, SchedulerFailed, SearcherFailed, TrialStatus
from tunecore.search import Searcher
from tunecore.shell.eventlog import read_log
from tunecore.shell.ray_schedulers import FIFOScheduler, TrialScheduler
from tunecore.shell.replay import replay

TRAINABLE = f"{__name__}:climb"
BROKEN: set[str] = set()
"""The objects that raise (`"searcher"`, `"scheduler"`): a bug, then fixed."""


@pytest.fixture(autouse=True)
def fixed_after() -> Iterator[None]:
    yield
    BROKEN.clear()


def climb(config: dict[str, Any]) -> None:
    for step in range(1, 4):
        tunecore.report({"score": config["x"] * step})


class ThreeXs(Searcher):
    """Suggests x = 1, 2, 3; while broken, its `on_trial_result` raises on
    x = 1's second result. Rebuilt from its spec on a resume."""

    def __init__(self) -> None:
        super().__init__(metric="score", mode="max")
        self.asked = 0
        self.x_of: dict[str, int] = {}

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        if self.asked == 3:
            return Searcher.FINISHED
        self.asked += 1
        self.x_of[trial_id] = self.asked
        return {"x": self.asked}

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        if "searcher" in BROKEN and (self.x_of[trial_id], result["training_iteration"]) == (1, 2):
            raise RuntimeError("the searcher broke")

    def to_spec(self) -> JsonDict | None:
        return {}

    @classmethod
    def from_spec(cls, spec: JsonDict) -> ThreeXs:
        return cls()


class BreaksAtTwo(FIFOScheduler):
    """While broken, raises on the first result at iteration 2."""

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        if "scheduler" in BROKEN and result["training_iteration"] == 2:
            raise RuntimeError("the scheduler broke")
        return TrialScheduler.CONTINUE


def fit(path: Path, *, search_alg: Searcher | None = None, scheduler: object = None) -> None:
    """Three trials, one at a time: x = 1, 2, 3 from the searcher or a grid."""
    Tuner(
        climb,
        param_space={} if search_alg else {"x": tunecore.grid_search([1, 2, 3])},
        tune_config=TuneConfig(
            metric="score",
            mode="max",
            num_samples=3 if search_alg else 1,
            max_concurrent_trials=1,
            search_alg=search_alg,
            scheduler=scheduler,
        ),
        run_config=RunConfig(storage_path=str(path), name="exp", verbose=0, executor="in_process"),
    ).fit()


def resume(path: Path) -> int:
    return main(["resume", str(path / "exp"), "--trainable", TRAINABLE, "--verbose", "0"])


def finished(path: Path) -> dict[int, int]:
    """x: last iteration, of each trial, all of which must have ended well."""
    trials = replay(path / "exp").state.trials.values()
    assert all(t.status is TrialStatus.TERMINATED for t in trials)
    return {
        int(str(t.spec.config["x"])): int(str(t.last_result["training_iteration"])) for t in trials
    }


def test_resume_runs_on_what_a_raising_searcher_cut_short(tmp_path: Path) -> None:
    BROKEN.add("searcher")
    with pytest.raises(TuneError, match="the searcher broke"):
        fit(tmp_path, search_alg=ThreeXs())
    failures = [e for e in read_log(tmp_path / "exp").events if isinstance(e, SearcherFailed)]
    assert [f.resumable for f in failures] == [True]
    BROKEN.clear()
    assert resume(tmp_path) == 0
    assert finished(tmp_path) == {1: 3, 2: 3, 3: 3}


def test_resume_of_what_a_raising_scheduler_cut_short_asks_for_it_from_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scheduler object is code the log does not hold, and a command line
    cannot pass one: the resume exits 2 saying how (`Tuner.restore(...,
    scheduler=...)`), without touching the experiment, which a restore
    given the fixed scheduler then runs on."""
    BROKEN.add("scheduler")
    with pytest.raises(TuneError, match="the scheduler broke"):
        fit(tmp_path, scheduler=BreaksAtTwo())
    failures = [e for e in read_log(tmp_path / "exp").events if isinstance(e, SchedulerFailed)]
    assert [f.resumable for f in failures] == [True]
    BROKEN.clear()
    logged = (tmp_path / "exp" / "events.log").read_bytes()
    assert resume(tmp_path) == 2
    err = capsys.readouterr().err
    assert "scheduler is your BreaksAtTwo" in err
    assert "Tuner.restore(path, trainable, scheduler=...)" in err
    assert (tmp_path / "exp" / "events.log").read_bytes() == logged
    Tuner.restore(str(tmp_path / "exp"), climb, scheduler=BreaksAtTwo()).fit()
    assert finished(tmp_path) == {1: 3, 2: 3, 3: 3}
