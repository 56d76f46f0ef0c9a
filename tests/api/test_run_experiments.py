"""Ray Tune's `Experiment`, `run_experiments` and `run(restore=...)`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

import tunecore
from tunecore import Experiment, TuneError, run_experiments
from tunecore.model import JsonValue

pytestmark = pytest.mark.usefixtures("ray_cluster")  # tune.run runs on Ray


def count_to_four(config: dict[str, Any]) -> None:
    """Steps up to 4, each checkpointed, from the checkpoint's step if any."""
    step = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            step = int(Path(directory, "step").read_text())
    started_at = step
    while step < 4:
        step += 1
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tunecore.report(
                {"step": step, "started_at": started_at, "x": config.get("x", 0)},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def steps_of(trial: tunecore.Trial) -> list[int]:
    assert trial.path is not None
    lines = Path(trial.path, "result.json").read_text().splitlines()
    return [int(json.loads(line)["step"]) for line in lines]


def test_run_experiments_runs_each_experiment_and_returns_all_trials(tmp_path: Path) -> None:
    first = Experiment(
        "first",
        count_to_four,
        config={"x": tunecore.grid_search([1, 2])},
        stop={"step": 2},
        storage_path=str(tmp_path),
    )
    second = Experiment("second", count_to_four, num_samples=1, storage_path=str(tmp_path))
    trials = run_experiments([first, second], verbose=0)
    assert [steps_of(t) for t in trials] == [[1, 2], [1, 2], [1, 2, 3, 4]]
    assert all(t.status == "TERMINATED" for t in trials)
    assert (tmp_path / "first").is_dir()
    assert (tmp_path / "second").is_dir()


def test_a_dict_of_specs_is_read_as_ray_reads_it(tmp_path: Path) -> None:
    trials = run_experiments(
        {
            "from_dict": {
                "run": count_to_four,
                "stop": {"training_iteration": 3},
                "config": {"x": 7},
                "storage_path": str(tmp_path),
                "checkpoint_config": {"num_to_keep": 1},
            }
        },
        verbose=0,
    )
    (trial,) = trials
    assert steps_of(trial) == [1, 2, 3]
    assert trial.config == {"x": 7}
    assert len(list(Path(str(trial.path)).glob("checkpoint_*"))) == 1


def test_run_takes_an_experiment_and_its_settings_win(tmp_path: Path) -> None:
    experiment = Experiment(
        "exp", count_to_four, stop={"step": 1}, storage_path=str(tmp_path / "mine")
    )
    analysis = tunecore.run(experiment, stop={"step": 3}, verbose=0)
    (trial,) = analysis.trials
    assert steps_of(trial) == [1]
    assert str(trial.path).startswith(str(tmp_path / "mine"))


def test_bad_experiments_name_what_is_wrong() -> None:
    with pytest.raises(TuneError, match="no trainable specified"):
        run_experiments({"e": {"config": {}}})
    with pytest.raises(TuneError, match=r"'e' could not be built.*'bogus'"):
        run_experiments({"e": {"run": count_to_four, "bogus": 1}})
    with pytest.raises(ValueError, match=r"Experiment\(config=\.\.\.\) must be a dict, got list"):
        Experiment("e", count_to_four, config=[1])  # type: ignore[arg-type]
    with pytest.raises(TuneError, match="give an Experiment"):
        run_experiments(["not an experiment"])  # type: ignore[list-item]


def test_an_experiment_shows_rays_spec() -> None:
    experiment = Experiment("e", count_to_four, stop={"step": 2}, num_samples=3)
    assert experiment.run_identifier == "count_to_four"
    assert experiment.public_spec == {"stop": {"step": 2}, "num_samples": 3, "time_budget_s": None}
    assert experiment.spec["run"] == "count_to_four"


def test_an_experiments_path_is_where_its_run_puts_it(tmp_path: Path) -> None:
    """Ray's `Experiment.path`: scripts hand it to `ExperimentAnalysis` or
    print it before running."""
    experiment = Experiment("exp", count_to_four, stop={"step": 1}, storage_path=str(tmp_path))
    assert experiment.path == str(tmp_path / "exp")
    analysis = tunecore.run(experiment, verbose=0)
    assert analysis.experiment_path == experiment.path
    relative = Experiment("e", count_to_four, storage_path="results")
    assert relative.path == str(Path("results").absolute() / "e")
    default = Experiment("e", count_to_four)
    assert default.path == str(Path("~/tunecore_results/e").expanduser())
    assert Experiment("e", count_to_four, storage_path="s3://b/x/").path == "s3://b/x/e"
    assert Experiment("e", count_to_four, storage_path="file:///tmp/s").path == "/tmp/s/e"
    assert Experiment(None, count_to_four).path is None


def saved_step(directory: Path, step: int) -> str:
    directory.mkdir()
    (directory / "step").write_text(str(step))
    return str(directory)


def test_restore_starts_every_trial_from_the_checkpoint(tmp_path: Path) -> None:
    checkpoint = saved_step(tmp_path / "ckpt", 2)
    analysis = tunecore.run(
        count_to_four,
        config={"x": tunecore.grid_search([1, 2])},
        restore=checkpoint,
        storage_path=str(tmp_path),
        name="restored",
        verbose=0,
    )
    trials = sorted(analysis.trials, key=lambda t: t.trial_id)
    assert [steps_of(t) for t in trials] == [[3, 4], [3, 4]]
    assert [t.last_result["started_at"] for t in trials] == [2, 2]
    # As in Ray, the count of iterations starts again (the checkpoint has no metrics).
    assert [t.last_result["training_iteration"] for t in trials] == [2, 2]


class StepCounter(tunecore.Trainable):
    def setup(self, config: dict[str, Any]) -> None:
        self.count = 0

    def step(self) -> dict[str, Any]:
        self.count += 1
        return {"count": self.count}

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        Path(checkpoint_dir, "step").write_text(str(self.count))

    def load_checkpoint(self, checkpoint: str | dict[str, JsonValue]) -> None:
        assert isinstance(checkpoint, str)
        self.count = int(Path(checkpoint, "step").read_text())


def test_a_class_trainable_loads_the_restore_checkpoint(tmp_path: Path) -> None:
    checkpoint = saved_step(tmp_path / "ckpt", 10)
    analysis = tunecore.run(
        StepCounter,
        restore=checkpoint,
        stop={"training_iteration": 2},
        storage_path=str(tmp_path),
        name="class",
        verbose=0,
    )
    (trial,) = analysis.trials
    assert trial.last_result["count"] == 12


def test_restore_of_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"restore='.*nowhere'.* is not a directory"):
        tunecore.run(count_to_four, restore=str(tmp_path / "nowhere"), storage_path=str(tmp_path))
