"""Ray's own floor on this machine: what no framework on Ray can go below.

Measured in a fresh interpreter with a fresh `ray.init(num_cpus=2)` and
Ray's serializers set up, as the comparison children are:

- starting two actors, from their creation to the first reply of each (a
  run on two CPUs starts at least two workers, inside its timed span);
- an actor method that returns its argument, called and waited for 2,000
  times on one actor, then on two actors kept busy through `ray.wait` (as a
  driver with two running trials does), with the CPU each call of the
  second kind costs the driver (user + system, every thread) and the two
  actors' processes: on a machine whose cores are all busy, the floor is
  CPU, not waiting.

- a trial's entries: a new directory and four files with a line each
  (params.json, result.json, progress.csv, a TensorBoard file: Ray Tune's
  layout, which both frameworks write, Ray Tune a params.pkl more), where
  the runs store (`benchmarks.scratch`) and on tmpfs (`/dev/shm`). Not
  Ray's, but paid per trial by every run that writes that layout, and on
  some file systems a large cost: on the benchmark machine's ext4 it
  moves from under 0.1 ms to 1 ms with the state of the directory's
  block group (`docs/speed.md`, "The eleventh profile").

`floor_s` turns these into a lower bound for a whole run: the start plus
its round trips, two at a time. `benchmarks.vs_ray_tune` measures them in
the same run as its comparison, to tell a target that no framework on Ray
could meet here from one tunecore misses.

    python -m benchmarks.ray_floor
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.children import emit, preload_ray_serializers, run_child
from benchmarks.cpu_budget import process_cpu_s
from benchmarks.scratch import run_dir

CALLS = 2_000
TRIALS = 200  # trials' entries made per place measured
TRIAL_FILES = ("params.json", "result.json", "progress.csv", "events.out.tfevents")


def child() -> None:
    import ray  # noqa: PLC0415

    preload_ray_serializers()
    ray.init(num_cpus=2, include_dashboard=False)

    @ray.remote
    class Echo:
        def echo(self, value: object = None) -> object:
            return value

        def pid(self) -> int:
            return os.getpid()

    ray.get(ray.put(None))  # the serializers' set-up, untimed as in the comparison
    started = time.perf_counter()
    actors = [Echo.remote() for _ in range(2)]  # type: ignore[attr-defined]
    ray.get([a.echo.remote() for a in actors])
    start = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(CALLS):
        ray.get(actors[0].echo.remote())
    one = (time.perf_counter() - started) / CALLS
    pids = [str(pid) for pid in ray.get([a.pid.remote() for a in actors])]
    workers_before = [process_cpu_s(pid) for pid in pids]
    driver_before = time.process_time()
    started = time.perf_counter()
    pending = {a.echo.remote(): a for a in actors}
    for _ in range(CALLS):
        ready, _ = ray.wait(list(pending), num_returns=1)
        actor = pending.pop(ready[0])
        ray.get(ready[0])
        pending[actor.echo.remote()] = actor
    ray.get(list(pending))
    two = (time.perf_counter() - started) / CALLS
    driver_cpu = (time.process_time() - driver_before) / CALLS
    workers_after = [process_cpu_s(pid) for pid in pids]
    workers_cpu = sum(
        after - before
        for before, after in zip(workers_before, workers_after, strict=True)
        if before is not None and after is not None
    ) / (CALLS + len(actors))
    ray.shutdown()
    emit(
        {
            "start_s": start,
            "one_ms": one * 1e3,
            "two_ms": two * 1e3,
            "two_driver_cpu_ms": driver_cpu * 1e3,
            "two_workers_cpu_ms": workers_cpu * 1e3,
            "entries_ms": entries_ms(run_dir("bench-floor-")),
            "entries_tmpfs_ms": tmpfs_entries_ms(),
        }
    )


def entries_ms(directory: str) -> float:
    """CPU milliseconds per trial to make a trial's entries (a directory
    and `TRIAL_FILES`, each with one line) in `directory`, which is new."""
    line = b"x" * 100 + b"\n"
    started = time.process_time()
    for i in range(TRIALS):
        trial = os.path.join(directory, f"trial_{i}")
        os.mkdir(trial)
        for name in TRIAL_FILES:
            fd = os.open(os.path.join(trial, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.write(fd, line)
            os.close(fd)
    return (time.process_time() - started) / TRIALS * 1e3


def tmpfs_entries_ms() -> float | None:
    """`entries_ms` on tmpfs (memory: no disk allocator to spare, so its
    files are deleted at once), or None without `/dev/shm`."""
    if not os.path.isdir("/dev/shm"):
        return None
    directory = tempfile.mkdtemp(dir="/dev/shm")
    try:
        return entries_ms(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def measure() -> dict[str, Any] | str:
    """The floor's measurements, or why there are none."""
    child = run_child("benchmarks.ray_floor", ["--child"], timeout_s=600.0)
    if child.data is None:
        return f"the child failed: {child.problem}"
    return child.data


def floor_s(data: Mapping[str, Any], round_trips: int) -> float:
    """The least a run on two actors can take: starting them, then
    `round_trips` calls, two in flight at a time."""
    return float(data["start_s"]) + round_trips * float(data["two_ms"]) / 1e3


def run() -> str:
    data = measure()
    if isinstance(data, str):
        return f"Ray's floor: {data}"
    return "\n".join(
        [
            "### Ray's floor: starting two actors, and a call that returns at once",
            "",
            "| what | time |",
            "|---|---:|",
            f"| two actors, created to first reply of each | {data['start_s']:.3f} s |",
            f"| one actor, call then `ray.get` ({CALLS:,} times) | {data['one_ms']:.2f} ms |",
            f"| two actors kept busy through `ray.wait`, per call | {data['two_ms']:.2f} ms |",
            f"| the same, CPU per call: driver / the actors | {data['two_driver_cpu_ms']:.2f} / "
            f"{data['two_workers_cpu_ms']:.2f} ms |",
            f"| a trial's directory and four files, CPU: where the runs store "
            f"| {data['entries_ms']:.3f} ms |",
        ]
    )


def main(argv: Sequence[str]) -> int:
    if "--child" in argv:
        child()
        return 0
    print(run())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
