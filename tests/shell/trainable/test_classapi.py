"""The class API: a Trainable subclass driven by ClassTrainable through a
whole life: setup, steps, checkpoints on disk and in memory, restore into a
new instance, reset for another trial, cleanup."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.fifo_watchdog import fifo_watchdog
from tests.shell.trainable.conftest import make_context
from tunecore.core.results import TRAINING_ITERATION
from tunecore.model import JsonDict
from tunecore.shell.trainable import (
    Checkpoint,
    ClassTrainable,
    Trainable,
    TrialContext,
    WorkerTrainable,
)
from tunecore.shell.trainable.checkpoint_files import META_FILE, STATE_FILE, read_meta


class Accumulator(Trainable):
    """Adds `config["step"]` to a total each iteration; its checkpoint is a dict."""

    def setup(self, config: JsonDict) -> None:
        self.total = 0.0
        self.events = ["setup"]
        self.seen_iterations: list[int] = []
        self.loaded: list[str | JsonDict] = []

    def step(self) -> Mapping[str, object]:
        self.seen_iterations.append(self.iteration)
        self.total += self.config["step"]
        return {"total": self.total}

    def save_checkpoint(self, checkpoint_dir: str) -> str | Mapping[str, object] | None:
        return {"total": self.total}

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        self.loaded.append(checkpoint)
        assert isinstance(checkpoint, dict)
        self.total = checkpoint["total"]  # type: ignore[assignment]

    def reset_config(self, new_config: JsonDict) -> bool:
        self.events.append(f"reset to {new_config['step']}")
        self.total = 0.0
        return True

    def cleanup(self) -> None:
        self.events.append("cleanup")


def instance(trainable: ClassTrainable) -> Accumulator:
    inner = trainable._trainable
    assert isinstance(inner, Accumulator)
    return inner


def test_steps_carry_the_automatic_fields(context: TrialContext) -> None:
    trainable = ClassTrainable(Accumulator, {"step": 2.0}, context)
    results = [trainable.train() for _ in range(3)]

    assert [r["total"] for r in results] == [2.0, 4.0, 6.0]
    assert [r["training_iteration"] for r in results] == [1, 2, 3]
    assert all(r["done"] is False and r["time_this_iter_s"] >= 0 for r in results)  # type: ignore[operator]
    assert results[-1]["pid"] == os.getpid()
    inner = instance(trainable)
    assert inner.seen_iterations == [0, 1, 2]  # iterations completed before each step
    assert (inner.iteration, inner.training_iteration) == (3, 3)
    assert (inner.trial_id, inner.trial_name) == ("t1", "t1_name")
    assert inner.trial_dir == inner.logdir == context.trial_dir
    assert inner.config == {"step": 2.0}


class Logging(Accumulator):
    """Keeps what `log_result` is given, as a Trainable logging to a
    library of its own does (Ray's tune-output.md)."""

    def setup(self, config: JsonDict) -> None:
        super().setup(config)
        self.logged: list[JsonDict] = []

    def log_result(self, result: JsonDict) -> None:
        self.logged.append(result)


def test_log_result_gets_each_result_as_ray_calls_it(context: TrialContext) -> None:
    trainable = ClassTrainable(Logging, {"step": 1.0}, context)
    results = [trainable.train() for _ in range(2)]
    inner = trainable._trainable
    assert isinstance(inner, Logging)
    assert inner.logged == results
    assert [r[TRAINING_ITERATION] for r in inner.logged] == [1, 2]


def test_step_values_that_are_not_json_are_converted(context: TrialContext) -> None:
    class Reports(Trainable):
        def step(self) -> Mapping[str, object]:
            return {"where": Path("/data"), "pair": (1, 2)}

    result = ClassTrainable(Reports, {}, context).train()
    assert (result["where"], result["pair"]) == ("/data", [1, 2])


def test_a_dict_checkpoint_is_json_and_restores_into_a_new_instance(
    context: TrialContext, tmp_path: Path
) -> None:
    first = ClassTrainable(Accumulator, {"step": 1.0}, context)
    first.train()
    first.train()
    saved = tmp_path / "checkpoint_000002"
    saved.mkdir()
    assert first.save(str(saved)) == str(saved)
    assert json.loads((saved / STATE_FILE).read_text()) == {"total": 2.0}
    meta = read_meta(str(saved))
    assert meta is not None
    assert (meta.training_iteration, meta.saved_as) == (2, "dict")

    second = ClassTrainable(Accumulator, {"step": 1.0}, make_context(tmp_path, "t2"))
    second.restore(str(saved))
    assert instance(second).loaded == [{"total": 2.0}]
    assert instance(second).iteration == 2
    result = second.train()
    assert (result["total"], result["training_iteration"]) == (3.0, 3)
    assert result["iterations_since_restore"] == 1


def test_a_dict_state_that_is_a_fifo_is_refused_without_blocking(
    context: TrialContext, tmp_path: Path
) -> None:
    """A FIFO planted as a dict checkpoint's state file blocked the restore
    forever. (If it blocks again, the watchdog opens the FIFO's other end
    after 20 s, and the test fails instead of hanging.)"""
    first = ClassTrainable(Accumulator, {"step": 1.0}, context)
    first.train()
    saved = tmp_path / "checkpoint_000001"
    saved.mkdir()
    first.save(str(saved))
    fifo = saved / STATE_FILE
    fifo.unlink()
    os.mkfifo(fifo)
    second = ClassTrainable(Accumulator, {"step": 1.0}, make_context(tmp_path, "t2"))
    with (
        fifo_watchdog(fifo) as unblocked,
        pytest.raises(ValueError, match=rf"{STATE_FILE}.* a FIFO, not a regular file"),
    ):
        second.restore(str(saved))
    assert not unblocked.is_set()


def test_memory_checkpoints_round_trip(context: TrialContext, tmp_path: Path) -> None:
    first = ClassTrainable(Accumulator, {"step": 5.0}, context)
    first.train()
    data = first.save_to_bytes()

    second = ClassTrainable(Accumulator, {"step": 5.0}, make_context(tmp_path, "t2"))
    second.restore_from_bytes(data)
    result = second.train()
    assert (result["total"], result["training_iteration"]) == (10.0, 2)


class Files(Trainable):
    """Checkpoints as files: `returns` picks what save_checkpoint returns."""

    def setup(self, config: JsonDict) -> None:
        self.returns = config["returns"]
        self.loaded: list[str | JsonDict] = []

    def step(self) -> Mapping[str, object]:
        return {}

    def save_checkpoint(self, checkpoint_dir: str) -> str | Mapping[str, object] | None:
        Path(checkpoint_dir, "model.txt").write_text("weights")
        if self.returns == "none":
            return None
        if self.returns == "file":
            return os.path.join(checkpoint_dir, "model.txt")
        if self.returns == "dir":
            return checkpoint_dir
        if self.returns == "outside":
            return "/"
        if self.returns == "not json":
            return {"model": object()}
        return 42  # type: ignore[return-value]

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        self.loaded.append(checkpoint)


@pytest.mark.parametrize(
    ("returns", "loaded_name"), [("none", ""), ("dir", ""), ("file", "model.txt")]
)
def test_load_checkpoint_gets_what_save_checkpoint_returned(
    returns: str, loaded_name: str, context: TrialContext, tmp_path: Path
) -> None:
    first = ClassTrainable(Files, {"returns": returns}, context)
    saved = str(tmp_path / "saved")
    first.save(saved)
    second = ClassTrainable(Files, {"returns": returns}, make_context(tmp_path, "t2"))
    second.restore(saved)
    inner = second._trainable
    assert isinstance(inner, Files)
    assert inner.loaded == [os.path.join(saved, loaded_name) if loaded_name else saved]


@pytest.mark.parametrize(
    ("returns", "error", "message"),
    [
        ("outside", ValueError, "returned '/', which is not an existing path inside"),
        ("not json", TypeError, "Files.save_checkpoint()['model'] is of type object"),
        ("int", TypeError, "Files.save_checkpoint() returned a value of type int"),
    ],
)
def test_save_checkpoint_must_return_a_path_inside_a_dict_or_none(
    returns: str, error: type[Exception], message: str, context: TrialContext, tmp_path: Path
) -> None:
    trainable = ClassTrainable(Files, {"returns": returns}, context)
    with pytest.raises(error) as refused:
        trainable.save(str(tmp_path / "saved"))
    assert message in str(refused.value)


def test_a_directory_saved_by_hand_is_handed_over_as_it_is(
    context: TrialContext, tmp_path: Path
) -> None:
    trainable = ClassTrainable(Files, {"returns": "none"}, context)
    trainable.restore(str(tmp_path))
    inner = trainable._trainable
    assert isinstance(inner, Files)
    assert inner.loaded == [str(tmp_path)]
    assert not (tmp_path / META_FILE).exists()


def test_reset_takes_the_new_config_and_trial(context: TrialContext, tmp_path: Path) -> None:
    trainable = ClassTrainable(Accumulator, {"step": 1.0}, context)
    trainable.train()
    trainable.train()

    assert trainable.reset({"step": 10.0}, make_context(tmp_path, "t2")) is True
    result = trainable.train()
    assert (result["total"], result["training_iteration"]) == (10.0, 1)
    inner = instance(trainable)
    assert inner.events == ["setup", "reset to 10.0"]
    assert (inner.trial_id, inner.config) == ("t2", {"step": 10.0})


def test_reset_is_refused_by_default(context: TrialContext, tmp_path: Path) -> None:
    class Plain(Trainable):
        def step(self) -> Mapping[str, object]:
            return {"x": 1}

    trainable = ClassTrainable(Plain, {}, context)
    assert trainable.reset({}, make_context(tmp_path, "t2")) is False


def test_stop_calls_cleanup(context: TrialContext) -> None:
    trainable = ClassTrainable(Accumulator, {"step": 1.0}, context)
    trainable.stop()
    assert instance(trainable).events == ["setup", "cleanup"]


def test_what_a_subclass_does_not_implement_is_a_clear_error(context: TrialContext) -> None:
    class Bare(Trainable):
        pass

    trainable = ClassTrainable(Bare, {}, context)
    with pytest.raises(NotImplementedError, match=r"Bare must implement step\(\)"):
        trainable.train()
    with pytest.raises(NotImplementedError, match="Bare cannot be checkpointed"):
        trainable.save_to_bytes()


def test_step_must_return_a_dict(context: TrialContext) -> None:
    class Wrong(Trainable):
        def step(self) -> Mapping[str, object]:
            return [1]  # type: ignore[return-value]

    with pytest.raises(TypeError, match=r"Wrong.step\(\) must be a dict"):
        ClassTrainable(Wrong, {}, context).train()


def test_only_trainable_subclasses_are_accepted(context: TrialContext) -> None:
    with pytest.raises(TypeError, match="is not a subclass of tunecore's Trainable"):
        ClassTrainable(dict, {}, context)  # type: ignore[arg-type]


def test_a_trainable_built_directly_gets_a_temporary_trial_dir() -> None:
    trainable = Accumulator({"step": 1.0})
    try:
        assert os.path.isdir(trainable.trial_dir)
        assert trainable.trial_id == "default"
        assert trainable.step() == {"total": 1.0}
    finally:
        os.rmdir(trainable.trial_dir)


def test_a_trainable_built_directly_has_no_trial_resources(context: TrialContext) -> None:
    """Ray's `Trainable().trial_resources` is None outside a trial (its
    docstring example reads it so); inside one it is the trial's request."""
    trainable = Accumulator({"step": 1.0})
    try:
        assert trainable.trial_resources is None
    finally:
        os.rmdir(trainable.trial_dir)
    in_trial = Accumulator({"step": 1.0}, context=context)
    assert in_trial.trial_resources == context.get_trial_resources()


def test_a_class_trainable_is_a_worker_trainable(context: TrialContext) -> None:
    trainable: WorkerTrainable = ClassTrainable(Accumulator, {"step": 1.0}, context)
    assert trainable.train()["total"] == 1.0


def test_an_instance_built_directly_trains_saves_and_restores_as_a_trial(tmp_path: Path) -> None:
    first = Accumulator({"step": 2.0})
    assert first.train()[TRAINING_ITERATION] == 1
    saved = first.save()
    assert os.path.basename(saved) == "checkpoint_000001"
    assert first.train()["total"] == 4.0

    second = Accumulator({"step": 2.0})
    second.restore(saved)
    assert second.iteration == 1
    result = second.train()
    assert (result[TRAINING_ITERATION], result["total"]) == (2, 4.0)

    elsewhere = second.save(tmp_path / "mine")
    third = Accumulator({"step": 2.0})
    third.restore(Checkpoint.from_directory(elsewhere))
    assert third.train()[TRAINING_ITERATION] == 3
    third.stop()
    assert third.events[-1] == "cleanup"
