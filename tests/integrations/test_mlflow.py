"""`tunecore.integrations.mlflow` against a SQLite tracking store in a
temporary directory: what each trial's run holds, and that a driver
SIGKILLed twice and resumed leaves one run per trial with every result
in it exactly once (`mlflow_driver`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient  # noqa: E402 - only with mlflow installed

from tests.integrations import mlflow_driver  # noqa: E402
from tunecore.integrations.mlflow import MLflowLoggerCallback, setup_mlflow  # noqa: E402
from tunecore.model import InvalidFieldError  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tracking_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite store for the module (making its tables takes seconds);
    each test logs into an experiment of its own."""
    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow')}/mlflow.db"
    MlflowClient(uri).search_experiments()
    return uri


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow keeps a SQLite store's artifacts in `./mlruns`; the experiment
    an earlier test (or script) made active is not this test's
    (`mlflow.set_experiment` leaves it in MLFLOW_EXPERIMENT_ID)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)


def runs_of(uri: str, experiment: str) -> list[Any]:
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no experiment {experiment!r}"
    return list(client.search_runs([found.experiment_id]))


def steps(uri: str, run: Any, key: str) -> list[int]:
    return sorted(m.step for m in MlflowClient(uri).get_metric_history(run.info.run_id, key))


def fit(tmp_path: Path, train: Any, callbacks: list[Any], **run_config: Any) -> tune.ResultGrid:
    """Two trials, one after the other."""
    return tune.Tuner(
        train,
        param_space={"x": tune.grid_search([1, 2]), "nested": {"lr": 0.1}},
        tune_config=tune.TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            executor="in_process",
            verbose=0,
            callbacks=callbacks,
            **run_config,
        ),
    ).fit()


def three_steps(config: dict[str, Any]) -> None:
    for step in range(1, 4):
        tune.report({"loss": config["x"] * step, "info": {"text": "not a number", "n": step}})


def test_each_trial_is_one_run_with_its_config_results_and_status(
    tmp_path: Path, tracking_uri: str
) -> None:
    def fails_for_two(config: dict[str, Any]) -> None:
        three_steps(config)
        if config["x"] == 2:
            raise RuntimeError("boom")

    callback = MLflowLoggerCallback(
        tracking_uri=tracking_uri, experiment_name="plain", tags={"team": "core"}
    )
    fit(tmp_path, fails_for_two, [callback])
    runs = {run.data.params["x"]: run for run in runs_of(tracking_uri, "plain")}
    assert sorted(runs) == ["1", "2"]
    for x, run in runs.items():
        assert run.data.params == {"x": x, "nested/lr": "0.1"}
        assert run.data.tags["team"] == "core"
        assert run.data.tags["trial_name"] == run.info.run_name
        assert "fails_for_two_" in run.info.run_name
        assert steps(tracking_uri, run, "loss") == [1, 2, 3]
        assert steps(tracking_uri, run, "training_iteration") == [1, 2, 3]
        assert "info/n" in run.data.metrics
        assert "info/text" not in run.data.metrics
        assert "trial_id" not in run.data.metrics
    assert runs["1"].info.status == "FINISHED"
    assert runs["2"].info.status == "FAILED"
    assert runs["1"].data.metrics["loss"] == 3.0
    # The callback set the process's tracking URI, as Ray's does.
    assert mlflow.get_tracking_uri() == tracking_uri


def test_params_at_the_end_and_the_trial_directory_as_artifacts(
    tmp_path: Path, tracking_uri: str
) -> None:
    seen: dict[str, Any] = {}

    class ParamsWhileRunning(tune.Callback):
        def on_trial_result(self, iteration: int, trials: Any, trial: Any, result: Any) -> None:
            for run in runs_of(tracking_uri, "at_end"):
                if run.data.tags["trial_id"] == trial.trial_id:
                    seen.setdefault(trial.trial_id, dict(run.data.params))

    callback = MLflowLoggerCallback(
        tracking_uri=tracking_uri,
        experiment_name="at_end",
        save_artifact=True,
        log_params_on_trial_end=True,
    )
    fit(tmp_path, three_steps, [callback, ParamsWhileRunning()])
    assert list(seen.values()) == [{}, {}]
    client = MlflowClient(tracking_uri)
    for run in runs_of(tracking_uri, "at_end"):
        assert run.data.params["nested/lr"] == "0.1"
        artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
        assert {"result.json", "params.json", "progress.csv"} <= artifacts


