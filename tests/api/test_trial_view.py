"""Bug 13: callbacks and name creators see a trial as Ray Tune shows it
(`trial.trial_id`, `trial.trainable_name`, `trial.status == "RUNNING"`,
`str(trial)` its name), not tunecore's internal struct."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import JsonValue
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial


def trainable(config: dict[str, object]) -> None:
    for step in range(2):
        tunecore.report({"loss": float(str(config["x"])) + step})


class SeesTrials(Callback):
    """Records what a Ray Tune callback would read."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []
        self.trials: set[Trial] = set()
        self.first_of_list: list[str] = []
        self.listed: list[tuple[str, ...]] = []  # the first trial's status in `trials`

    def on_trial_start(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
        self.seen.append(("start", str(trial), trial.status, trial.trainable_name))
        self.first_of_list.append(str(trials[0]))
        self.listed.append(("start", str(trial), trials[0].status))

    def on_trial_result(
        self,
        iteration: int,
        trials: Sequence[Trial],
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        # As on Ray: the trial holds the result before this one (none
        # before its first), and is updated only after its callbacks.
        previous = int(str(result["training_iteration"])) - 1
        assert trial.last_result.get("training_iteration") == (previous or None)
        assert trial.path is not None
        assert trial.local_path == trial.path == trial.logdir
        assert Path(trial.path).is_dir()
        self.seen.append(("result", str(trial), trial.status, repr(trial.config["x"])))
        self.trials.add(trial)

    def on_trial_complete(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
        self.seen.append(("complete", str(trial), trial.status, trial.experiment_tag))
        self.listed.append(("complete", str(trial), trials[0].status))
        self.trials.add(trial)


def fit(tmp_path: Path, callback: Callback, **tune: object) -> None:
    Tuner(
        trainable,
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=TuneConfig(max_concurrent_trials=1, **tune),  # type: ignore[arg-type]
        run_config=RunConfig(
            name="views",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            callbacks=[callback],
        ),
    ).fit()


def test_callbacks_see_rays_trial_attributes_and_its_name(tmp_path: Path) -> None:
    callback = SeesTrials()
    fit(tmp_path, callback)
    names = sorted({entry[1] for entry in callback.seen})
    assert len(names) == 2
    for name in names:
        assert name.startswith("trainable_")  # trainable_<5 hex>_0000N, never a struct
        assert len(name) == len("trainable_0a1b2_00001")
    first = [entry for entry in callback.seen if entry[1] == names[0]]
    # As Ray 2.60 shows them: its controller calls on_trial_start and
    # on_trial_complete before it sets RUNNING and TERMINATED (`trials` too).
    assert first == [
        ("start", names[0], "PENDING", "trainable"),
        ("result", names[0], "RUNNING", "1"),
        ("result", names[0], "RUNNING", "1"),
        ("complete", names[0], "RUNNING", "0_x=1"),
    ]
    assert callback.listed == [
        ("start", names[0], "PENDING"),
        ("complete", names[0], "RUNNING"),
        ("start", names[1], "TERMINATED"),  # shown as it is once its hooks are over
        ("complete", names[1], "TERMINATED"),
    ]
    assert callback.first_of_list == [names[0], names[0]]  # creation order
    assert len(callback.trials) == 2  # hashed and compared by trial id


def test_name_and_dirname_creators_get_the_same_view(tmp_path: Path) -> None:
    asked: list[tuple[str, str | None]] = []

    def name(trial: Trial) -> str:
        asked.append((str(trial), trial.custom_trial_name))
        return f"{trial.trainable_name}-x{trial.config['x']}"

    def dirname(trial: Trial) -> str:
        return f"dir-{trial.trial_id}"

    callback = SeesTrials()
    fit(tmp_path, callback, trial_name_creator=name, trial_dirname_creator=dirname)
    assert len(asked) == 2  # once per trial
    assert all(shown.startswith("trainable_") and custom is None for shown, custom in asked)
    assert sorted({entry[1] for entry in callback.seen}) == ["trainable-x1", "trainable-x2"]
    assert all(Path(t.path or "").name == f"dir-{t.trial_id}" for t in callback.trials)
    assert all(t.custom_trial_name == str(t) for t in callback.trials)


def fails_after_a_checkpoint(config: dict[str, object]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "step.txt").write_text("1")
        tunecore.report({"step": 1}, checkpoint=tunecore.Checkpoint.from_directory(directory))
    raise ValueError("fails after its first report")


class ReadsTheErrorFile(Callback):
    def __init__(self) -> None:
        self.read: list[tuple[str, bool, str | None]] = []

    def on_trial_error(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
        assert trial.error_file is not None, "the error file is there when the callback hears"
        self.read.append(
            (
                Path(trial.error_file).read_text(),
                trial.has_checkpoint(),
                trial.experiment_dir_name,
            )
        )


def test_an_error_callback_reads_the_error_file_and_the_checkpoint(tmp_path: Path) -> None:
    # As in Ray, the failure is in error.txt before `on_trial_error` runs.
    callback = ReadsTheErrorFile()
    Tuner(
        fails_after_a_checkpoint,
        run_config=RunConfig(
            name="errors",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            callbacks=[callback],
        ),
    ).fit()
    ((text, has_checkpoint, experiment),) = callback.read
    assert "fails after its first report" in text
    assert has_checkpoint
    assert experiment == "errors"
