"""The scale regression's arithmetic: the reads judged flat per trial and
scaled linearly, the killed restore judged as measured at 100,000 trials,
never scaled from a smaller size. (The runs need minutes:
`python -m benchmarks scale_regression`.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchmarks import callback_trials, scale, scale_regression
from benchmarks.scale_reads import FIFO, FROM_PATH, KILLED, RESTORE, STATUS


def cell(seconds: float) -> dict[str, Any]:
    return {"cpu_s": seconds, "wall_s": seconds + 0.1, "peak_rss_kb": 100_000.0}


def test_a_flat_read_is_scaled_linearly_to_100000_trials() -> None:
    line, held = scale_regression.read_check(
        FROM_PATH, FIFO, {1_000: cell(0.02), 10_000: cell(0.22)}
    )
    assert held
    assert line == (
        "- from_path on fifo, CPU: 1,000: 0.02 s, 10,000: 0.22 s; per trial 1.10x (<= 1.2x), "
        "2.2 s scaled linearly to 100,000 (< 5 s): held"
    )


def test_a_read_growing_per_trial_or_over_its_target_regressed() -> None:
    line, held = scale_regression.read_check(STATUS, FIFO, {1_000: cell(0.02), 10_000: cell(0.3)})
    assert not held
    assert "per trial 1.50x (<= 1.2x), 3.0 s scaled linearly" in line
    assert line.endswith("**REGRESSED**")
    _, held = scale_regression.read_check(STATUS, FIFO, {1_000: cell(0.5), 10_000: cell(5.0)})
    assert not held  # flat, but 50 s at 100,000


def test_a_failed_read_regressed() -> None:
    line, held = scale_regression.read_check(STATUS, FIFO, {1_000: cell(0.02), 10_000: "killed"})
    assert not held
    assert line == "- status on fifo: FAILED {10000: 'killed'}"


def test_the_restore_is_judged_on_its_cpu_time_as_measured_at_100000_trials() -> None:
    """On its CPU time: on a loaded machine the wall time measures the load."""
    line, held = scale_regression.restore_check({"cpu_s": 6.1, "wall_s": 29.7}, 25.0)
    assert held
    assert line == (
        "- restore of killed 100,000, to its first new result, measured at 100,000: "
        "6.10 s CPU (< 10 s; 29.70 s wall at load 25.0): held"
    )
    line, held = scale_regression.restore_check(cell(10.0), 0.5)
    assert not held
    assert line.endswith("**REGRESSED**")
    line, held = scale_regression.restore_check("timed out", 0.5)
    assert not held
    assert line == "- restore of killed 100,000, to its first new result: FAILED timed out"


def test_the_restore_is_measured_at_100000_not_scaled_from_the_read_sizes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The restore at 10,000 trials (no snapshot yet, the whole log stepped)
    costs what a linear scaling takes for 19.7 s at 100,000; the real
    restore there (a snapshot and the tail after it) takes 4 s."""
    restore_wall_s = {1_000: 0.20, 10_000: 1.97, 100_000: 4.08}
    asked: list[tuple[str, str, int]] = []

    def ensure_built(sweep: str, trials: int, root: Path) -> tuple[Path, dict[str, Any]]:
        return root / f"{sweep}-{trials}", {}

    def measure(what: str, sweep: str, trials: int, directory: Path) -> dict[str, Any]:
        asked.append((what, sweep, trials))
        if what == RESTORE:
            return {"cpu_s": restore_wall_s[trials], "wall_s": restore_wall_s[trials]}
        return cell(0.2 * trials / 10_000)

    monkeypatch.setattr(scale_regression, "ensure_built", ensure_built)
    monkeypatch.setattr(scale_regression, "measure", measure)
    lines, ok = scale_regression.run((1_000, 10_000), str(tmp_path), memory_runs=0, callback_runs=0)
    assert ok, lines
    assert [a for a in asked if a[0] == RESTORE] == [(RESTORE, KILLED, 100_000)]
    assert lines[-1].startswith(
        "- restore of killed 100,000, to its first new result, measured at 100,000: "
        "4.08 s CPU (< 10 s; 4.08 s wall at load "
    )


