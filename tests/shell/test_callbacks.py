"""Callbacks: a failing one is never fatal and reported once; the file
loggers write through the storage."""

from __future__ import annotations

import csv
import importlib
import json
import logging
import struct
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tunecore.core.experiment import ExperimentConfig, ExperimentState, new_experiment, step
from tunecore.model import (
    CheckpointRef,
    CheckpointStorage,
    ClusterResourcesChanged,
    ExperimentEvent,
    JsonValue,
    Rejection,
    Resources,
    ResultReported,
    TrialRequested,
)
from tunecore.shell.callbacks import (
    Callback,
    CallbackList,
    CSVLoggerCallback,
    JsonLoggerCallback,
    ResultFiles,
    TensorBoardCallback,
)
from tunecore.shell.storage.layout import ExperimentStorage
from tunecore.shell.trial_view import Trial


def feed(state: ExperimentState, *events: ExperimentEvent) -> ExperimentState:
    for event in events:
        outcome = step(state, event)
        assert not isinstance(outcome, Rejection), outcome
        state = outcome[0]
    return state


def running_trials(count: int = 2) -> list[Trial]:
    """`count` RUNNING trials, each with one result, made by the real core."""
    state = new_experiment(ExperimentConfig(trainable_name="train"))
    state = feed(state, ClusterResourcesChanged(at=1.0, total=Resources(cpu=count)))
    for number in range(count):
        state = feed(state, TrialRequested(at=2.0, config={"x": number}))
    for trial_id in list(state.trials.keys()):
        state = feed(
            state,
            ResultReported(
                at=3.0, trial_id=trial_id, result={"training_iteration": 1, "loss": 0.5}
            ),
        )
    return [Trial(t) for t in sorted(state.trials.values(), key=lambda t: t.trial_id)]


