"""The snapshot-share benchmark's table and target line, from children's
results given here (the benchmark itself is not run in tests)."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks import snapshot_share
from benchmarks.children import Child


def row(trials: int, run_s: float, snapshot_s: float) -> dict[str, Any]:
    return {
        "trials": trials,
        "run_s": run_s,
        "snapshots": 2,
        "snapshot_s": snapshot_s,
        "last_s": snapshot_s / 2,
        "bytes": 1000 * trials,
    }


def test_the_target_is_met_when_every_size_stays_under_five_percent() -> None:
    lines = snapshot_share.table([row(1000, 10.0, 0.1), row(100_000, 100.0, 4.0)])
    assert "| 100,000 | 100.0 | 2 | 4.00 (2.00) | 4.0% | 1,000 |" in lines
    assert lines[-1].endswith("4.0% at most (met)")


def test_one_size_over_five_percent_is_not_met() -> None:
    lines = snapshot_share.table([row(1000, 10.0, 0.6), row(10_000, 100.0, 1.0)])
    assert lines[-1].endswith("6.0% at most (**NOT met**)")


def test_a_child_that_ran_fewer_trials_is_an_error() -> None:
    def runner(_module: str, _args: list[str], _timeout: float) -> Child:
        return Child(row(999, 1.0, 0.01), None)

    with pytest.raises(RuntimeError, match="1000 trials"):
        snapshot_share.main(["--sizes", "1000"], runner=runner)