def test_a_callback_costing_more_than_its_target_times_no_callback_regressed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The medians of the rounds compared: the 30 s round of `len(trials)`
    (a loaded machine) decides nothing; 1.6 times no callback does."""
    seconds = {
        callback_trials.NO_CALLBACK: [10.0, 10.0, 11.0],
        callback_trials.IGNORES_TRIALS: [10.5, 10.0, 10.0],
        callback_trials.READS_TRIALS: [11.0, 30.0, 11.5],
        callback_trials.READS_ENTRIES: [16.0, 16.0, 16.0],
    }
    asked: list[tuple[str, int, str | None]] = []

    def measured(case: str, trials: int, source: str | None) -> dict[str, Any] | str:
        asked.append((case, trials, source))
        return {"cpu_s": seconds[case][sum(a[0] == case for a in asked) - 1]}

    monkeypatch.setattr(callback_trials, "measured", measured)
    line, held = scale_regression.callback_check(3)
    assert not held
    assert line == (
        "- callbacks' trials at 10,000 simulated ASHA trials, driver CPU against no callback: "
        "ignores trials 1.00x, reads len(trials) 1.15x, reads every entry in turn 1.60x "
        "(<= 1.5x): **REGRESSED**"
    )
    assert {a[1:] for a in asked} == {(10_000, None)}
    assert len(asked) == 12
    seconds[callback_trials.READS_ENTRIES] = [11.0] * 3
    asked.clear()
    assert scale_regression.callback_check(3)[1]
    monkeypatch.setattr(callback_trials, "measured", lambda *args: "killed")
    line, held = scale_regression.callback_check(1)
    assert not held
    assert line.startswith("- callbacks' trials at 10,000 simulated ASHA trials: FAILED ")
    assert line.endswith(": killed")


def build(growth_kb: float) -> dict[str, Any]:
    return {"cpu_s": 1.0, "rss_growth_kb": growth_kb, "peak_rss_kb": 90_000.0, "finished": 1}


def test_memory_is_the_median_rss_growth_per_extra_trial_of_fresh_pairs() -> None:
    """(15,400 - 2,600) KB / 9,000 trials = 1.42 KB; the median of three
    pairs, so one pair's noise (the 2.50) decides nothing."""
    pairs = [
        {1_000: build(2_600.0), 10_000: build(15_400.0)},
        {1_000: build(2_600.0), 10_000: build(25_100.0)},
        {1_000: build(3_100.0), 10_000: build(16_600.0)},
    ]
    line, held = scale_regression.memory_check(FIFO, pairs)
    assert held
    assert line == (
        "- driver memory per finished trial on fifo, RSS growth 1,000 to 10,000 trials: "
        "1.42, 2.50, 1.50 KB; median 1.50 KB (<= 2 KB): held"
    )


def test_memory_over_two_kb_a_trial_or_a_failed_build_regressed() -> None:
    over = [{1_000: build(2_600.0), 10_000: build(2_600.0 + 9_000 * 2.1)}]
    line, held = scale_regression.memory_check(FIFO, over)
    assert not held
    assert "median 2.10 KB (<= 2 KB): **REGRESSED**" in line
    line, held = scale_regression.memory_check(FIFO, [{1_000: build(1.0), 10_000: "killed"}])
    assert not held
    assert line == "- driver memory per finished trial on fifo: FAILED ['killed']"


def test_the_memory_check_builds_fresh_pairs_at_the_smallest_and_largest_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[tuple[str, int]] = []

    def fresh_build(sweep: str, trials: int, directory: Path) -> dict[str, Any]:
        built.append((sweep, trials))
        return build(float(trials))

    monkeypatch.setattr(scale_regression, "fresh_build", fresh_build)
    pairs = scale_regression.memory_pairs(FIFO, (1_000, 5_000, 10_000), 2)
    assert built == [(FIFO, 1_000), (FIFO, 10_000)] * 2
    assert [sorted(p) for p in pairs] == [[1_000, 10_000]] * 2


def test_the_suite_asha_check_runs_fresh_in_process_children_at_both_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spawned: list[tuple[str, int, bool]] = []

    def spawn(
        sweep: str, trials: int, sizes: scale.Sizes, trace: bool, in_process: bool = False
    ) -> scale.Run:
        spawned.append((sweep, trials, in_process))
        data = {"rss_before_kb": 100_000.0, "rss_after_kb": 100_000.0 + 1.5 * trials}
        return scale.Run(sweep, trials, data, problem="killed" if len(spawned) == 4 else None)

    monkeypatch.setattr(scale, "spawn", spawn)
    pairs = scale_regression.suite_asha_pairs((1_000, 4_000), 2)
    assert spawned == [(scale.ASHA, 1_000, True), (scale.ASHA, 4_000, True)] * 2
    assert pairs[0] == {1_000: {"rss_growth_kb": 1_500.0}, 4_000: {"rss_growth_kb": 6_000.0}}
    assert pairs[1][4_000] == "killed"
    line, held = scale_regression.memory_check(
        scale_regression.SUITE_ASHA, pairs[:1], scale_regression.SUITE_ASHA_TARGET_KB
    )
    assert held
    assert line == (
        "- driver memory per finished trial on asha, the scale suite's experiment in-process, "
        "RSS growth 1,000 to 4,000 trials: 1.50 KB; median 1.50 KB (<= 1.8 KB): held"
    )
    over = [{1_000: {"rss_growth_kb": 1_500.0}, 4_000: {"rss_growth_kb": 1_500.0 + 3_000 * 1.9}}]
    line, held = scale_regression.memory_check(
        scale_regression.SUITE_ASHA, over, scale_regression.SUITE_ASHA_TARGET_KB
    )
    assert not held  # 1.9 KB a trial in-process: over 2 KB on Ray at 100,000
    assert line.endswith("median 1.90 KB (<= 1.8 KB): **REGRESSED**")


@pytest.mark.slow
def test_the_suite_asha_experiment_runs_in_process_without_ray() -> None:
    """The child the check spawns, for real at a small size: every trial
    ran, under ASHA, and no Ray was started."""
    sizes = scale.Sizes(fifo_trials=(), asha_trials=(30,), max_t=8, warm_up=0)
    run = scale.spawn(scale.ASHA, 30, sizes, trace=False, in_process=True)
    assert run.problem is None, run.problem
    assert "ray_init_s" not in run.data
    assert run.data["finished"] == 30
    assert run.growth_kb > 0
