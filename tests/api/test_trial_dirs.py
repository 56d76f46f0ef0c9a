"""A trial's directory: made at once when callbacks of the user's may open
files in it as the trial starts (Ray's logging guide does), else by the
file queue ahead of the trial's files (`ExperimentStorage.trial_dir`).

The simulated workers never touch the file system, so only the driver can
have made a directory a callback finds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.model import JsonDict
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    return {"loss": float(str(config["x"])) / iteration}, 1.0


class WritesAtStart(Callback):
    """Opens a file in the trial's directory as the trial starts."""

    def on_trial_start(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
        assert trial.local_path is not None
        (Path(trial.local_path) / "started.txt").write_text(trial.trial_id)


def simulated(root: Path, callbacks: list[object]) -> list[Path]:
    grid = tunecore.simulate(
        curve,
        param_space={"x": tunecore.grid_search([1.0, 2.0, 3.0])},
        tune_config=TuneConfig(seed=0),
        run_config=RunConfig(name="dirs", storage_path=str(root), verbose=0, callbacks=callbacks),
        max_iterations=3,
        write_results=True,
    )
    assert not grid.errors
    return [Path(result.path) for result in grid]


def test_a_users_callback_writes_in_the_trial_dir_as_the_trial_starts(tmp_path: Path) -> None:
    dirs = simulated(tmp_path, [WritesAtStart()])
    assert len(dirs) == 3
    for directory in dirs:
        assert (directory / "started.txt").read_text() in directory.name
        assert len((directory / "result.json").read_text().splitlines()) == 3


def test_without_callbacks_every_trial_dir_holds_its_files(tmp_path: Path) -> None:
    dirs = simulated(tmp_path, [])
    assert len(set(dirs)) == 3
    for directory in dirs:
        assert (directory / "params.json").is_file()
        assert len((directory / "result.json").read_text().splitlines()) == 3
        assert (directory / "progress.csv").is_file()
