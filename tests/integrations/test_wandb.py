"""`tunecore.integrations.wandb` with W&B offline (`WANDB_MODE=offline`).

An offline run keeps its history in its `.wandb` file, which W&B reads
back only through private code (its `sync` uploads it), so what each run
was given is watched at W&B's public calls instead: `wandb.init` is
wrapped to keep every run it makes, and each run's `log` and `finish` to
note what they were given, before the real call; the runs' directories
are checked on disk."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune

wandb = pytest.importorskip("wandb")
from tunecore.integrations.wandb import WandbLoggerCallback, setup_wandb  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)


class Watched:
    """Every run `wandb.init` made, with what was logged to it and how it
    finished."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[Any] = []
        self.logged: dict[str, list[dict[str, Any]]] = {}
        self.exit_codes: dict[str, int | None] = {}
        real_init = wandb.init

        def init(**kwargs: Any) -> Any:
            run = real_init(**kwargs)
            self.runs.append(run)
            real_log, real_finish = run.log, run.finish

            def log(data: dict[str, Any], *args: Any, **kw: Any) -> Any:
                self.logged.setdefault(run.id, []).append(dict(data))
                return real_log(data, *args, **kw)

            def finish(exit_code: int | None = None, **kw: Any) -> Any:
                self.exit_codes[run.id] = exit_code
                return real_finish(exit_code=exit_code, **kw)

            run.log, run.finish = log, finish
            return run

        monkeypatch.setattr(wandb, "init", init)


def fit(tmp_path: Path, train: Any, callbacks: list[Any]) -> tune.ResultGrid:
    return tune.Tuner(
        train,
        param_space={"x": tune.grid_search([1, 2])},
        tune_config=tune.TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            executor="in_process",
            verbose=0,
            callbacks=callbacks,
        ),
    ).fit()


def test_each_trial_is_one_run_with_its_config_results_and_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watched = Watched(monkeypatch)

    def train(config: dict[str, Any]) -> None:
        for step in range(1, 4):
            tune.report({"loss": config["x"] * step, "nested": {"n": step}, "text": "t"})
        if config["x"] == 2:
            raise RuntimeError("boom")

    grid = fit(tmp_path, train, [WandbLoggerCallback(project="tests", excludes=["nested"])])
    trials = {result.trial_id: result for result in grid}
    assert sorted(run.id for run in watched.runs) == sorted(trials)
    for run in watched.runs:
        result = trials[run.id]
        assert run.project == "tests"
        assert run.group == "exp"
        assert run.name.endswith(f"train_{run.id}")
        assert run.config["x"] == result.config["x"]
        assert run.config["trial_log_path"] == result.path
        assert run.config["trial_id"] == run.id  # AUTO_CONFIG_KEYS go to the config
        logged = watched.logged[run.id]
        assert [entry["training_iteration"] for entry in logged] == [1, 2, 3]
        x = run.config["x"]
        assert [entry["loss"] for entry in logged] == [x, 2 * x, 3 * x]
        for entry in logged:
            assert not {"done", "text", "trial_id", "hostname", "nested/n"} & set(entry)
        # The run's files are in the trial's directory, named by its id.
        assert list(Path(result.path or "").glob(f"wandb/offline-run-*-{run.id}"))
    exit_codes = {trials[i].config["x"]: code for i, code in watched.exit_codes.items()}
    assert exit_codes == {1: 0, 2: 1}


def test_a_trial_restarted_by_the_same_driver_keeps_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watched = Watched(monkeypatch)
    failed = tmp_path / "failed"

    def train(config: dict[str, Any]) -> None:
        for step in range(1, 3):
            tune.report({"loss": float(step)})
        if config["x"] == 1 and not failed.exists():
            failed.touch()
            raise RuntimeError("the node went away")

    tuner = tune.Tuner(
        train,
        param_space={"x": 1},
        tune_config=tune.TuneConfig(metric="loss", mode="min"),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            executor="in_process",
            verbose=0,
            callbacks=[WandbLoggerCallback(project="tests")],
            failure_config=tune.FailureConfig(max_failures=1),
        ),
    )
    assert not tuner.fit().errors
    assert len(watched.runs) == 1
    (run,) = watched.runs
    assert watched.exit_codes == {run.id: 0}


