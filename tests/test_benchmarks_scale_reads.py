"""The scale-reads benchmark's own logic: ratios, memory per trial, and the
targets it marks. (The runs need minutes and 100,000-trial experiments:
`python -m benchmarks scale_reads`.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchmarks import scale_reads
from benchmarks.scale_reads import (
    ASHA,
    FIFO,
    FROM_PATH,
    KILLED,
    REDRAW,
    RESTORE,
    STATUS,
    Sizes,
)


def cell(cpu_s: float, **extra: Any) -> dict[str, Any]:
    return {"cpu_s": cpu_s, "wall_s": cpu_s, "peak_rss_kb": 100_000.0, **extra}


def test_the_per_trial_ratio_is_the_largest_sizes_over_the_smallests() -> None:
    flat = {1_000: cell(0.1), 10_000: cell(1.0), 100_000: cell(10.0)}
    assert scale_reads.per_trial_ratio(flat) == 1.0
    growing = {1_000: cell(0.1), 100_000: cell(20.0)}
    assert scale_reads.per_trial_ratio(growing) == 2.0


def test_a_failed_size_is_left_out_of_the_ratio_and_one_size_gives_none() -> None:
    cells: dict[int, Any] = {1_000: cell(0.1), 10_000: "timed out", 100_000: cell(10.0)}
    assert scale_reads.per_trial_ratio(cells) == 1.0
    assert scale_reads.per_trial_ratio({1_000: cell(0.1), 10_000: "failed"}) is None


def test_memory_per_trial_cancels_the_fixed_costs() -> None:
    builds: dict[tuple[str, int], Any] = {
        (FIFO, 1_000): {"rss_growth_kb": 10_000.0 + 1.5 * 1_000},
        (FIFO, 100_000): {"rss_growth_kb": 10_000.0 + 1.5 * 100_000},
        (ASHA, 1_000): "failed",
    }
    assert scale_reads.memory_per_trial(builds, FIFO) == 1.5
    assert scale_reads.memory_per_trial(builds, ASHA) is None


def test_targets_are_marked_met_not_met_or_not_measured() -> None:
    sizes = Sizes(trials=(1_000, 100_000), restore_trials=(1_000, 100_000), searcher_trials=())
    results: scale_reads.Results = {
        (FROM_PATH, FIFO, 100_000): cell(4.0),
        (FROM_PATH, ASHA, 100_000): cell(6.0),
        (STATUS, FIFO, 100_000): cell(1.0),
        (RESTORE, KILLED, 100_000): cell(3.0),
        (REDRAW, FIFO, 1_000): cell(0.1, lines_ms=1.0, table_ms=1.0),
        (REDRAW, FIFO, 100_000): cell(0.1, lines_ms=1.1, table_ms=50.0),
    }
    lines, failed = scale_reads.target_lines(sizes, {}, results, [])
    text = "\n".join(lines)
    assert "from_path on fifo 100,000 < 5 s CPU: 4.00 s (met)" in text
    assert "from_path on asha 100,000 < 5 s CPU: 6.00 s (**NOT met**)" in text
    assert "status on asha 100,000 < 5 s CPU: - (not measured)" in text
    assert (
        "restore of killed 100,000 to its first new result < 10 s wall: 3.00 s; 3.00 s CPU" in text
    )
    assert "redraw (lines) on fifo, largest / smallest <= 1.2x: 1.10x (met)" in text
    assert "redraw (table) on fifo, largest / smallest <= 1.2x: 50.00x (**NOT met**)" in text
    assert failed


def test_all_targets_met_is_not_a_failure() -> None:
    sizes = Sizes(trials=(1_000, 100_000), restore_trials=(), searcher_trials=())
    results: scale_reads.Results = {(FROM_PATH, FIFO, 100_000): cell(1.0)}
    _, failed = scale_reads.target_lines(sizes, {}, results, [])
    assert not failed


def test_a_target_set_at_100000_trials_is_judged_from_a_smaller_size_scaled() -> None:
    sizes = Sizes(trials=(1_000, 10_000), restore_trials=(10_000,), searcher_trials=())
    results: scale_reads.Results = {
        (FROM_PATH, FIFO, 10_000): cell(0.4),
        (FROM_PATH, ASHA, 10_000): cell(0.6),
        (RESTORE, KILLED, 10_000): cell(0.5),
    }
    lines, failed = scale_reads.target_lines(sizes, {}, results, [])
    text = "\n".join(lines)
    assert (
        "from_path on fifo 100,000 < 5 s CPU: 0.40 s at 10,000, 4.0 s scaled to 100,000 (met)"
        in text
    )
    assert (
        "from_path on asha 100,000 < 5 s CPU: 0.60 s at 10,000, "
        "6.0 s scaled to 100,000 (**NOT met**)" in text
    )
    assert (
        "< 10 s wall: 0.50 s at 10,000, 5.0 s scaled to 100,000; 0.50 s CPU at 10,000 (met)" in text
    )
    assert failed


def test_the_cache_of_builds_changes_with_tunecore_s_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Builds made by other code are never read: their memory is that
    code's. The cache directory is named by a digest of the package's
    source, which changes with any file's bytes or name."""
    import tunecore  # noqa: PLC0415 - the package whose location is patched

    package = tmp_path / "tunecore"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "loop.py").write_text("x = 1\n")
    monkeypatch.setattr(tunecore, "__file__", str(package / "__init__.py"))
    first = scale_reads.cache_root(str(tmp_path / "cache"))
    assert scale_reads.cache_root(str(tmp_path / "cache")) == first
    (package / "loop.py").write_text("x = 2\n")
    edited = scale_reads.cache_root(str(tmp_path / "cache"))
    (package / "loop.py").rename(package / "step.py")
    renamed = scale_reads.cache_root(str(tmp_path / "cache"))
    assert len({first, edited, renamed}) == 3
    assert first.parent == tmp_path / "cache"


def test_builds_of_other_code_are_deleted_and_this_codes_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    root = cache / "1.0-new"
    kept = root / "fifo-1000"
    older = cache / "1.0-old" / "fifo-1000"
    for directory in (kept, older):
        directory.mkdir(parents=True)
        (directory / "events.log").write_bytes(b"x" * 100)
    scale_reads.drop_older_builds(root)
    assert (kept / "events.log").is_file()
    assert not older.parent.exists()
    scale_reads.drop_older_builds(tmp_path / "nowhere" / "1.0-new")  # no cache yet: nothing to do
