"""A `functools.partial` trainable resumes from a log an earlier tunecore
wrote, which recorded it as `partial` (now it is named by its function, as
Ray names it: docs/ray-examples.md #118)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import tunecore
from tunecore.api.restored import TrainableMismatchError, restored_trainable
from tunecore.model import JsonDict


def train(config: JsonDict, scale: float) -> None:
    tunecore.report({"loss": scale})


def other(config: JsonDict) -> None:
    tunecore.report({"loss": 0.0})


def test_a_partial_resumes_a_log_that_recorded_it_as_partial(tmp_path: Path) -> None:
    given = functools.partial(train, scale=2.0)
    assert restored_trainable("partial", given, tmp_path) is given
    assert restored_trainable("partial_2", given, tmp_path) is given


def test_a_log_naming_partial_is_still_checked_against_other_trainables(tmp_path: Path) -> None:
    with pytest.raises(TrainableMismatchError):
        restored_trainable("partial", other, tmp_path)
