"""The scale benchmark's checks: a run that did not do the work is a failure,
never a row, and the summary compares the largest size with the smallest.
(The runs themselves need Ray and minutes: `python -m benchmarks.scale`.)"""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks import scale, scale_reads, scale_vs_ray_tune
from benchmarks.scale import ASHA, FIFO, Run


def finished(trials: int, iterations: dict[str, int], **extra: Any) -> dict[str, Any]:
    """A child's JSON for a run that finished `trials` trials."""
    data: dict[str, Any] = {
        "finished": trials,
        "errors": 0,
        "logs": 1,
        "log_bytes": 430 * trials,
        "iterations": iterations,
    }
    return {**data, **extra}


def test_a_fifo_run_that_did_the_work_passes() -> None:
    assert scale.check(FIFO, 200, 100, finished(200, {"1": 200})) is None


def test_a_run_with_missing_or_failed_trials_fails() -> None:
    assert scale.check(FIFO, 200, 100, finished(199, {"1": 199})) == "199 trials, expected 200"
    problem = scale.check(FIFO, 200, 100, finished(200, {"1": 200}, errors=3))
    assert problem == "3 trials failed"


def test_a_run_without_an_event_log_fails() -> None:
    problem = scale.check(FIFO, 10, 100, finished(10, {"1": 10}, logs=0, log_bytes=0))
    assert problem == "expected one non-empty events.log, found 0"


def test_a_fifo_trial_with_other_than_one_result_fails() -> None:
    problem = scale.check(FIFO, 10, 100, finished(10, {"1": 9, "0": 1}))
    assert problem == "expected one result per trial, got [0, 1] results"


def test_asha_must_stop_some_trials_early_and_run_some_to_max_t() -> None:
    assert scale.check(ASHA, 10, 100, finished(10, {"1": 7, "4": 2, "100": 1})) is None
    assert scale.check(ASHA, 10, 100, finished(10, {"100": 10})) == "ASHA stopped no trial early"
    problem = scale.check(ASHA, 10, 100, finished(10, {"1": 8, "4": 2}))
    assert problem == "results per trial out of range 1..100: [1, 4]"


def run(sweep: str, trials: int, seconds: float, results: int, growth_kb: float) -> Run:
    data = {
        "seconds": seconds,
        "results": results,
        "rss_before_kb": 100_000.0,
        "rss_after_kb": 100_000.0 + growth_kb,
        "peak_rss_kb": 200_000.0,
        "log_bytes": 400 * results,
        "finished": trials,
    }
    return Run(sweep, trials, data)


def test_the_summary_compares_the_largest_size_with_the_smallest() -> None:
    runs = [
        run(FIFO, 200, 2.0, 200, 40_000.0),
        run(FIFO, 1_000, 9.0, 1_000, 45_000.0),
        run(FIFO, 10_000, 150.0, 10_000, 59_800.0),
        run(ASHA, 100, 2.0, 400, 40_000.0),
        run(ASHA, 1_000, 16.0, 4_000, 41_800.0),
    ]
    assert scale.summary(runs, judge_memory=True) == [
        "- FIFO: driver time per trial at 10,000 trials over 200: 1.50x (target <= 1.2x NOT met)",
        "- FIFO: driver RSS per finished trial, 200 to 10,000 trials: 2.0 KB, "
        "target <= 2 KB NOT met; event log 0.39 KB per trial (on disk, not in the driver)",
        "- ASHA: driver time per result at 1,000 trials over 100: 0.80x (target <= 1.2x met)",
        "- ASHA: driver RSS per finished trial, 100 to 1,000 trials: 2.0 KB, "
        "target <= 2 KB met; event log 1.56 KB per trial (on disk, not in the driver)",
    ]


def test_a_failed_run_is_named_and_fails_the_report() -> None:
    runs = [run(FIFO, 20, 1.0, 20, 1.0), Run(FIFO, 100, {}, problem="exit code 1:\nboom")]
    table, ok = scale.report(runs, scale.Sizes.of(quick=True), quick=True, trace=False)
    assert not ok
    assert "| FIFO 100 x 1 | FAILED |" in table
    assert "- fifo 100: exit code 1:\nboom" in table


def traced(trials: int, traced_kb: float, sites: dict[str, float]) -> Run:
    data = {
        "traced_kb": traced_kb,
        "top_sites": [{"site": s, "code": f"line {s}", "kb": kb} for s, kb in sites.items()],
    }
    return Run(FIFO, trials, data)


def test_the_traced_sites_are_ranked_by_growth_per_trial() -> None:
    small = traced(1_000, 10_000.0, {"/src/a.py:1": 4_000.0, "/src/b.py:2": 100.0})
    large = traced(
        10_000, 37_000.0, {"/src/b.py:2": 9_100.0, "/src/a.py:1": 4_000.0, "/src/c.py:3": 900.0}
    )
    assert scale.sites([small, large]) == [
        "",
        "FIFO, 1,000 to 10,000 trials: the traced Python heap alive after fit() grows "
        "3,072 B per trial; the top sites:",
        "",
        "| site | B / trial | code |",
        "|---|---:|---|",
        "| b.py:2 | 1,024 | `line /src/b.py:2` |",
        "| c.py:3 | 102 | `line /src/c.py:3` |",
        "| a.py:1 | 0 | `line /src/a.py:1` |",
    ]


def measured(table: str, ok: bool, line: str) -> Any:
    """A stand-in for a part's measurement (minutes on Ray): its table,
    whether it passed, its target lines."""
    return lambda *args: (table, ok, [line])


def test_main_prints_each_part_then_every_target_under_its_part(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(scale, "run", measured("RAY TABLE", True, "- on Ray"))
    monkeypatch.setattr(scale_vs_ray_tune, "measure_from", measured("VS TABLE", True, "- vs"))
    monkeypatch.setattr(scale_reads, "measure_from", measured("READS TABLE", False, "- reads"))
    assert scale.main(["--quick"]) == 1  # the reads failed
    assert capsys.readouterr().out == (
        "RAY TABLE\n\nVS TABLE\n\nREADS TABLE\n"
        "\n### Issue 41: the targets (--quick: sizes too small to judge)\n\n"
        "tunecore on Ray (`benchmarks.scale`):\n\n- on Ray\n\n"
        "Against Ray Tune, `reuse_actors=True` (ratios; no target):\n\n- vs\n\n"
        "Reads, restore, memory, searchers (`benchmarks.scale_reads`):\n\n- reads\n"
    )


def test_main_leaves_out_a_part_that_measured_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(scale, "run", measured("RAY TABLE", False, "- on Ray"))
    monkeypatch.setattr(scale_vs_ray_tune, "measure_from", lambda argv: None)
    monkeypatch.setattr(scale_reads, "measure_from", measured("READS TABLE", True, "- reads"))
    assert scale.main(["--skip-reads"]) == 1  # the run on Ray failed
    assert capsys.readouterr().out == (
        "RAY TABLE\n\n\n### Issue 41: the targets\n\n"
        "tunecore on Ray (`benchmarks.scale`):\n\n- on Ray\n"
    )