def test_setup_wandb_in_a_trial_names_the_run_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def train(config: dict[str, Any]) -> None:
        run = setup_wandb(config, project="tests")
        context = tune.get_context()
        seen[context.get_trial_id()] = (run.id, run.name, run.group, dict(run.config))
        run.log({"own": config["x"]})
        tune.report({"loss": 1.0})
        run.finish()

    grid = fit(tmp_path, train, [])
    for result in grid:
        run_id, name, group, config = seen[result.trial_id]
        assert run_id == result.trial_id
        assert name.endswith(f"train_{run_id}")
        assert group == "exp"
        assert config == {"x": result.config["x"]}


def test_a_project_is_required() -> None:
    callback = WandbLoggerCallback()
    with pytest.raises(ValueError, match="needs a project: pass project="):
        callback.setup()


def test_online_without_a_key_says_where_to_put_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "online")
    with pytest.raises(ValueError, match="No WandB API key found"):
        WandbLoggerCallback(project="tests").setup()


def test_a_key_file_sets_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "online")
    key_file = tmp_path / "key"
    key_file.write_text("abc123\n")
    WandbLoggerCallback(project="tests", api_key_file=str(key_file)).setup()

    assert os.environ["WANDB_API_KEY"] == "abc123"
    monkeypatch.delenv("WANDB_API_KEY")


def test_without_wandb_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import tunecore.integrations  # noqa: PLC0415

    monkeypatch.setitem(sys.modules, "wandb", None)
    monkeypatch.delitem(sys.modules, "tunecore.integrations.wandb")
    monkeypatch.delattr(tunecore.integrations, "wandb")
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[wandb\]'"):
        import tunecore.integrations.wandb  # noqa: PLC0415


@pytest.mark.parametrize("hold", [0, 2])
def test_a_driver_killed_twice_and_resumed_logs_each_result_once(tmp_path: Path, hold: int) -> None:
    """What each trial's offline directories recorded, read from their
    `.wandb` files. The first driver dies once the first trial's end is in
    the log, W&B's thread held before it opened that trial's run (hold 0)
    or after it logged 2 of its results (which the SIGKILL may lose): the
    trial never starts again, and the resumed driver catches its run up
    as it restores it. The second dies amid the second trial, whose run
    the last driver catches up as the trial starts again (`tracker_driver`)."""
    from tests.integrations import tracker_driver  # noqa: PLC0415
    from tests.integrations.mlflow_driver import ITERATIONS  # noqa: PLC0415
    from tunecore.integrations._wandb_offline import history, offline_dirs  # noqa: PLC0415

    def drive(phase: str) -> int:
        return tracker_driver.drive("wandb", tmp_path, str(tmp_path), phase, str(hold))

    def parts_by_x() -> dict[float, list[Path]]:
        """Each trial's offline directories, oldest first: each process
        that opened its run made one, all of them parts of one W&B run."""
        found = {}
        for params in (tmp_path / "exp").glob("*/params.json"):
            dirs = offline_dirs(params.parent / "wandb", "*")
            assert len({path.name.rsplit("-", 1)[1] for path in dirs}) <= 1, dirs
            found[json.loads(params.read_text())["x"]] = dirs
        return found

    assert drive("first") == -9
    assert len(parts_by_x()[tracker_driver.ENDED_X]) == (0 if hold == 0 else 1)
    assert drive("second") == -9
    assert drive("last") == 0

    parts = parts_by_x()
    assert sorted(parts) == list(tracker_driver.XS)
    every_step = list(range(1, ITERATIONS + 1))
    for x, dirs in parts.items():
        rows = [row for path in dirs for row in history(path)]
        assert [row["training_iteration"] for row in rows] == every_step, x
        assert [row["loss"] for row in rows] == pytest.approx([x + 1.0 / s for s in every_step])
    # The ended trial's run was caught up once, by the second driver, and
    # not opened again by the last; the split trial's by the last.
    assert {x: len(dirs) for x, dirs in parts.items()} == {
        tracker_driver.ENDED_X: 1 if hold == 0 else 2,
        tracker_driver.SPLIT_X: 2,
        tracker_driver.XS[2]: 1,
    }


def test_ray_tune_logger_wandb_is_the_same_callback() -> None:
    from tunecore.logger.wandb import WandbLoggerCallback as FromLogger  # noqa: PLC0415

    assert FromLogger is WandbLoggerCallback
