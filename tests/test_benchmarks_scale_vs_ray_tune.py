"""The scale comparison against Ray Tune: a child that did not do the work
is a failure, never a number; Ray Tune missing is said, not a failure; the
ratios are Ray Tune's over tunecore's. (The runs need Ray and Ray Tune and
many minutes: `python -m benchmarks scale_vs_ray_tune`.)"""

from __future__ import annotations

from typing import Any

from benchmarks import scale_vs_ray_tune
from benchmarks.scale import ASHA, FIFO
from benchmarks.scale_vs_ray_tune import (
    FIT,
    FROM_PATH,
    KILL,
    RAY_TUNE,
    RESTORE,
    RESULTS,
    TUNECORE,
    Size,
    Sizes,
)


def fitted(trials: int, iterations: dict[str, int], **extra: Any) -> dict[str, Any]:
    data = {
        "wall_s": 2.0,
        "cpu_s": 1.0,
        "peak_rss_kb": 204_800.0,
        "trials": trials,
        "errors": 0,
        "iterations": iterations,
    }
    return {**data, **extra}


def test_a_fit_that_did_the_work_passes() -> None:
    assert scale_vs_ray_tune.check(FIT, FIFO, 100, 10, fitted(100, {"1": 100})) is None
    asha = fitted(10, {"1": 7, "4": 2, "10": 1})
    assert scale_vs_ray_tune.check(FIT, ASHA, 10, 10, asha) is None


def test_a_fit_with_missing_failed_or_unstopped_trials_fails() -> None:
    check = scale_vs_ray_tune.check
    assert check(FIT, FIFO, 100, 10, fitted(99, {"1": 99})) == "99 trials, expected 100"
    assert check(FIT, FIFO, 10, 10, fitted(10, {"1": 10}, errors=2)) == "2 trials failed"
    assert check(FIT, FIFO, 10, 10, fitted(10, {"1": 9, "0": 1})) == (
        "expected one result per trial, got [0, 1] results"
    )
    assert check(FIT, ASHA, 10, 10, fitted(10, {"10": 10})) == "ASHA stopped no trial early"


def test_a_kill_must_come_at_half_and_a_restore_must_reach_a_new_result() -> None:
    check = scale_vs_ray_tune.check
    assert check(KILL, FIFO, 100, 10, {"killed_after": 50}) is None
    assert check(KILL, FIFO, 100, 10, {"killed_after": 7}) == (
        "expected a kill after 50 trials, got {'killed_after': 7}"
    )
    assert check(RESTORE, FIFO, 100, 10, {"wall_s": 1.0, "cpu_s": 0.5}) is None
    assert check(RESULTS, FIFO, 100, 10, {"trials": 60}) == "60 trials, expected 100"


def read(wall_s: float, cpu_s: float) -> dict[str, Any]:
    return {"wall_s": wall_s, "cpu_s": cpu_s, "peak_rss_kb": 102_400.0, "trials": 100}


def test_the_ratio_is_ray_tunes_over_tunecores_and_none_without_both() -> None:
    size = Size(
        FIFO,
        100,
        {
            (FIT, RAY_TUNE): fitted(100, {"1": 100}, wall_s=30.0),
            (FIT, TUNECORE): fitted(100, {"1": 100}, wall_s=1.5),
            (RESULTS, RAY_TUNE): read(3.0, 2.0),
            (RESULTS, TUNECORE): "exit code 1:\nboom",
        },
    )
    assert scale_vs_ray_tune.ratio(size, FIT, "wall_s") == 20.0
    assert scale_vs_ray_tune.ratio(size, FIT, "peak_rss_kb") == 1.0
    assert scale_vs_ray_tune.ratio(size, RESULTS, "wall_s") is None
    assert scale_vs_ray_tune.ratio(size, RESTORE, "wall_s") is None


def test_the_report_names_each_failure_and_fails() -> None:
    size = Size(
        FIFO,
        100,
        {
            (FIT, RAY_TUNE): fitted(100, {"1": 100}, wall_s=30.0),
            (FIT, TUNECORE): fitted(100, {"1": 100}, wall_s=1.5),
            (FROM_PATH, TUNECORE): "timed out after 10 s",
        },
    )
    table, ok = scale_vs_ray_tune.report([size], Sizes.of(quick=True))
    assert not ok
    assert "| FIFO x 1 | 100 | `fit()`, wall s | 30.00 | 1.50 | 20.0x |" in table
    assert "| FIFO x 1 | 100 | driver peak RSS, MB | 200 | 200 | 1.0x |" in table
    assert "(tunecore only) | - | FAILED | - |" in table
    assert "- tunecore from_path fifo 100: timed out after 10 s" in table


def test_ray_tune_missing_is_said_and_is_not_a_failure() -> None:
    missing = {"unavailable": "cannot import ray.tune: No module named 'fsspec'"}
    size = Size(
        ASHA,
        20,
        {
            (FIT, RAY_TUNE): missing,
            (FIT, TUNECORE): fitted(20, {"1": 15, "4": 4, "10": 1}),
        },
    )
    table, ok = scale_vs_ray_tune.report([size], Sizes.of(quick=True))
    assert ok
    assert "| ASHA x <= 10 | 20 | `fit()`, wall s | unavailable | 2.00 | - |" in table
    assert "Ray Tune unavailable: cannot import ray.tune: No module named 'fsspec'" in table
