"""After the run the loop hands each trial's directory to the results and
keeps none: what it kept per trial would otherwise live on with the run's
objects until the collector's next full collection (issue 41)."""

from __future__ import annotations

from pathlib import Path

from tests.shell.test_simulated import RecordingExecutor, RecordingJournal, log_dir
from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.core.search import BasicVariantGenerator, grid_search
from tunecore.model import JsonDict, Mode
from tunecore.shell.callbacks import CallbackList
from tunecore.shell.loop import ExperimentLoop
from tunecore.shell.run_plan import LoopParts, RunPlan
from tunecore.shell.storage.layout import ExperimentStorage


def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    return {"loss": float(config["x"]) / iteration}, 1.0  # type: ignore[arg-type]


def test_the_loop_hands_over_every_trials_directory_and_forgets_them(tmp_path: Path) -> None:
    config = ExperimentConfig(
        trainable_name="simulated",
        metric="loss",
        mode=Mode.MIN,
        stopping_criterion={"training_iteration": 2},
        trial_id_prefix="sim",
    )
    initial = new_experiment(config, None, BasicVariantGenerator({"x": grid_search([1, 2, 3])}))
    executor = RecordingExecutor(trainable, [], 2)
    storage = ExperimentStorage(tmp_path, "handed")
    journal = RecordingJournal(log_dir(tmp_path), initial, [])
    parts = LoopParts(executor, storage, CallbackList(), journal=journal, clock=executor.now)
    loop = ExperimentLoop(initial, RunPlan(), parts)
    final = loop.run()

    dirs = loop.hand_over_dirs()

    assert set(dirs) == set(final.trials)
    for trial_id, directory in dirs.items():
        assert isinstance(directory, str)
        assert Path(directory).is_dir()
        assert Path(directory) == loop.trial_dir(trial_id)
    again = loop.hand_over_dirs()  # made anew from the trials: nothing was kept
    assert again == dirs
    assert all(again[trial_id] is not dirs[trial_id] for trial_id in dirs)
