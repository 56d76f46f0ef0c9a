"""Fixtures: a trial context in a real temporary directory, and worker
trainables that are stopped at the end of each test, so no function thread
outlives its test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tunecore.model import JsonDict
from tunecore.shell.trainable import FunctionTrainable, TrialContext


def make_context(root: Path, trial_id: str = "t1") -> TrialContext:
    trial_dir = root / trial_id
    trial_dir.mkdir(parents=True, exist_ok=True)
    return TrialContext(
        trial_id=trial_id,
        trial_name=f"{trial_id}_name",
        trial_dir=str(trial_dir),
        experiment_dir=str(root),
    )


@pytest.fixture
def context(tmp_path: Path) -> TrialContext:
    return make_context(tmp_path)


MakeFunction = Callable[..., FunctionTrainable]


@pytest.fixture
def make_function(tmp_path: Path) -> Iterator[MakeFunction]:
    """`make_function(fn, config={}, trial_id="t1")`: a FunctionTrainable
    for `fn` in a fresh trial directory, stopped after the test."""
    made: list[FunctionTrainable] = []

    def make(
        fn: Callable[..., object], config: JsonDict | None = None, trial_id: str = "t1"
    ) -> FunctionTrainable:
        trainable = FunctionTrainable(fn, config or {}, make_context(tmp_path, trial_id))
        made.append(trainable)
        return trainable

    yield make
    for trainable in made:
        trainable.stop()