class Recorder(Callback):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def on_step_begin(self, iteration: int, trials: Sequence[Trial]) -> None:
        self.calls.append(f"step_begin {iteration}")

    def on_trial_result(
        self,
        iteration: int,
        trials: Sequence[Trial],
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        self.calls.append(f"result {trial.trial_id}")

    def on_experiment_end(self, trials: Sequence[Trial]) -> None:
        self.calls.append("end")


class Broken(Callback):
    def on_step_begin(self, iteration: int, trials: Sequence[Trial]) -> None:
        raise ValueError(f"broken at {iteration}")

    def on_trial_result(
        self,
        iteration: int,
        trials: Sequence[Trial],
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        if result.get("kind") == "key":
            raise KeyError("missing")
        raise ValueError("bad result")


def test_the_base_callback_does_nothing() -> None:
    trials = running_trials(1)
    trial = trials[0]
    callback = Callback()
    callback.on_step_begin(0, trials)
    callback.on_step_end(0, trials)
    callback.on_trial_start(0, trials, trial)
    callback.on_trial_restore(0, trials, trial)
    callback.on_trial_save(0, trials, trial)
    callback.on_trial_result(0, trials, trial, {})
    callback.on_trial_complete(0, trials, trial)
    callback.on_trial_error(0, trials, trial)
    ref = CheckpointRef(storage=CheckpointStorage.MEMORY, path="k")
    callback.on_checkpoint(0, trials, trial, ref)
    callback.on_experiment_end(trials)


def test_a_raising_callback_is_reported_once_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    trials = running_trials(1)
    before, after = Recorder(), Recorder()
    callbacks = CallbackList([before, Broken(), after])
    with caplog.at_level(logging.INFO, logger="tunecore.shell.callbacks"):
        for iteration in range(5):
            callbacks.on_step_begin(iteration, trials)
        callbacks.on_trial_result(5, trials, trials[0], {"kind": "value"})
        callbacks.on_trial_result(6, trials, trials[0], {"kind": "value"})
        callbacks.on_trial_result(7, trials, trials[0], {"kind": "key"})
        callbacks.on_experiment_end(trials)
    expected = [
        *(f"step_begin {n}" for n in range(5)),
        *(f"result {trials[0].trial_id}" for _ in range(3)),
        "end",
    ]
    assert before.calls == expected
    assert after.calls == expected
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    # once per (callback, hook, exception type): step_begin/ValueError,
    # trial_result/ValueError, trial_result/KeyError
    assert len(errors) == 3
    assert all("Broken" in r.getMessage() for r in errors)
    assert [r.getMessage().split(" raised in ")[1].split(";")[0] for r in errors] == [
        "on_step_begin",
        "on_trial_result",
        "on_trial_result",
    ]
    assert all(r.exc_info is not None for r in errors)


def test_keyboard_interrupt_is_not_swallowed() -> None:
    class Interrupting(Callback):
        def on_step_end(self, iteration: int, trials: Sequence[Trial]) -> None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        CallbackList([Interrupting()]).on_step_end(0, [])


def test_callback_list_forwards_every_hook() -> None:
    seen: list[str] = []

    class All(Callback):
        def on_step_begin(self, iteration: int, trials: Sequence[Trial]) -> None:
            seen.append("step_begin")

        def on_step_end(self, iteration: int, trials: Sequence[Trial]) -> None:
            seen.append("step_end")

        def on_trial_start(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
            seen.append("start")

        def on_trial_restore(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
            seen.append("restore")

        def on_trial_save(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
            seen.append("save")

        def on_trial_result(
            self,
            iteration: int,
            trials: Sequence[Trial],
            trial: Trial,
            result: Mapping[str, JsonValue],
        ) -> None:
            seen.append("result")

        def on_trial_complete(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
            seen.append("complete")

        def on_trial_error(self, iteration: int, trials: Sequence[Trial], trial: Trial) -> None:
            seen.append("error")

        def on_checkpoint(
            self,
            iteration: int,
            trials: Sequence[Trial],
            trial: Trial,
            checkpoint: CheckpointRef,
        ) -> None:
            seen.append("checkpoint")

        def on_experiment_restore(self, trials: Sequence[Trial]) -> None:
            seen.append("restored")

        def on_experiment_end(self, trials: Sequence[Trial]) -> None:
            seen.append("end")

    trials = running_trials(1)
    trial = trials[0]
    callbacks = CallbackList([All()])
    callbacks.on_step_begin(0, trials)
    callbacks.on_step_end(0, trials)
    callbacks.on_trial_start(0, trials, trial)
    callbacks.on_trial_restore(0, trials, trial)
    callbacks.on_trial_save(0, trials, trial)
    callbacks.on_trial_result(0, trials, trial, {})
    callbacks.on_trial_complete(0, trials, trial)
    callbacks.on_trial_error(0, trials, trial)
    callbacks.on_checkpoint(
        0, trials, trial, CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/x")
    )
    callbacks.on_experiment_restore(trials)
    callbacks.on_experiment_end(trials)
    assert seen == [
        "step_begin",
        "step_end",
        "start",
        "restore",
        "save",
        "result",
        "complete",
        "error",
        "checkpoint",
        "restored",
        "end",
    ]


# -- file loggers -------------------------------------------------------------------


def test_json_and_csv_loggers_write_results(tmp_path: Path) -> None:
    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(2)
    first, second = trials
    callbacks = CallbackList([JsonLoggerCallback(storage), CSVLoggerCallback(storage)])
    callbacks.on_trial_start(0, trials, first)
    results: list[dict[str, JsonValue]] = [
        {"training_iteration": 1, "loss": 0.5},
        {"training_iteration": 2, "loss": 0.25, "extra": {"a": 1}},
    ]
    for result in results:
        callbacks.on_trial_result(1, trials, first, result)
    callbacks.on_trial_result(1, trials, second, {"training_iteration": 1, "loss": 9.0})

    first_dir = storage.trial_dir(first.state.spec)
    lines = (first_dir / "result.json").read_text().splitlines()
    assert [json.loads(line) for line in lines] == results
    with (first_dir / "progress.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert rows == [
        {"training_iteration": "1", "loss": "0.5", "extra/a": ""},
        {"training_iteration": "2", "loss": "0.25", "extra/a": "1"},
    ]
    second_lines = (storage.trial_dir(second.state.spec) / "result.json").read_text().splitlines()
    assert [json.loads(line) for line in second_lines] == [{"training_iteration": 1, "loss": 9.0}]


def test_file_loggers_use_the_directory_they_are_given(tmp_path: Path) -> None:
    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(1)

    def dir_of(trial: Trial) -> Path:
        return storage.trial_dir(trial.state.spec, dirname=f"custom_{trial.trial_id}")

    JsonLoggerCallback(storage, dir_of).on_trial_result(0, trials, trials[0], {"a": 1})
    assert (storage.path / "custom_trial_00000" / "result.json").is_file()


def test_the_default_result_files_are_what_the_three_loggers_write(tmp_path: Path) -> None:
    """`fit()`'s one `ResultFiles` (a job per result on the writer) writes
    the same files as a logger per file: a new key half-way, nested and
    non-finite values, a restart and a second trial included."""
    pytest.importorskip("tensorboardX")
    trials = running_trials(2)
    results: list[dict[str, JsonValue]] = [
        {"training_iteration": 1, "loss": 0.5, "info": {"lr": 0.1}, "name": "a,b"},
        {"training_iteration": 2, "loss": float("nan"), "info": {"lr": 0.2}},
        {"training_iteration": 3, "loss": 0.25, "late": 1e300, "flag": True},
    ]
    written: dict[str, tuple[bytes, bytes, list[list[tuple[str, int, object]]]]] = {}
    for name, loggers in (
        ("one", [ResultFiles(tensorboard=True)]),
        ("three", [JsonLoggerCallback(), CSVLoggerCallback(), TensorBoardCallback()]),
    ):
        storage = ExperimentStorage(tmp_path / name, "exp", background=True)
        for logger in loggers:
            logger.attach(storage)
        callbacks = CallbackList(loggers)
        for trial in trials:
            callbacks.on_trial_start(0, trials, trial)
            for result in results:
                callbacks.on_trial_result(1, trials, trial, result)
            callbacks.on_trial_error(2, trials, trial)  # a restart: a new event file
            callbacks.on_trial_result(3, trials, trial, results[0])
            callbacks.on_trial_complete(4, trials, trial)
        callbacks.on_experiment_end(trials)
        storage.close()
        for trial in trials:
            directory = storage.trial_dir(trial.state.spec)
            events = sorted(directory.glob("events.out.tfevents.*"), key=read_scalars)
            written[f"{name}/{trial.trial_id}"] = (
                (directory / "result.json").read_bytes(),
                (directory / "progress.csv").read_bytes(),
                [read_scalars(path) for path in events],
            )
    for trial in trials:
        one = written[f"one/{trial.trial_id}"]
        assert one == written[f"three/{trial.trial_id}"]
        lines, table, scalars = one
        assert len(lines.splitlines()) == 4
        assert b"late" in table.splitlines()[0]  # the header rewritten with the late key
        assert len(scalars) == 2


def test_a_logger_subclass_that_skips_super_init_runs_every_hook(tmp_path: Path) -> None:
    """Ray Tune users turn the default TensorBoard files off with a
    `TBXLoggerCallback` whose `__init__` does nothing (not calling
    `super().__init__()`) and whose `log_trial_*` do nothing: every hook
    still runs, the experiment's storage attaches, and nothing is written."""

    class TBXDummyCallback(TensorBoardCallback):
        def __init__(self) -> None:
            pass

        def log_trial_start(self, *args: object, **kwargs: object) -> None:
            pass

        def log_trial_result(self, *args: object, **kwargs: object) -> None:
            pass

        def log_trial_end(self, *args: object, **kwargs: object) -> None:
            pass

    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(2)
    dummy = TBXDummyCallback()
    dummy.attach(storage)
    assert dummy.storage is storage
    for hook in (dummy.on_trial_start, dummy.on_trial_save, dummy.on_trial_restore):
        hook(1, trials, trials[0])
    dummy.on_trial_result(1, trials, trials[0], {"training_iteration": 1, "loss": 0.5})
    dummy.on_trial_complete(2, trials, trials[0])
    dummy.on_trial_error(2, trials, trials[1])
    dummy.on_experiment_end(trials)
    assert not list(tmp_path.rglob("events.out.tfevents.*"))
    assert not list(tmp_path.rglob("result.json"))


def test_a_file_logger_made_without_init_writes_nothing_it_was_not_asked_for(
    tmp_path: Path,
) -> None:
    """A `JsonLoggerCallback` subclass whose `__init__` skips the base's
    writes nothing (it was given no file to write), where it failed with
    AttributeError at the first result."""

    class Quiet(JsonLoggerCallback):
        def __init__(self) -> None:
            self.seen = 0

        def on_trial_start(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
            self.seen += 1
            super().on_trial_start(iteration, trials, trial)

    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(1)
    quiet = Quiet()
    quiet.attach(storage)
    quiet.on_trial_start(0, trials, trials[0])
    quiet.on_trial_result(1, trials, trials[0], {"training_iteration": 1})
    quiet.on_trial_complete(2, trials, trials[0])
    quiet.on_experiment_end(trials)
    storage.close()
    assert quiet.seen == 1
    assert not list(tmp_path.rglob("result.json"))


# -- TensorBoard -----------------------------------------------------------------------


def test_tensorboard_callback_needs_no_tensorboardx(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # any import of it fails
    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(1)
    callback = TensorBoardCallback(storage)
    callback.on_trial_result(1, trials, trials[0], {"training_iteration": 1, "loss": 0.5})
    callback.on_experiment_end(trials)
    assert list(storage.trial_dir(trials[0].state.spec).glob("events.out.tfevents.*"))


def test_tensorboard_callback_writes_event_files(tmp_path: Path) -> None:
    pytest.importorskip("tensorboardX")
    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(1)
    trial = trials[0]
    callback = TensorBoardCallback(storage)
    for iteration in (1, 2):
        result: dict[str, JsonValue] = {
            "training_iteration": iteration,
            "loss": 1.0 / iteration,
            "info": {"lr": 0.1},
            "name": "text is skipped",
        }
        callback.on_trial_result(iteration, trials, trial, result)
    callback.on_trial_complete(3, trials, trial)
    callback.on_experiment_end(trials)
    events = list(storage.trial_dir(trial.state.spec).glob("events.out.tfevents.*"))
    assert len(events) == 1
    assert read_scalars(events[0]) == [
        ("ray/tune/loss", 1, 1.0),
        ("ray/tune/info/lr", 1, pytest.approx(0.1)),
        ("ray/tune/loss", 2, 0.5),
        ("ray/tune/info/lr", 2, pytest.approx(0.1)),
    ]


def read_scalars(path: Path) -> list[tuple[str, int, object]]:
    """The scalars of an event file, parsed with tensorboardX's own protobuf
    classes and checksums: TFRecords of (length, crc, Event, crc), the first
    Event the file version."""
    event_pb2 = importlib.import_module("tensorboardX.proto.event_pb2")
    masked_crc = importlib.import_module("tensorboardX.record_writer").masked_crc32c
    data = path.read_bytes()
    scalars: list[tuple[str, int, object]] = []
    position = 0
    versions = []
    while position < len(data):
        header = data[position : position + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[position + 8 : position + 12])[0] == masked_crc(header)
        position += 12
        payload = data[position : position + length]
        assert struct.unpack("<I", data[position + length : position + length + 4])[0] == (
            masked_crc(payload)
        )
        event = event_pb2.Event()
        event.ParseFromString(payload)
        position += length + 4
        versions.append(event.file_version)
        assert event.wall_time > 1.6e9
        scalars.extend((v.tag, event.step, v.simple_value) for v in event.summary.value)
    assert versions[0] == "brain.Event:2"
    return scalars


def scalars_of_one_result(
    tmp_path: Path, result: dict[str, JsonValue]
) -> list[tuple[str, int, object]]:
    """The scalars a `TensorBoardCallback` writes for `result`, read back."""
    pytest.importorskip("tensorboardX")
    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(1)
    callback = TensorBoardCallback(storage)
    callback.on_trial_result(1, trials, trials[0], result)
    callback.on_experiment_end(trials)
    (events,) = storage.trial_dir(trials[0].state.spec).glob("events.out.tfevents.*")
    return read_scalars(events)


def test_tensorboard_values_beyond_float32_saturate_and_negative_steps_encode(
    tmp_path: Path,
) -> None:
    result: dict[str, JsonValue] = {"training_iteration": -3, "big": 1e300, "small": -1e300}
    assert scalars_of_one_result(tmp_path, result) == [
        ("ray/tune/big", -3, float("inf")),
        ("ray/tune/small", -3, float("-inf")),
    ]


def test_tensorboard_skips_an_int_beyond_a_floats_range_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    result: dict[str, JsonValue] = {"training_iteration": 1, "huge": 10**400, "loss": 0.5}
    assert scalars_of_one_result(tmp_path, result) == [("ray/tune/loss", 1, 0.5)]


def test_a_restarted_trial_writes_a_new_event_file(tmp_path: Path) -> None:
    pytest.importorskip("tensorboardX")
    storage = ExperimentStorage(tmp_path, "exp")
    trials = running_trials(1)
    callback = TensorBoardCallback(storage)
    for run in (1, 2):
        callback.on_trial_result(run, trials, trials[0], {"training_iteration": run, "x": run})
        callback.on_trial_error(run, trials, trials[0])
    files = sorted(storage.trial_dir(trials[0].state.spec).glob("events.out.tfevents.*"))
    assert [read_scalars(f) for f in files] in (
        [[("ray/tune/x", 1, 1.0)], [("ray/tune/x", 2, 2.0)]],
        [[("ray/tune/x", 2, 2.0)], [("ray/tune/x", 1, 1.0)]],
    )
