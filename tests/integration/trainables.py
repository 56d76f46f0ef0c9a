"""Trainables for the integration tests. Shipped to Ray workers by value."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path

import tunecore
from tunecore.model import JsonDict


def count_to(config: dict[str, int]) -> None:
    """Reports `loss = 1/i` for i = 1..config["steps"], then returns."""
    for i in range(1, config["steps"] + 1):
        tunecore.report({"loss": 1.0 / i, "x": config.get("x", 0)})


def checkpointing(config: dict[str, int]) -> None:
    """Counts to `steps`, checkpointing its counter at every report and
    resuming from the checkpoint it is given."""
    start = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            start = json.loads((Path(directory) / "state.json").read_text())["count"]
    context = tunecore.get_context()
    for count in range(start + 1, config["steps"] + 1):
        report_with_checkpoint(Path(context.trial_dir), count, start)


def report_with_checkpoint(trial_dir: Path, count: int, start: int) -> None:
    """Save `count` in a new directory and report it as the checkpoint."""
    saved = trial_dir / "user_checkpoints" / f"c{count}"
    saved.mkdir(parents=True, exist_ok=True)
    (saved / "state.json").write_text(json.dumps({"count": count}))
    tunecore.report(
        {"count": count, "resumed_from": start},
        checkpoint=tunecore.Checkpoint.from_directory(str(saved)),
    )


def dies_once_at(config: dict[str, int]) -> None:
    """Like `checkpointing`, but the worker process dies (os._exit) the
    first `config["deaths"]` times it reaches count `config["die_at"]`."""
    context = tunecore.get_context()
    deaths_file = Path(context.trial_dir) / "deaths"
    start = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            start = json.loads((Path(directory) / "state.json").read_text())["count"]
    for count in range(start + 1, config["steps"] + 1):
        deaths = int(deaths_file.read_text()) if deaths_file.exists() else 0
        if count == config["die_at"] and deaths < config["deaths"]:
            deaths_file.write_text(str(deaths + 1))
            os._exit(1)
        report_with_checkpoint(Path(context.trial_dir), count, start)


def raises(config: dict[str, int]) -> None:
    tunecore.report({"loss": 1.0})
    raise ValueError(f"bad value {config['x']}")


class Counter(tunecore.Trainable):
    """The class API: counts up, checkpoints its counter as a dict."""

    def setup(self, config: JsonDict) -> None:
        self.count = 0

    def step(self) -> JsonDict:
        self.count += 1
        return {"count": self.count, "done": self.count >= 4}

    def save_checkpoint(self, checkpoint_dir: str) -> dict[str, int]:
        return {"count": self.count}

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        assert isinstance(checkpoint, dict)
        count = checkpoint["count"]
        assert isinstance(count, int)
        self.count = count


class GatedStart(tunecore.Trainable):
    """A start as slow as the test wants: `setup` waits for the file
    `config["gate"]` (a minute at most, so nothing hangs); each step
    reports the worker's process, which tells a reused actor."""

    def setup(self, config: JsonDict) -> None:
        gate = Path(str(config["gate"]))
        deadline = time.monotonic() + 60
        while not gate.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the gate {gate} never opened")
            time.sleep(0.02)

    def step(self) -> JsonDict:
        return {"pid": os.getpid(), "done": True}


class SaveFails(tunecore.Trainable):
    """Trains to the end, but cannot save a checkpoint."""

    def step(self) -> JsonDict:
        return {"loss": 1.0 / (self.iteration + 1), "done": self.iteration >= 2}

    def save_checkpoint(self, checkpoint_dir: str) -> dict[str, int]:
        raise OSError("disk full")


def counts_with_temporary_checkpoints(config: dict[str, object]) -> None:
    """Ray's documented pattern: a checkpoint every other step, written into
    a temporary directory that is gone as soon as report() returns."""
    step = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            step = int((Path(directory) / "step.txt").read_text())
    while step < int(str(config.get("steps", 8))):
        step += 1
        metrics = {"score": step * float(str(config["rate"])), "step": step}
        if step % 2 == 0:
            with tempfile.TemporaryDirectory() as directory:
                (Path(directory) / "step.txt").write_text(str(step))
                tunecore.report(metrics, checkpoint=tunecore.Checkpoint.from_directory(directory))
        else:
            tunecore.report(metrics)


def reports_then_blocks(config: dict[str, object]) -> None:
    """Reports once, then (unless `blocks` is False) never comes back to
    report(): it waits for an event nobody sets (a hung data loader)."""
    tunecore.report({"loss": 1.0})
    if config.get("blocks", True):
        threading.Event().wait()


def prints_its_trial(config: dict[str, object]) -> None:
    """Prints a line naming its trial (for `log_to_file`), reports once."""
    import tunecore  # noqa: PLC0415 - runs in a Ray worker

    print(f"hello from {tunecore.get_context().get_trial_id()}", flush=True)
    tunecore.report({"score": 1})


def sleepy_curve(config: dict[str, float]) -> None:
    """A loss curve whose steps take longer for larger x: 27 steps, 10 to
    30 ms each, so arrival order depends on real time."""
    x = config["x"]
    for step in range(1, 28):
        time.sleep(0.01 + 0.02 * x)
        tunecore.report({"loss": (x - 0.3) ** 2 + 1.0 / step})


def sleepy_curve_checkpointed(config: dict[str, float]) -> None:
    """`sleepy_curve`, resuming from its checkpoint: a paused trial goes
    on where it was."""
    x = config["x"]
    start = 1
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = int(Path(directory, "step").read_text()) + 1
    for step in range(start, 28):
        time.sleep(0.01 + 0.02 * x)
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tunecore.report(
                {"loss": (x - 0.3) ** 2 + 1.0 / step},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def reports_from_a_thread(config: dict[str, int]) -> None:
    """Reports `steps` results from a thread it starts, as Ray Tune's
    process-wide session allows."""

    def steps() -> None:
        for step in range(config["steps"]):
            tunecore.report({"loss": float(step)})

    helper = threading.Thread(target=steps)
    helper.start()
    helper.join()


class _TrialsOwnBaseException(BaseException):
    """A BaseException subclass of the user's, beside SystemExit and KeyboardInterrupt."""


def ends_badly(config: dict[str, str]) -> None:
    """Reports once, then ends as `how` says: `ok` returns; `segfault`
    crashes its process; the others raise that BaseException."""
    tunecore.report({"loss": 1.0})
    how = config["how"]
    if how == "segfault":
        import ctypes  # noqa: PLC0415 - only this branch crashes

        ctypes.string_at(0)
    raising: dict[str, BaseException] = {
        "SystemExit": SystemExit(3),
        "KeyboardInterrupt": KeyboardInterrupt(),
        "_TrialsOwnBaseException": _TrialsOwnBaseException("own"),
    }
    if how in raising:
        raise raising[how]
