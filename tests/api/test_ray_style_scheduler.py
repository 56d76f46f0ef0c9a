"""A scheduler written against Ray Tune's imperative API (a `FIFOScheduler`
or `TrialScheduler` subclass whose hooks take `tune_controller` first and
return "CONTINUE", "PAUSE" or "STOP") runs: its verdicts and picks are
logged, so replay needs none of its code, and a restore rebuilds it by
calling its hooks over the log. A Ray-style subclass of one of the other
built-ins (pure policies) is refused where it is passed.

These run on the in-process executor (no Ray); `tests/integration/
test_ray_style_scheduler_ray.py` runs the same schedulers on Ray."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import tunecore as tune
from tests.integration.ray_style_schedulers import TURNS_OF_THREE, StopBelow, TakeTurns, climb
from tunecore import RunConfig, TuneConfig, TuneError, Tuner
from tunecore.core.schedulers.fifo import FIFOScheduler as PureFIFO
from tunecore.core.schedulers.imperative import ImperativeScheduler
from tunecore.model import Mode, ResultReported, SchedulerAnswered, TrialStatus
from tunecore.schedulers import (
    ASHAScheduler,
    FIFOScheduler,
    ResourceChangingScheduler,
    TrialScheduler,
)
from tunecore.shell.eventlog import read_log
from tunecore.shell.imperative import SchedulerResumeWarning
from tunecore.shell.ray_schedulers import FIFOScheduler as RayFIFO  # the same class at run time

ONE_AT_A_TIME = tune.with_resources(climb, {"cpu": os.cpu_count() or 1})


def fit(path: Path, scheduler: object, trainable: Any = climb, **space: Any) -> tune.ResultGrid:
    return Tuner(
        trainable,
        param_space={"steps": 4, **space},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=scheduler),
        run_config=RunConfig(name="exp", storage_path=str(path), executor="in_process", verbose=0),
    ).fit()


def by_x(results: tune.ResultGrid) -> dict[Any, Any]:
    return {result.config["x"]: result for result in results}


def test_a_scheduler_in_rays_style_stops_the_trials_below_its_threshold(tmp_path: Path) -> None:
    scheduler = StopBelow(threshold=5)
    results = by_x(fit(tmp_path, scheduler, x=tune.grid_search([1, 2, 3])))
    iterations = {x: result.metrics["training_iteration"] for x, result in results.items()}
    assert iterations == {1: 2, 2: 2, 3: 4}  # 2*2 < 5 stops at its grace; 3*2 does not
    assert all(result.error is None for result in results.values())
    ids = {x: result.metrics["trial_id"] for x, result in results.items()}
    # Ray's order for each trial: added, its results, its completion with its last result.
    for x, trial_id in ids.items():
        heard = [entry for entry in scheduler.heard if entry[1] == trial_id]
        last = iterations[x]
        assert heard == [
            ("add", trial_id),
            *[("result", trial_id, i) for i in range(1, last + 1)],
            ("complete", trial_id, last),
        ]


def test_its_verdicts_are_logged_and_replay_and_status_need_no_code(tmp_path: Path) -> None:
    fit(tmp_path, StopBelow(threshold=5), x=tune.grid_search([1, 3]))
    log = read_log(tmp_path / "exp")
    decisions = [e.decision for e in log.events if isinstance(e, ResultReported)]
    assert decisions.count("STOP") == 1
    assert decisions.count("CONTINUE") == 5  # 1 for x=1, 4 for x=3 (its last too)
    # A fresh interpreter that never imports the test's scheduler module.
    check = (
        "import sys; from tunecore.cli import main; import tunecore; "
        f"assert main(['replay', {str(tmp_path / 'exp')!r}]) == 0; "
        f"assert main(['status', {str(tmp_path / 'exp')!r}]) == 0; "
        f"state = tunecore.replay({str(tmp_path / 'exp')!r}, quiet=True).state; "
        "assert type(state.scheduler).__name__ == 'ImperativeScheduler'; "
        "assert sorted(t.last_result['training_iteration'] for t in state.trials.values()) "
        "== [2, 4]; "
        "assert not any('ray_style_schedulers' in m for m in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_trials_take_turns_by_its_pauses_and_picks(tmp_path: Path) -> None:
    scheduler = TakeTurns(every=2)
    results = by_x(fit(tmp_path, scheduler, ONE_AT_A_TIME, x=tune.grid_search([1, 2, 3])))
    assert {x: r.metrics["training_iteration"] for x, r in results.items()} == {1: 4, 2: 4, 3: 4}
    x_of = {r.metrics["trial_id"]: x for x, r in results.items()}
    assert [(x_of[t], i) for t, i in scheduler.turns] == TURNS_OF_THREE
    log = read_log(tmp_path / "exp")
    picks = [e.chosen for e in log.events if isinstance(e, SchedulerAnswered) and e.chose]
    assert picks  # logged: the replay resumes the same trials in the same order
    replayed = tune.replay(tmp_path / "exp", quiet=True).state
    assert all(t.status is TrialStatus.TERMINATED for t in replayed.trials.values())


class StopsOthers(RayFIFO):
    """Ray's NOOP after acting itself: the first trial to reach iteration 2
    stops every other live trial through the controller."""

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        if result["training_iteration"] == 2:
            for other in tune_controller.get_live_trials():
                if other.trial_id != trial.trial_id:
                    tune_controller.stop_trial(other)
            tune_controller.stop_trial(trial)
            return TrialScheduler.NOOP
        return TrialScheduler.CONTINUE


def test_stop_trial_on_the_controller_stops_trials(tmp_path: Path) -> None:
    results = fit(tmp_path, StopsOthers(), ONE_AT_A_TIME, x=tune.grid_search([1, 2]))
    iterations = [r.metrics.get("training_iteration") for r in results]
    assert sorted(iterations, key=str) == [2, None]  # the second never ran: stopped waiting
    assert all(r.error is None for r in results)


class Says(RayFIFO):
    def __init__(self, answer: object) -> None:
        super().__init__()
        self.answer = answer

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> Any:
        if self.answer == "raise":
            raise KeyError("no such metric")
        return self.answer


@pytest.mark.parametrize(
    ("answer", "said"),
    [("KEEP", "returned 'KEEP'"), (None, "returned None"), ("raise", "KeyError")],
)
def test_a_scheduler_that_fails_ends_the_experiment_with_its_error(
    tmp_path: Path, answer: object, said: str
) -> None:
    with pytest.raises(TuneError, match="The scheduler failed") as raised:
        fit(tmp_path, Says(answer), x=1)
    assert said in str(raised.value)
    grid = tune.ResultGrid.from_path(tmp_path / "exp")  # what was recorded is kept
    assert grid[0].metrics["training_iteration"] == 1


def test_a_restore_rebuilds_it_by_calling_its_hooks_over_the_log(tmp_path: Path) -> None:
    # One at a time: x=1 fails after its first result; x=3 runs to its end,
    # which ends the experiment, so its completion is heard but not logged.
    marker = str(tmp_path / "failed")
    first = StopBelow(threshold=5)
    results = by_x(
        fit(tmp_path, first, ONE_AT_A_TIME, x=tune.grid_search([1, 3]), fail_once=marker)
    )
    assert [r.error is not None for _, r in sorted(results.items())] == [True, False]
    with pytest.raises(ValueError, match=r"your StopBelow .*scheduler=\.\.\."):
        Tuner.restore(str(tmp_path / "exp"), ONE_AT_A_TIME, resume_errored=True).fit()
    again = StopBelow(threshold=5)
    restored = Tuner.restore(
        str(tmp_path / "exp"), ONE_AT_A_TIME, resume_errored=True, scheduler=again
    )
    final = by_x(restored.fit())
    assert all(r.error is None for r in final.values())
    assert again.heard[: len(first.heard)] == first.heard  # rebuilt as it stood
    assert len(again.heard) > len(first.heard)  # then went on
    completed = [entry[1] for entry in again.heard if entry[0] == "complete"]
    assert sorted(completed) == sorted(r.metrics["trial_id"] for r in final.values())  # once each


def test_a_rebuilt_scheduler_that_answers_otherwise_warns(tmp_path: Path) -> None:
    # One at a time: x=1 fails after its first result, then x=3 runs on,
    # logged CONTINUE at its grace where the threshold of 100 says STOP.
    marker = str(tmp_path / "failed")
    fit(
        tmp_path,
        StopBelow(threshold=5),
        ONE_AT_A_TIME,
        x=tune.grid_search([1, 3]),
        fail_once=marker,
    )
    restored = Tuner.restore(
        str(tmp_path / "exp"),
        ONE_AT_A_TIME,
        resume_errored=True,
        scheduler=StopBelow(threshold=100),
    )
    with pytest.warns(SchedulerResumeWarning, match="logged CONTINUE for trial .*; now STOP"):
        restored.fit()


def test_the_core_holds_its_place_and_pending_trials_start_as_in_ray(tmp_path: Path) -> None:
    """As in Ray, a pending trial starts whatever `choose_trial_to_run`
    says: the pick only goes first (and is the only way a paused trial
    runs again)."""

    class OwnMetric(RayFIFO):
        def __init__(self) -> None:
            super().__init__()
            self._metric = "score"

        def choose_trial_to_run(self, tune_controller: Any) -> Any:
            return None

    assert fit(tmp_path, OwnMetric(), x=1)[0].metrics["training_iteration"] == 4
    scheduler = tune.replay(tmp_path / "exp", quiet=True).state.scheduler
    assert isinstance(scheduler, ImperativeScheduler)
    assert (scheduler.name, scheduler.chooses, scheduler.metric) == (
        OwnMetric.__qualname__,
        True,
        "score",
    )


class AshaInRaysStyle(ASHAScheduler):  # type: ignore[misc]  # Ray's style, on purpose
    def on_trial_result(self, tune_controller: Any, trial: Any, result: Any) -> Any:  # type: ignore[override]
        return super().on_trial_result(tune_controller, trial, result)


class OldRunner(ASHAScheduler):  # type: ignore[misc]
    def on_trial_add(self, trial_runner: Any, trial: Any) -> None:  # type: ignore[override]
        pass


@pytest.mark.parametrize(
    ("scheduler", "hook"),
    [(AshaInRaysStyle(), "on_trial_result"), (OldRunner(), "on_trial_add")],
)
def test_a_ray_style_subclass_of_a_pure_policy_is_refused_naming_it(
    scheduler: object, hook: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        TuneConfig(scheduler=scheduler)
    text = str(raised.value)
    assert f"{type(scheduler).__qualname__}.{hook}(self, tune_controller" in text
    assert "Subclass tunecore.schedulers.FIFOScheduler" in text


def test_a_resource_changing_scheduler_around_one_is_refused_naming_it() -> None:
    wrapped = ResourceChangingScheduler(base_scheduler=StopBelow(1))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"base_scheduler=StopBelow\(\.\.\.\)"):
        TuneConfig(scheduler=wrapped)


def test_tune_run_refuses_it_too(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"AshaInRaysStyle\.on_trial_result"):
        tune.run(lambda config: None, scheduler=AshaInRaysStyle(), storage_path=str(tmp_path))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "scheduler", [FIFOScheduler(), ASHAScheduler(metric="loss", mode=Mode.MIN), StopBelow(1), None]
)
def test_the_others_pass(scheduler: object) -> None:
    assert TuneConfig(scheduler=scheduler).scheduler is scheduler


def test_fifo_scheduler_itself_is_the_pure_policy_and_both_names_are_rays() -> None:
    assert FIFOScheduler is RayFIFO  # type: ignore[comparison-overlap]  # typed as what it builds
    assert type(FIFOScheduler()) is PureFIFO
    assert isinstance(FIFOScheduler(), FIFOScheduler)
    assert isinstance(StopBelow(1), FIFOScheduler)
    assert isinstance(StopBelow(1), TrialScheduler)
    assert (TrialScheduler.CONTINUE, TrialScheduler.PAUSE, TrialScheduler.STOP) == (
        "CONTINUE",
        "PAUSE",
        "STOP",
    )


class PausesEveryOther(FIFOScheduler, frozen=True, tag=True):  # tunecore's style, as before
    pass


def test_a_subclass_in_tunecores_style_is_still_a_pure_policy() -> None:
    assert issubclass(PausesEveryOther, PureFIFO)


class TwoConfigs(tune.search.Searcher):
    """A searcher object of the user's: its suggestion is answered in the
    same step as the scheduler object's notes."""

    def __init__(self) -> None:
        super().__init__(metric="score", mode="max")
        self.suggested = 0

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        if self.suggested == 2:
            return tune.search.Searcher.FINISHED
        self.suggested += 1
        return {"steps": 3, "x": self.suggested}


