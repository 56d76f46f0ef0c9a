"""Experiments run without `RunConfig(name=...)` get Ray's default name,
made unique."""

from __future__ import annotations

import datetime
import types
from pathlib import Path

import pytest

import tunecore
import tunecore.api.experiment_names
from tunecore import RunConfig, Tuner


class _FrozenClock(datetime.datetime):
    """Every call to now() lands in the same second."""

    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> _FrozenClock:
        return cls(2026, 11, 24, 1, 2, 3)


def train(config: dict[str, object]) -> None:
    tunecore.report({"score": 1.0})


def test_two_fits_in_the_same_second_get_two_experiments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        tunecore.api.experiment_names, "datetime", types.SimpleNamespace(datetime=_FrozenClock)
    )
    paths = []
    for _ in range(3):
        run = RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process")
        results = Tuner(train, run_config=run).fit()
        assert [r.metrics["score"] for r in results] == [1.0]
        paths.append(results.experiment_path)
    assert [p.name for p in paths] == [
        "train_2026-11-24_01-02-03",
        "train_2026-11-24_01-02-03_2",
        "train_2026-11-24_01-02-03_3",
    ]
