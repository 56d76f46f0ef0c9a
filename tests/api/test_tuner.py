"""The public API, run end to end on the in-process executor (no Ray)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pydantic
import pytest

import tunecore
from tunecore import (
    CheckpointConfig,
    FailureConfig,
    ResultGrid,
    RunConfig,
    TuneConfig,
    Tuner,
)
from tunecore.model import JsonDict, TrialStatus
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial


def fit(trainable: object, tmp_path: Path, space: dict[str, object], **tune: object) -> ResultGrid:
    run_keys = {
        "stop",
        "callbacks",
        "log_to_file",
        "failure_config",
        "checkpoint_config",
        "export_formats",
    }
    run = RunConfig(
        name="api",
        storage_path=str(tmp_path),
        verbose=0,
        executor="in_process",
        **{k: v for k, v in tune.items() if k in run_keys},  # type: ignore[arg-type]
    )
    config = TuneConfig(**{k: v for k, v in tune.items() if k not in run_keys})  # type: ignore[arg-type]
    return Tuner(trainable, param_space=space, tune_config=config, run_config=run).fit()  # type: ignore[arg-type]


def reports_context(config: dict[str, object]) -> None:
    context = tunecore.get_context()
    print("hello from", context.trial_id)
    tunecore.report(
        {"name": context.trial_name, "cwd": os.getcwd(), "score": float(str(config["x"]))}
    )


# -- validation --------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "field", "value"),
    [
        (lambda: TuneConfig(num_samples=0), "num_samples", "0"),
        (lambda: TuneConfig(mode="up"), "mode", "'up'"),  # type: ignore[arg-type]
        (lambda: TuneConfig(max_concurrent_trials=0), "max_concurrent_trials", "0"),
        (lambda: FailureConfig(max_failures=-2), "max_failures", "-2"),
        (lambda: CheckpointConfig(num_to_keep=0), "num_to_keep", "0"),
        (lambda: RunConfig(verbose=7), "verbose", "7"),
        (lambda: RunConfig(name="a/../b"), "name", "'a/../b'"),
        (lambda: RunConfig(name="/abs/b"), "name", "'/abs/b'"),
        (lambda: RunConfig(export_formats=["tflite"]), "export_formats", "'tflite'"),
    ],
)
def test_bad_settings_name_the_field_and_the_value(build: object, field: str, value: str) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        build()  # type: ignore[operator]
    message = str(caught.value)
    assert field in message
    assert value in message


def test_a_nested_name_is_the_experiment_directory_under_the_storage_path(tmp_path: Path) -> None:
    """Ray 2.60 takes `RunConfig(name="project/128/run-1")` as nested
    directories under `storage_path`: the experiment is restorable there."""
    run = RunConfig(
        name="node2vec/128/run-1", storage_path=str(tmp_path), verbose=0, executor="in_process"
    )
    results = Tuner(reports_context, param_space={"x": 1}, run_config=run).fit()
    experiment_dir = tmp_path / "node2vec" / "128" / "run-1"
    assert [r.path.parent for r in results] == [experiment_dir]
    assert Tuner.can_restore(experiment_dir)
    assert RunConfig(storage_path="s3://bucket/runs", name="a/b").storage_path == (
        "s3://bucket/runs/a"
    )


def test_a_nested_stopping_criterion_is_refused_with_the_flat_spelling() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"join the keys with '/'.*'val/loss'"):
        RunConfig(stop={"val": {"loss": 0.1}})


# -- options ---------------------------------------------------------------------


def test_name_and_dirname_creators_shape_what_users_see(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def name(trial: Trial) -> str:
        return f"custom-{trial.config['x']}"

    def dirname(trial: Trial) -> str:
        return f"dir-{trial.config['x']}"

    results = fit(
        reports_context,
        tmp_path,
        {"x": tunecore.grid_search([1, 2])},
        trial_name_creator=name,
        trial_dirname_creator=dirname,
        metric="score",
        mode="max",
    )
    assert sorted(str(r.metrics["name"]) for r in results) == ["custom-1", "custom-2"]
    assert sorted(r.path.name for r in results) == ["dir-1", "dir-2"]
    assert all((r.path / "result.json").exists() for r in results)


def test_log_to_file_captures_output_and_chdir_runs_in_the_trial_dir(tmp_path: Path) -> None:
    start = os.getcwd()
    results = fit(
        reports_context,
        tmp_path,
        {"x": 1},
        log_to_file=True,
        chdir_to_trial_dir=True,
    )
    (result,) = results
    assert result.metrics["cwd"] == str(result.path)
    assert os.getcwd() == start  # the worker gave the directory back
    assert (result.path / "stdout").read_text().startswith(f"hello from {result.trial_id}")


class Exploding(Callback):
    def on_trial_result(self, *args: object) -> None:
        raise RuntimeError("a broken callback")


def test_a_callback_that_raises_does_not_stop_the_experiment(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    results = fit(reports_context, tmp_path, {"x": 3}, callbacks=[Exploding()])
    assert [r.status for r in results] == [TrialStatus.TERMINATED]
    assert "a broken callback" in caplog.text


def test_results_pick_the_best_and_make_a_dataframe(tmp_path: Path) -> None:
    results = fit(
        reports_context,
        tmp_path,
        {"x": tunecore.grid_search([3, 1, 2])},
        metric="score",
        mode="max",
    )
    assert results.get_best_result().config == {"x": 3}
    assert results.get_best_result(mode="min").config == {"x": 1}
    frame = results.get_dataframe()
    assert sorted(frame["config/x"]) == [1, 2, 3]
    assert set(frame["score"]) == {1.0, 2.0, 3.0}
    with pytest.raises(ValueError, match="no trial reported a number for metric 'nope'"):
        results.get_best_result(metric="nope", mode="max")
    # Ray Tune raises RuntimeError there: a script catching that goes on here too.
    with pytest.raises(RuntimeError, match="no trial reported a number for metric 'nope'"):
        results.get_best_result(metric="nope", mode="max")


@pytest.mark.usefixtures("ray_cluster")
def test_run_is_the_short_form_on_ray(tmp_path: Path) -> None:
    analysis = tunecore.run(  # Ray's tune.run: an ExperimentAnalysis
        reports_context,
        config={"x": tunecore.grid_search([5, 6])},
        metric="score",
        mode="max",
        storage_path=str(tmp_path),
        verbose=0,
        name="short",
    )
    assert analysis.best_config == {"x": 6}
    assert analysis.best_trial is not None
    params = json.loads(Path(analysis.best_trial.path or "", "params.json").read_text())
    assert params == {"x": 6}


class Exporter(tunecore.Trainable):
    def setup(self, config: JsonDict) -> None:
        self.weights = 0

    def step(self) -> JsonDict:
        self.weights += 1
        return {"done": self.weights >= 2}

    def save_checkpoint(self, checkpoint_dir: str) -> dict[str, int]:
        return {"weights": self.weights}

    def export_model(self, export_formats: list[str], export_dir: str) -> dict[str, str]:
        path = Path(export_dir) / "model.txt"
        path.write_text(f"weights={self.weights}")
        return {"model": str(path)}


def test_export_formats_are_written_when_a_trial_ends(tmp_path: Path) -> None:
    results = fit(Exporter, tmp_path, {}, export_formats=[" Model ", "checkpoint"])
    (result,) = results
    export = result.path / "export"
    assert (export / "model.txt").read_text() == "weights=2"
    state = json.loads((export / "checkpoint" / "checkpoint_state.json").read_text())
    assert state == {"weights": 2}


def test_in_process_trials_run_where_the_driver_is_unless_asked(tmp_path: Path) -> None:
    """A directory change moves the whole process: in process, only when
    `chdir_to_trial_dir=True` (the Ray default does not apply)."""
    (result,) = fit(reports_context, tmp_path, {"x": 1})
    assert result.metrics["cwd"] == os.getcwd()


def needs_data(config: dict[str, object], data: object) -> None:
    tunecore.report({"data": str(data)})


def test_a_function_that_needs_its_parameters_fails_at_fit_not_before(tmp_path: Path) -> None:
    """Ray's data tutorial builds `Tuner(training_function)` for a function
    of `(config, data)` before wrapping it in `with_parameters`: Ray builds
    that Tuner, and fails only if it runs. So does tunecore, naming the
    parameters."""
    run = RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process")
    bare = Tuner(needs_data, run_config=run)
    with pytest.raises(ValueError, match=r"has the parameters \(config, data\)"):
        bare.fit()
    wrapped = Tuner(tunecore.with_parameters(needs_data, data=7), run_config=run)
    (result,) = wrapped.fit()
    assert result.metrics["data"] == "7"


class Hooks(Callback):
    """Records `setup`'s arguments and the hooks of a retried trial."""

    def __init__(self) -> None:
        self.setups: list[dict[str, object]] = []
        self.calls: list[str] = []

    def setup(
        self,
        stop: object = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: object,
    ) -> None:
        called = {"stop": stop, "num_samples": num_samples, "total_num_samples": total_num_samples}
        self.setups.append({**called, **info})

    def on_trial_start(self, iteration: int, trials: object, trial: object) -> None:
        self.calls.append("start")

    def on_trial_recover(self, iteration: int, trials: object, trial: object) -> None:
        self.calls.append("recover")

    def on_trial_complete(self, iteration: int, trials: object, trial: object) -> None:
        self.calls.append("complete")


