"""The measurements every benchmark child takes besides its own clock."""

from __future__ import annotations

import os
import time

from benchmarks.children import busy_share, cpu_ticks


def test_busy_share_is_the_part_of_all_cores_time_not_idle() -> None:
    assert busy_share((1_000, 400), (1_200, 450)) == 0.75  # 200 ticks, 50 of them idle
    assert busy_share((1_000, 400), (1_200, 600)) == 0.0
    assert busy_share((1_000, 400), (1_000, 400)) == 0.0  # no tick between the readings


def test_a_busy_loop_keeps_at_least_one_cores_share_busy() -> None:
    """A process spinning for 0.3 s keeps one core busy: the machine-wide
    share is at least 1 / cores (minus the tick granularity)."""
    cores = os.cpu_count() or 1
    before = cpu_ticks()
    deadline = time.perf_counter() + 0.3
    while time.perf_counter() < deadline:
        pass
    share = busy_share(before, cpu_ticks())
    assert 1.0 / cores - 0.1 <= share <= 1.0