def test_with_a_searcher_object_each_hook_is_heard_once(tmp_path: Path) -> None:
    # The searcher's suggestion adds a trial in the step after a completion:
    # the scheduler's answer telling that completion must be fed first, or
    # the object hears the completion again.
    scheduler = StopBelow(threshold=0)
    Tuner(
        climb,
        tune_config=TuneConfig(
            metric="score",
            mode="max",
            scheduler=scheduler,
            search_alg=TwoConfigs(),
            num_samples=2,
            max_concurrent_trials=1,
        ),
        run_config=RunConfig(
            name="exp", storage_path=str(tmp_path), executor="in_process", verbose=0
        ),
    ).fit()
    hooks = [entry[:2] for entry in scheduler.heard if entry[0] != "result"]
    first, second = dict.fromkeys(trial_id for _, trial_id in hooks)
    assert hooks == [("add", first), ("complete", first), ("add", second), ("complete", second)]


def test_an_object_that_is_no_scheduler_is_refused_where_it_is_passed() -> None:
    """Before, it failed in fit() with an AttributeError (`with_objective`)."""
    with pytest.raises(ValueError, match=r"TuneConfig.scheduler=5 is invalid: expected one of"):
        TuneConfig(scheduler=5)


def test_ray_tune_s_own_scheduler_is_refused_naming_tunecore_s() -> None:
    """A library built on Ray Tune builds Ray's scheduler objects, in code
    no import rewriting reaches: the error names Ray's class and tunecore's."""
    pytest.importorskip("fsspec")  # ray.tune needs it; ray[tune], which tunecore depends on, has it
    ray_schedulers = pytest.importorskip("ray.tune.schedulers")
    with pytest.raises(ValueError, match="is Ray Tune's own scheduler class") as error:
        TuneConfig(scheduler=ray_schedulers.MedianStoppingRule(metric="score", mode="max"))
    assert "tunecore.schedulers.MedianStoppingRule(...)" in str(error.value)
