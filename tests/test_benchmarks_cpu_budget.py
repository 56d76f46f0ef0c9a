"""Where a benchmark run's CPU went: the machine's busy share, and the CPU
of Ray's worker processes, counted even when they exit before the run ends."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from benchmarks.cpu_budget import RayProcessesCpu, busy_share, cpu_ticks

SPIN = "import time\nwhile time.process_time() < {seconds}: pass\n"
"""A process that uses `seconds` of CPU, however loaded the machine is (a
wall-clock spin got 0.21 s of CPU in 0.4 s beside two CI runs)."""


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


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash's exec -a to set a title")
def test_a_ray_worker_that_exits_before_the_end_is_still_counted() -> None:
    """A process titled like a Ray worker spins for 0.4 s of CPU and exits;
    the sampler saw it while it ran. One spinning for 1 s under another title is
    not Ray's and is left out. (The test session's own Ray counts too, but
    idle it uses far less than the margin.)"""
    sampler = RayProcessesCpu(interval_s=0.02)
    sampler.start()
    for title, seconds in (("ray::FakeWorker", 0.4), ("not-ray", 1.0)):
        spin = SPIN.format(seconds=seconds)
        subprocess.run(
            ["bash", "-c", f'exec -a {title} "$0" -c "$1"', sys.executable, spin], check=True
        )
    used = sampler.stop()
    assert 0.3 <= used["workers"] <= 0.9


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash's exec -a to set a title")
def test_a_worker_forked_by_the_raylet_is_a_worker_once_it_has_its_title(tmp_path: Path) -> None:
    """The raylet forks a worker, which bears the raylet's name until it
    execs Python: a process seen under a daemon's name while young is
    looked at again, and counted by the title it settles on."""
    script = tmp_path / "worker.sh"
    script.write_text(
        'sleep 0.1\nexec -a ray::FakeWorker "$1" -c "$2"\n',
        encoding="utf-8",
    )
    sampler = RayProcessesCpu(interval_s=0.02)
    sampler.start()
    subprocess.run(
        [
            "bash",
            "-c",
            f'exec -a raylet bash {script} "$0" "$1"',
            sys.executable,
            SPIN.format(seconds=0.4),
        ],
        check=True,
    )
    used = sampler.stop()
    assert 0.3 <= used["workers"] <= 0.9
    assert used["daemons"] < 0.15


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash's exec -a to set a title")
def test_a_ray_worker_another_process_started_is_not_counted(tmp_path: Path) -> None:
    """Another Ray on a shared machine is no part of this run: a process
    titled like a Ray worker spinning while the sampler runs, orphaned by
    the shell that started it (so not the sampler's descendant), is left
    out."""
    done = tmp_path / "done"
    spin = SPIN.format(seconds=0.4) + f"open({str(done)!r}, 'w').close()\n"
    sampler = RayProcessesCpu(interval_s=0.02)
    sampler.start()
    subprocess.run(
        ["bash", "-c", 'exec -a ray::OtherWorker "$0" -c "$1" &', sys.executable, spin],
        check=True,
    )  # the shell exits at once; its child, reparented, spins on
    deadline = time.monotonic() + 60
    while not done.exists():  # polls the orphan's own signal that it is done
        assert time.monotonic() < deadline, "the orphaned spinner never finished"
        time.sleep(0.01)
    used = sampler.stop()
    assert used["workers"] < 0.15
