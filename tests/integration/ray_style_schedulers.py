"""Schedulers written the way Ray Tune's docs write their own ("Implementing
your own scheduler": subclass `FIFOScheduler`, hooks take `tune_controller`
first and return a string), and a trainable for them. Ray workers do not
have the tests on their path, so the Ray tests ship this module by value."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import tunecore as tune

# `tunecore.schedulers.FIFOScheduler` at run time; a type checker sees the
# pure policy there, which `FIFOScheduler()` builds.
from tunecore.shell.ray_schedulers import FIFOScheduler, TrialScheduler


class StopBelow(FIFOScheduler):
    """Stops a trial whose `score` is below `threshold` from iteration
    `grace` on; records every hook it hears, in order."""

    def __init__(self, threshold: float, grace: int = 2) -> None:
        super().__init__()
        self.threshold = threshold
        self.grace = grace
        self.heard: list[tuple[Any, ...]] = []

    def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
        self.heard.append(("add", trial.trial_id))

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        self.heard.append(("result", trial.trial_id, result["training_iteration"]))
        if result["training_iteration"] >= self.grace and result["score"] < self.threshold:
            return TrialScheduler.STOP
        return TrialScheduler.CONTINUE

    def on_trial_complete(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> None:
        self.heard.append(("complete", trial.trial_id, result["training_iteration"]))


class TakeTurns(FIFOScheduler):
    """Pauses a trial every `every` iterations and resumes the paused trial
    that trained least: trials take turns on the cluster."""

    def __init__(self, every: int = 2) -> None:
        super().__init__()
        self.every = every
        self.trained: dict[str, int] = {}
        self.turns: list[tuple[str, int]] = []

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        iteration = result["training_iteration"]
        self.trained[trial.trial_id] = iteration
        if iteration % self.every == 0:
            self.turns.append((trial.trial_id, iteration))
            return TrialScheduler.PAUSE
        return TrialScheduler.CONTINUE

    def choose_trial_to_run(self, tune_controller: Any) -> Any:
        trials = tune_controller.get_trials()
        for trial in trials:
            if trial.status == "PENDING":
                return trial
        paused = [trial for trial in trials if trial.status == "PAUSED"]
        if not paused:
            return None
        return min(paused, key=lambda trial: self.trained.get(trial.trial_id, 0))


class BreaksAt(FIFOScheduler):
    """Raises on the first result at `iteration` (None: never): a scheduler
    with a bug, and the same one fixed."""

    def __init__(self, iteration: int | None) -> None:
        super().__init__()
        self.iteration = iteration

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        if result["training_iteration"] == self.iteration:
            raise RuntimeError(f"broke at iteration {self.iteration}")
        return TrialScheduler.CONTINUE


TURNS_OF_THREE = [(1, 2), (2, 2), (3, 2), (1, 4), (2, 4), (3, 4)]
"""`TakeTurns(every=2)`'s turns as (x, iteration), over `climb` with
`steps=4` and `x` in 1, 2, 3 run one at a time: each trial's first turn
in the order added, then the least trained goes next."""


def climb(config: dict[str, Any]) -> None:
    """Reports `score = x * iteration` for `steps` iterations, each with a
    checkpoint, so a paused trial resumes where it was (`start` says from
    which step it last started). With `fail_once`
    (a path), the first run that finds no file there creates it and fails
    after its first result."""
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory, open(os.path.join(directory, "step")) as f:
            start = json.load(f)
    for step in range(start, config["steps"]):
        saved = tempfile.mkdtemp()
        with open(os.path.join(saved, "step"), "w") as f:
            json.dump(step + 1, f)
        tune.report(
            {"score": config["x"] * (step + 1), "start": start},
            checkpoint=tune.Checkpoint.from_directory(saved),
        )
        marker = config.get("fail_once")
        if marker and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("failing once, on purpose")
