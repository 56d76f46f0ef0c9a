"""The dashboard benchmark's own logic: its table's cells, the per-trial
ratio and the targets it marks. (The runs build 10,000-trial experiments
and open Chromium: `python -m benchmarks dashboard_page`.)"""

from __future__ import annotations

from typing import Any

from benchmarks import dashboard_page
from benchmarks.dashboard_page import ASHA, FIFO, FIRST_PAGE, SORT, TARGET_TRIALS


def cell(first_page: float, sort: float, **extra: Any) -> dict[str, Any]:
    return {FIRST_PAGE: first_page, SORT: sort, **extra}


def test_targets_are_judged_at_ten_thousand_trials_met_or_not() -> None:
    results: dashboard_page.Results = {
        (FIFO, 1_000): cell(5.0, 5.0),  # a smaller size is not judged
        (FIFO, TARGET_TRIALS): cell(1.5, 0.2),
        (ASHA, TARGET_TRIALS): cell(2.5, 1.0),
    }
    lines, failed = dashboard_page.target_lines(results)
    assert failed
    assert lines == [
        "- the page open to all 10,000 rows shown, fifo, < 2 s: 1.50 s (met)",
        "- the page open to all 10,000 rows shown, asha, < 2 s: 2.50 s (**NOT met**)",
        "- sorting all 10,000 rows by a metric, fifo, < 1 s: 0.20 s (met)",
        "- sorting all 10,000 rows by a metric, asha, < 1 s: 1.00 s (**NOT met**)",
    ]


def test_a_page_not_opened_or_a_size_not_run_is_not_measured_not_failed() -> None:
    results: dashboard_page.Results = {
        (FIFO, TARGET_TRIALS): {"browser": "chromium is not installed"},
        (ASHA, 1_000): cell(0.1, 0.1),
    }
    lines, failed = dashboard_page.target_lines(results)
    assert not failed
    assert all(line.endswith("(not measured)") for line in lines)


def test_a_route_shows_its_time_and_size_and_a_failed_run_says_so() -> None:
    measured = {"GET /api/trials (ms)": 12.34, "GET /api/trials (bytes)": 2048}
    assert dashboard_page.shown(measured, "GET /api/trials (ms)") == "12.3 (2 KiB)"
    assert dashboard_page.shown(measured, SORT) == "-"
    assert dashboard_page.shown("exit code 1", SORT) == "FAILED"


def test_the_ratio_is_per_trial_largest_over_smallest() -> None:
    cells: dict[int, dashboard_page.Cell] = {
        1_000: cell(0.5, 0.1),
        10_000: cell(1.0, 2.0),
        100_000: "timed out",
    }
    assert dashboard_page.ratio(cells, SORT) == "2.00x"
    assert dashboard_page.ratio(cells, FIRST_PAGE) == "0.20x"
    assert dashboard_page.ratio({1_000: cell(0.5, 0.1)}, SORT) == "-"


def test_the_report_lists_failures_and_fails_the_run() -> None:
    results: dashboard_page.Results = {
        (FIFO, 1_000): cell(0.5, 0.1),
        (ASHA, 1_000): "exit code 1:\nboom",
    }
    table, ok, _ = dashboard_page.report((1_000,), results, "no chromium")
    assert not ok
    assert "- asha 1,000: exit code 1:\nboom" in table
    assert "The page was not opened: no chromium." in table
    assert "| first page, all rows (s) | fifo | 0.500 |" in table


def test_a_sweep_not_run_has_no_rows_and_no_targets() -> None:
    results: dashboard_page.Results = {(ASHA, TARGET_TRIALS): cell(1.0, 0.5)}
    table, ok, targets = dashboard_page.report((TARGET_TRIALS,), results, None)
    assert ok
    assert "| fifo |" not in table
    assert len(targets) == 2
    assert all(", asha, " in line for line in targets)
