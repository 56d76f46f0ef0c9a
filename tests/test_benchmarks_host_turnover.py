"""The trial-turnover benchmark runs real trials through a worker's host:
every trial gets its directory, the process's working directory is given
back, and a row reports the spread it measured."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from benchmarks import host_turnover, scratch


@pytest.fixture
def scratch_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(scratch.SCRATCH_ENV, str(tmp_path))
    scratch.root.cache_clear()
    yield tmp_path
    scratch.root.cache_clear()  # the next test finds its own root, not this one


@pytest.mark.parametrize("pattern", sorted(host_turnover.PATTERNS))
def test_each_trial_runs_in_its_own_directory_and_the_cwd_comes_back(
    pattern: str, scratch_root: Path
) -> None:
    before = os.getcwd()
    seconds = host_turnover.turnovers(pattern, trials=3)
    assert os.getcwd() == before
    assert len(seconds) == 3
    assert all(s > 0 for s in seconds)
    [run] = scratch_root.iterdir()
    trials = sorted(p.name for p in run.iterdir())
    assert trials == [f"trial_{n:05d}" for n in range(3 + host_turnover.WARM_UP)]


def test_a_row_counts_the_turnovers_over_a_millisecond() -> None:
    row = host_turnover.row("a", 2, [0.0001, 0.0002, 0.004, 0.0001])
    assert row == "| a | 2 | 0.150 ms | 1.100 ms | 25.0% | 4.00 ms |"


def test_busy_cores_are_ended_with_the_block() -> None:
    with host_turnover.busy_cores(1):
        pass
    assert multiprocessing.active_children() == []
