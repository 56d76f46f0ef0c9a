"""A worker reuses a class trainable through its `reset_config`, as Ray
Tune reuses actors: `setup` once, `reset_config` for each later trial."""

from __future__ import annotations

import os
from pathlib import Path

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.executors.host import TrialHost
from tunecore.shell.trainable import make_worker_trainable
from tunecore.shell.trainable.worker import TrialContext

EVENTS: list[str] = []


class Resettable(tunecore.Trainable):
    def setup(self, config: JsonDict) -> None:
        EVENTS.append(f"setup {config['x']}")
        self.x = config["x"]

    def step(self) -> JsonDict:
        return {"x": self.x}

    def reset_config(self, new_config: JsonDict) -> bool:
        EVENTS.append(f"reset {new_config['x']}")
        self.x = new_config["x"]
        return True

    def cleanup(self) -> None:
        EVENTS.append("cleanup")


class Refuses(Resettable):
    def reset_config(self, new_config: JsonDict) -> bool:
        EVENTS.append(f"refused {new_config['x']}")
        return False


class NoReset(tunecore.Trainable):
    def setup(self, config: JsonDict) -> None:
        EVENTS.append(f"setup {config['x']}")

    def step(self) -> JsonDict:
        return {"pid": os.getpid()}

    def cleanup(self) -> None:
        EVENTS.append("cleanup")


def context(tmp_path: Path, number: int) -> TrialContext:
    return TrialContext(
        trial_id=f"t{number}",
        trial_name=f"t{number}",
        trial_dir=str(tmp_path / f"t{number}"),
        experiment_dir=str(tmp_path),
    )


def run_three_trials(tmp_path: Path, cls: type) -> list[object]:
    EVENTS.clear()
    host = TrialHost(lambda config, ctx: make_worker_trainable(cls, config, ctx))
    seen: list[object] = []
    for number in range(3):
        host.assign({"x": number}, context(tmp_path, number))
        seen.append(host.train().get("x"))
        host.release()
    return seen


def test_a_class_with_reset_config_is_set_up_once(tmp_path: Path) -> None:
    assert run_three_trials(tmp_path, Resettable) == [0, 1, 2]
    assert EVENTS == ["setup 0", "reset 1", "reset 2"]


def test_a_refused_reset_cleans_up_and_sets_up_anew(tmp_path: Path) -> None:
    assert run_three_trials(tmp_path, Refuses) == [0, 1, 2]
    assert EVENTS == [
        "setup 0",
        "refused 1",
        "cleanup",
        "setup 1",
        "refused 2",
        "cleanup",
        "setup 2",
    ]


def test_a_class_without_reset_config_is_cleaned_up_as_its_trial_ends(tmp_path: Path) -> None:
    run_three_trials(tmp_path, NoReset)
    assert EVENTS == ["setup 0", "cleanup", "setup 1", "cleanup", "setup 2", "cleanup"]