def test_timesteps_total_is_the_step_when_reported(tmp_path: Path, tracking_uri: str) -> None:
    def by_timesteps(config: dict[str, Any]) -> None:
        for step in range(1, 3):
            tune.report({"loss": 1.0, "timesteps_total": 100 * step})

    fit(tmp_path, by_timesteps, [MLflowLoggerCallback(tracking_uri, experiment_name="ts")])
    for run in runs_of(tracking_uri, "ts"):
        assert steps(tracking_uri, run, "loss") == [100, 200]


def assert_one_finished_run_per_trial_with_each_result_once(
    uri: str, experiment: str, trials: int
) -> None:
    """What a kill test leaves (the drivers' trainable: loss x + 1 / step)."""
    runs = runs_of(uri, experiment)
    trial_ids = Counter(run.data.tags["trial_id"] for run in runs)
    assert len(trial_ids) == trials
    assert set(trial_ids.values()) == {1}, f"more than one run for a trial: {trial_ids}"
    every_step = list(range(1, mlflow_driver.ITERATIONS + 1))
    client = MlflowClient(uri)
    for run in runs:
        assert run.info.status == "FINISHED"
        x = float(run.data.params["x"])
        for key in ("loss", "training_iteration"):
            assert steps(uri, run, key) == every_step, (key, run.data.params)
        losses = {m.step: m.value for m in client.get_metric_history(run.info.run_id, "loss")}
        assert losses == pytest.approx({step: x + 1.0 / step for step in every_step})


def test_a_driver_killed_twice_and_resumed_logs_each_result_once(
    tmp_path: Path, tracking_uri: str
) -> None:
    def drive(phase: str) -> int:
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
        driver = [sys.executable, "-m", "tests.integrations.mlflow_driver"]
        return subprocess.run(
            [*driver, str(tmp_path), tracking_uri, phase],
            env=env,
            cwd=tmp_path,
            timeout=300,
            check=False,
        ).returncode

    # Dies after its 7th result reached MLflow, before the log held it.
    assert drive("first") == -9
    after_first = runs_of(tracking_uri, mlflow_driver.EXPERIMENT)
    logged = sum(len(steps(tracking_uri, run, "loss")) for run in after_first)
    assert logged == mlflow_driver.KILL_AFTER_RESULTS
    # Dies as a trial ends, before MLflow heard of the end.
    assert drive("second") == -9
    assert any(run.info.status == "RUNNING" for run in runs_of(tracking_uri, "killed"))
    assert drive("last") == 0

    assert_one_finished_run_per_trial_with_each_result_once(
        tracking_uri, mlflow_driver.EXPERIMENT, len(mlflow_driver.XS)
    )


@pytest.mark.parametrize("hold", ["all", "none"])
def test_an_ended_trial_the_tracker_lacks_is_caught_up_on_resume(tmp_path: Path, hold: str) -> None:
    """`tracker_driver` with a SQLite store of its own: the first driver
    dies once the first trial's end is logged, with the callback (`all`: MLflow has the
    whole trial, and no resume logs it again) or without it (`none`: the
    resumed driver logs the ended trial's results from its result.json,
    once, and ends its run); the second dies amid the second trial."""
    from tests.integrations import tracker_driver  # noqa: PLC0415

    store = f"sqlite:///{tmp_path}/mlflow.db"

    def drive(phase: str) -> int:
        return tracker_driver.drive("mlflow", tmp_path, store, phase, hold)

    assert drive("first") == -9
    if hold == "none":
        assert MlflowClient(store).get_experiment_by_name(tracker_driver.PROJECT) is None
    else:  # the first trial's run holds it all (the second's may have started)
        (ended,) = [
            run
            for run in runs_of(store, tracker_driver.PROJECT)
            if float(run.data.params["x"]) == tracker_driver.ENDED_X
        ]
        assert steps(store, ended, "loss") == list(range(1, mlflow_driver.ITERATIONS + 1))
    assert drive("second") == -9
    assert drive("last") == 0

    assert_one_finished_run_per_trial_with_each_result_once(
        store, tracker_driver.PROJECT, len(tracker_driver.XS)
    )