def fails_first(config: dict[str, object]) -> None:
    """The first attempt of all the trials sharing the marker fails: made
    atomically, as two trials run at once (checking, then creating, let
    both fail now and then)."""
    try:
        Path(str(config["marker"])).touch(exist_ok=False)
    except FileExistsError:
        tunecore.report({"score": 1.0})
        return
    raise RuntimeError("the first attempt fails")


def test_setup_is_called_once_and_a_retry_started_at_once_is_a_recovery(tmp_path: Path) -> None:
    """Ray calls `Callback.setup(stop=, num_samples=, total_num_samples=)`
    as the experiment starts, and `on_trial_recover` for a trial that will
    be retried, also when it restarts in the same turn (resources free)."""
    hooks = Hooks()
    space = {"marker": str(tmp_path / "failed_once"), "x": tunecore.grid_search([1])}
    results = fit(
        fails_first,
        tmp_path,
        space,
        callbacks=[hooks],
        stop={"training_iteration": 5},
        failure_config=FailureConfig(max_failures=1),
        num_samples=2,
    )
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 2
    assert hooks.setups == [
        {"stop": {"training_iteration": 5}, "num_samples": 2, "total_num_samples": 2}
    ]
    assert sorted(hooks.calls) == ["complete", "complete", "recover", "start", "start", "start"]
    assert hooks.calls.index("recover") < len(hooks.calls) - 1 - hooks.calls[::-1].index("start")
