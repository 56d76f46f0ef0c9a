"""Real experiments on a real (local) Ray, through the public API."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Self

import msgspec
import pytest

import tunecore
from tests.integration import trainables
from tunecore import CheckpointConfig, FailureConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.core.schedulers.base import CONTINUE, PAUSE, Verdict
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.model import JsonDict, TrialState, TrialStatus
from tunecore.schedulers import ASHAScheduler
from tunecore.shell.callbacks import Callback

pytestmark = pytest.mark.usefixtures("ray_cluster")


def fit(
    trainable: object,
    tmp_path: Path,
    *,
    space: dict[str, object] | None = None,
    executor: str = "ray",
    **tune: object,
) -> ResultGrid:
    run_keys = {"stop", "checkpoint_config", "failure_config"}
    run_config = RunConfig(
        name="it",
        storage_path=str(tmp_path),
        verbose=0,
        executor=executor,  # type: ignore[arg-type]
        **{k: v for k, v in tune.items() if k in run_keys},  # type: ignore[arg-type]
    )
    tune_config = TuneConfig(**{k: v for k, v in tune.items() if k not in run_keys})  # type: ignore[arg-type]
    tuner = Tuner(trainable, param_space=space, tune_config=tune_config, run_config=run_config)  # type: ignore[arg-type]
    return tuner.fit()


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_trials_run_to_completion_and_write_their_files(tmp_path: Path) -> None:
    results = fit(
        trainables.count_to,
        tmp_path,
        space={"steps": 3, "x": tunecore.grid_search([1, 2, 3, 4])},
        metric="loss",
        mode="min",
    )
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 4
    assert sorted(int(str(r.config["x"])) for r in results) == [1, 2, 3, 4]
    for result in results:
        logged = lines(result.path / "result.json")
        # Three reports, then the function returned: the final repeat is not logged.
        assert [line["training_iteration"] for line in logged] == [1, 2, 3]
        assert logged[-1]["loss"] == pytest.approx(1 / 3)
        assert json.loads((result.path / "params.json").read_text()) == result.config
        assert (result.path / "progress.csv").read_text().count("\n") == 4
        assert result.metrics["done"] is True
    assert results.get_best_result().metrics["loss"] == pytest.approx(1 / 3)


def test_the_class_api_runs_and_checkpoints_at_the_end(tmp_path: Path) -> None:
    results = fit(
        trainables.Counter,
        tmp_path,
        num_samples=2,
        checkpoint_config=CheckpointConfig(checkpoint_at_end=True),
    )
    for result in results:
        assert result.status is TrialStatus.TERMINATED
        assert result.metrics["count"] == 4
        assert result.checkpoint is not None
        assert Path(result.checkpoint.path).name == "checkpoint_000004"


class PauseFirstResult(FIFOScheduler, frozen=True, tag=True):
    """Pauses every trial at its first result, once; FIFO resumes them."""

    paused: tuple[str, ...] = ()

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        if trial.trial_id in self.paused:
            return self, CONTINUE
        return msgspec.structs.replace(self, paused=(*self.paused, trial.trial_id)), PAUSE


def test_pause_and_resume_continue_from_the_memory_checkpoint(tmp_path: Path) -> None:
    results = fit(
        trainables.checkpointing,
        tmp_path,
        space={"steps": 4},
        num_samples=3,
        scheduler=PauseFirstResult(),
    )
    for result in results:
        assert result.status is TrialStatus.TERMINATED
        logged = lines(result.path / "result.json")
        assert [line["count"] for line in logged] == [1, 2, 3, 4]
        # Paused after its first result, it resumed from that checkpoint.
        assert [line["resumed_from"] for line in logged] == [0, 1, 1, 1]
        assert [line["training_iteration"] for line in logged] == [1, 2, 3, 4]


def test_a_dead_worker_is_restored_from_its_last_checkpoint(tmp_path: Path) -> None:
    # Each worker dies the moment its step after a save begins: the save's
    # reply could still be on its way, and losing it would restore the
    # checkpoint before (count 2 twice, resumed from 1). Several trials
    # make that race likely, were the training not held behind the save.
    results = fit(
        trainables.dies_once_at,
        tmp_path,
        space={"steps": 5, "die_at": 3, "deaths": 1},
        num_samples=4,
        checkpoint_config=CheckpointConfig(checkpoint_frequency=1),
        failure_config=FailureConfig(max_failures=1),
    )
    assert len(results) == 4
    for result in results:
        assert result.status is TrialStatus.TERMINATED
        logged = lines(result.path / "result.json")
        assert [line["count"] for line in logged] == [1, 2, 3, 4, 5]
        assert [line["resumed_from"] for line in logged] == [0, 0, 2, 2, 2]
        error_log = (result.path / "error.txt").read_text()
        assert error_log.startswith("Failure # 1 (occurred at ")
        assert "died" in error_log


def test_a_worker_that_keeps_dying_ends_in_error_after_max_failures(tmp_path: Path) -> None:
    results = fit(
        trainables.dies_once_at,
        tmp_path,
        space={"steps": 5, "die_at": 2, "deaths": 10},
        failure_config=FailureConfig(max_failures=2),
    )
    (result,) = results
    assert result.status is TrialStatus.ERROR
    error_log = (result.path / "error.txt").read_text()
    assert [n for n in range(1, 5) if f"Failure # {n} " in error_log] == [1, 2, 3]


def test_a_trainable_that_raises_fails_with_its_traceback(tmp_path: Path) -> None:
    results = fit(trainables.raises, tmp_path, space={"x": 7})
    (result,) = results
    assert result.status is TrialStatus.ERROR
    assert result.error is not None
    assert "ValueError: bad value 7" in str(result.error)
    assert "ValueError: bad value 7" in (result.path / "error.txt").read_text()
    assert results.num_errors == 1


def test_reports_from_a_thread_the_function_started_are_the_trials(tmp_path: Path) -> None:
    results = fit(trainables.reports_from_a_thread, tmp_path, space={"steps": 3})
    (result,) = results
    assert result.status is TrialStatus.TERMINATED
    assert [r["loss"] for r in lines(result.path / "result.json")] == [0.0, 1.0, 2.0]


@pytest.mark.slow
def test_a_trial_that_exits_interrupts_itself_or_crashes_fails_alone(tmp_path: Path) -> None:
    """SystemExit, KeyboardInterrupt or a BaseException of the user's in a
    trial, or a segfault of its process, fail that trial, naming what
    happened; the others finish and the log replays."""
    kinds = ["SystemExit", "KeyboardInterrupt", "_TrialsOwnBaseException", "segfault", "ok"]
    results = fit(trainables.ends_badly, tmp_path, space={"how": tunecore.grid_search(kinds)})
    by_kind = {r.config["how"]: r for r in results}
    assert by_kind["ok"].status is TrialStatus.TERMINATED
    for kind in kinds[:-1]:
        assert by_kind[kind].status is TrialStatus.ERROR, kind
    for kind, named in [
        ("SystemExit", "SystemExit: 3"),
        ("KeyboardInterrupt", "\nKeyboardInterrupt\n"),
        ("_TrialsOwnBaseException", "_TrialsOwnBaseException: own"),
        ("segfault", "The actor is dead because its worker process has died"),
    ]:
        assert named in (by_kind[kind].path / "error.txt").read_text(), kind
    assert len(tunecore.replay(tmp_path / "it").state.trials) == len(kinds)


def test_a_trial_that_can_never_fit_gets_the_clear_error(tmp_path: Path) -> None:
    results = fit(trainables.count_to, tmp_path, space={"steps": 1}, resources_per_trial={"cpu": 4})
    (result,) = results
    assert result.status is TrialStatus.ERROR
    assert result.error is not None
    assert str(result.error).startswith(
        "Insufficient cluster resources to launch trial: the trial requested 4 CPUs, 0 GPUs "
        "but the whole cluster has 2 CPUs"
    )


class InterruptAtThirdResult(Callback):
    """Presses Ctrl-C (raises KeyboardInterrupt) in the middle of the run."""

    def __init__(self) -> None:
        self.results = 0

    def on_trial_result(self, *args: object) -> None:
        self.results += 1
        if self.results == 3:
            raise KeyboardInterrupt


def test_ctrl_c_ends_the_experiment_resumably_and_leaves_no_actor_behind(
    tmp_path: Path,
) -> None:
    import ray  # noqa: PLC0415

    tuner = Tuner(
        trainables.count_to,
        param_space={"steps": 1000},
        tune_config=TuneConfig(num_samples=4),
        run_config=RunConfig(
            name="ctrlc",
            storage_path=str(tmp_path),
            verbose=0,
            callbacks=[InterruptAtThirdResult()],
        ),
    )
    results = tuner.fit()
    assert results.experiment_error is None
    # Nothing is finished by an interrupt: every trial waits for a resume.
    assert {r.status for r in results} == {TrialStatus.PENDING}
    # Nobody ran to the end; trials still waiting at Ctrl-C never reported.
    assert all(r.metrics.get("training_iteration") != 1000 for r in results)
    assert any(r.metrics for r in results)
    # Killed actors give their CPUs back: wait for Ray to notice, bounded.
    deadline = time.monotonic() + 30
    while free_cpus(ray) < 2.0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert free_cpus(ray) == 2.0


def free_cpus(ray: ModuleType) -> float:
    # Ray leaves available_resources unannotated; it maps names to amounts.
    free: dict[str, float] = ray.available_resources()
    return free.get("CPU", 0.0)


def test_in_process_and_ray_make_the_same_decisions_for_the_same_event_order(
    tmp_path: Path,
) -> None:
    """With one CPU, trials run one after another, so both executors feed the
    core the same events in the same order: the outcomes must match."""
    outcomes = []
    for executor in ("ray", "in_process"):
        results = fit(
            trainables.count_to,
            tmp_path / executor,
            executor=executor,
            space={"steps": 6, "x": tunecore.grid_search([1, 2, 3, 4, 5, 6])},
            metric="loss",
            mode="min",
            resources_per_trial={"cpu": 2},
            scheduler=ASHAScheduler(max_t=6, grace_period=1, reduction_factor=2),
        )
        outcomes.append(
            [(r.config["x"], r.status, r.metrics["training_iteration"]) for r in results]
        )
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("executor", ["ray", "in_process"])
def test_a_final_save_that_fails_does_not_hold_back_the_end(tmp_path: Path, executor: str) -> None:
    """checkpoint_at_end and a save_checkpoint that raises: fit() returns,
    the trial keeps its results, and error.txt says what failed."""
    results = fit(
        trainables.SaveFails,
        tmp_path,
        executor=executor,
        num_samples=2,
        checkpoint_config=CheckpointConfig(checkpoint_at_end=True),
    )
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 2
    for result in results:
        assert result.metrics["training_iteration"] == 3
        assert result.checkpoint is None
        error_txt = (result.path / "error.txt").read_text()
        assert "The checkpoint taken as the trial ended failed" in error_txt
        assert "disk full" in error_txt