def test_restoring_a_finished_experiment_catches_its_trials_up_once(
    tmp_path: Path, tracking_uri: str
) -> None:
    """A finished experiment's restore runs nothing, but a tracker that
    lacks its trials (here: never given them) gets each result once, and
    a second restore adds nothing."""
    fit(tmp_path, three_steps, [])

    def restore() -> list[Any]:
        callback = MLflowLoggerCallback(tracking_uri=tracking_uri, experiment_name="late")
        tune.Tuner.restore(str(tmp_path / "exp"), three_steps, callbacks=[callback]).fit()
        return runs_of(tracking_uri, "late")

    for runs in (restore(), restore()):
        assert sorted(float(run.data.params["x"]) for run in runs) == [1.0, 2.0]
        for run in runs:
            assert run.info.status == "FINISHED"
            assert steps(tracking_uri, run, "loss") == [1, 2, 3]
            assert steps(tracking_uri, run, "training_iteration") == [1, 2, 3]


def test_setup_mlflow_in_a_trial_continues_its_run_after_a_restart(
    tmp_path: Path, tracking_uri: str
) -> None:
    client = MlflowClient(tracking_uri)
    client.create_experiment("in_trial")
    failed = tmp_path / "failed"

    def train(config: dict[str, Any]) -> None:
        tracker = setup_mlflow(config, experiment_name="in_trial", tracking_uri=tracking_uri)
        start = 0 if tune.get_checkpoint() is None else 2
        for step in range(start + 1, 4):
            tracker.log_metric("own", step, step=step)
            if step == 2:
                with tune.checkpoint_dir(step) as directory:
                    Path(directory, "step").write_text("2")
            tune.report({"loss": float(step)})
            if step == 2 and config["x"] == 1 and not failed.exists():
                failed.touch()
                raise RuntimeError("the node went away")

    grid = fit(tmp_path, train, [], failure_config=tune.FailureConfig(max_failures=1))
    assert not grid.errors
    runs = runs_of(tracking_uri, "in_trial")
    assert len(runs) == 2
    for run in runs:
        assert steps(tracking_uri, run, "own") == [1, 2, 3]
        assert run.data.params["nested/lr"] == "0.1"
        assert run.info.run_name == "in_trial"


def test_setup_mlflow_refuses_a_missing_experiment_unless_asked_to_make_it(
    tracking_uri: str,
) -> None:
    with pytest.raises(ValueError, match=r"experiment_name='nowhere'.*create_experiment"):
        setup_mlflow({}, experiment_name="nowhere", tracking_uri=tracking_uri)
    tracker = setup_mlflow(
        {"a": 1},
        experiment_name="made",
        tracking_uri=tracking_uri,
        create_experiment_if_not_exists=True,
    )
    try:
        active = tracker.active_run()
        assert active is not None
        run = MlflowClient(tracking_uri).get_run(active.info.run_id)
        assert run.data.params == {"a": "1"}
    finally:
        tracker.end_run()


def test_bad_arguments_name_the_field() -> None:
    with pytest.raises(InvalidFieldError, match=r"^MLflowLoggerCallback.experiment_name=3"):
        MLflowLoggerCallback(experiment_name=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidFieldError, match=r"^MLflowLoggerCallback.tags=\['a'\]"):
        MLflowLoggerCallback(tags=["a"])  # type: ignore[arg-type]


def test_without_mlflow_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)
    import tunecore.integrations  # noqa: PLC0415

    for name in ("mlflow", "_mlflow_runs"):
        monkeypatch.delitem(sys.modules, f"tunecore.integrations.{name}")
        monkeypatch.delattr(tunecore.integrations, name)
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[mlflow\]'"):
        import tunecore.integrations.mlflow  # noqa: PLC0415


def test_ray_tune_logger_mlflow_is_the_same_callback() -> None:
    from tunecore.logger.mlflow import MLflowLoggerCallback as FromLogger  # noqa: PLC0415

    assert FromLogger is MLflowLoggerCallback
