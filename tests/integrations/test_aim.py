"""`tunecore.logger.aim` against a local Aim repo: what each trial's run
holds, and that a driver SIGKILLed twice and resumed leaves one run per
trial holding every result exactly once (`tracker_driver`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune

pytest.importorskip("aim")

from aim.sdk import Repo, Run

from tests.integrations import tracker_driver
from tests.integrations.mlflow_driver import ITERATIONS
from tunecore.logger.aim import AimLoggerCallback
from tunecore.model import InvalidFieldError

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
QUIET: dict[str, Any] = {"system_tracking_interval": None, "capture_terminal_logs": False}


def runs_in(repo: Path) -> list[Run]:
    """Every run of the repo, opened for reading (also one a killed process
    never closed: Aim reads what it wrote only in write mode)."""
    return [
        Run(run_hash=h, repo=str(repo), **QUIET) for h in Repo.from_path(str(repo)).list_all_runs()
    ]


def tracked(run: Run) -> dict[str, dict[int, Any]]:
    """Each metric of the run: its value at each step."""
    found: dict[str, dict[int, Any]] = {}
    for metric in run.metrics():
        steps, (values, *_) = metric.data.items_list()
        found[metric.name] = dict(zip(steps, values, strict=True))
    return found


def test_each_trial_is_one_run_with_its_params_and_results(tmp_path: Path) -> None:
    def train(config: dict[str, Any]) -> None:
        for step in range(1, 4):
            tune.report({"loss": config["x"] * step, "info": {"n": step}, "bad": float("nan")})

    tune.Tuner(
        train,
        param_space={
            "x": tune.grid_search([1, 2]),
            "nested": {"lr": tune.grid_search([0.1])},
            "fixed": 3,
        },
        tune_config=tune.TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            executor="in_process",
            verbose=0,
            callbacks=[AimLoggerCallback(**QUIET)],
        ),
    ).fit()
    # No repo given: one in the experiment's directory, as in Ray.
    runs = runs_in(tmp_path / "exp")
    assert len(runs) == 2
    for run in runs:
        assert run.experiment == "exp"
        x = run["hparams"]["x"]
        # The searched parameters, as Ray's: not the fixed ones.
        assert run["hparams"] == {"x": x, "nested/lr": 0.1}
        assert run["trial_log_dir"].startswith(str(tmp_path / "exp"))
        metrics = tracked(run)
        assert metrics["ray/tune/loss"] == {1: x, 2: 2 * x, 3: 3 * x}
        assert metrics["ray/tune/info/n"] == {1: 1, 2: 2, 3: 3}
        for left_out in ("training_iteration", "time_total_s", "pid", "bad", "config/x"):
            assert f"ray/tune/{left_out}" not in metrics
        run.close()


def test_only_the_metrics_asked_for(tmp_path: Path) -> None:
    def train(config: dict[str, Any]) -> None:
        tune.report({"loss": 1.0, "acc": 0.5, "timesteps_total": 100})

    tune.Tuner(
        train,
        run_config=tune.RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            executor="in_process",
            verbose=0,
            callbacks=[
                AimLoggerCallback(
                    repo=str(tmp_path / "aim"), experiment_name="mine", metrics=["acc"], **QUIET
                )
            ],
        ),
    ).fit()
    (run,) = runs_in(tmp_path / "aim")
    assert run.experiment == "mine"
    assert {n: v for n, v in tracked(run).items() if n.startswith("ray/")} == {
        "ray/tune/acc": {100: 0.5}
    }
    run.close()


@pytest.mark.parametrize("hold", ["all", "none"])
def test_a_driver_killed_twice_and_resumed_logs_each_result_once(tmp_path: Path, hold: str) -> None:
    """With the tracker from the start (`all`), or without it in the first
    driver (`none`): the resumed driver, with Aim, catches up the run of
    the trial that ended inside the killed driver, which never starts
    again (`TrackerCallback.on_experiment_restore`). Before, that trial
    had no run."""
    repo = tmp_path / "aim"

    def drive(phase: str) -> int:
        return tracker_driver.drive("aim", tmp_path, str(repo), phase, hold)

    assert drive("first") == -9
    assert drive("second") == -9
    assert drive("last") == 0

    runs = runs_in(repo)
    trial_ids = [run["trial_id"] for run in runs]
    assert len(trial_ids) == len(tracker_driver.XS)
    assert len(set(trial_ids)) == len(trial_ids), f"more than one run for a trial: {trial_ids}"
    every_step = range(1, ITERATIONS + 1)
    for run in runs:
        x = run["hparams"]["x"]
        assert tracked(run)["ray/tune/loss"] == {
            step: pytest.approx(x + 1.0 / step) for step in every_step
        }
        run.close()


def test_bad_metrics_name_the_field() -> None:
    with pytest.raises(InvalidFieldError, match=r"^AimLoggerCallback.metrics=\[\]"):
        AimLoggerCallback(metrics=[])


def test_without_aim_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aim", None)
    monkeypatch.setitem(sys.modules, "aim.sdk", None)
    import tunecore.logger  # noqa: PLC0415

    monkeypatch.delitem(sys.modules, "tunecore.logger.aim")
    monkeypatch.delattr(tunecore.logger, "aim")
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[aim\]'"):
        import tunecore.logger.aim  # noqa: PLC0415
