"""`Trial.metric_analysis` as Ray 2.60's: per numeric metric, max, min,
avg, last and the last-5 and last-10 averages over the trial's results."""

from __future__ import annotations

from pathlib import Path

import tunecore as tune


def seven_scores(config: dict[str, object]) -> None:
    for step in range(7):
        tune.report({"score": step, "nested": {"x": 2 * step}, "tag": "text"})


def run_seven_scores(tmp_path: Path) -> None:
    run_config = tune.RunConfig(
        storage_path=str(tmp_path), name="ma", verbose=0, executor="in_process"
    )
    tune.Tuner(seven_scores, run_config=run_config).fit()


def test_a_trials_metric_analysis_reads_all_its_results(tmp_path: Path) -> None:
    run_seven_scores(tmp_path)
    (trial,) = tune.ExperimentAnalysis(str(tmp_path / "ma")).trials
    analysis = trial.metric_analysis
    assert analysis["score"] == {
        "max": 6,
        "min": 0,
        "avg": 3,
        "last": 6,
        "last-5-avg": 4,  # (2 + 3 + 4 + 5 + 6) / 5
        "last-10-avg": 3,  # all seven
    }
    assert analysis["nested/x"]["last-5-avg"] == 8
    assert "tag" not in analysis  # not a number


def test_without_result_rows_the_windows_hold_the_last_value(tmp_path: Path) -> None:
    """Ray's trial always has its windows (kept in memory); read back
    without its result rows, the last value is the one window known."""
    run_seven_scores(tmp_path)
    for result_file in tmp_path.glob("ma/*/result.json"):
        result_file.unlink()
    (trial,) = tune.ExperimentAnalysis(str(tmp_path / "ma")).trials
    assert trial.metric_analysis["score"] == {
        "max": 6,
        "min": 0,
        "avg": 3,
        "last": 6,
        "last-5-avg": 6,
        "last-10-avg": 6,
    }
