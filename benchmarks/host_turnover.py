"""How long a worker takes to turn from one trial to the next, with the
machine's cores idle and with each of them kept busy by another process.

What a Ray worker does for every trial in (a) and (c) of
`benchmarks.vs_ray_tune`, without Ray: a real `TrialHost` hosting a
function trainable, each trial in a directory of its own and run inside
it (Ray's default, `chdir`), one `assign_and_train` call per trial:

- `a`: the function reports once and returns: the call hands the function
  to its thread and waits for its result and its end;
- `c`: the function reports, then waits at a scheduler's decision point
  (ASHA's first rung); the next trial's call first ends it (the function
  unwinds from `report()` on its thread), as for a trial ASHA stopped.

A turnover hands work between the worker's own thread and the function's
thread several times. On idle cores each hand-over takes microseconds;
when every core is busy, the woken thread sometimes waits for another
process's time slice (a scheduler tick, about 4 ms here), and those waits,
not the work, make the mean. The table gives the median, the mean and
the share of turnovers over 1 ms (`docs/speed.md`, "The fifteenth
profile").

    python -m benchmarks host_turnover [--trials N] [--busy 0,2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import tunecore
from benchmarks.scratch import run_dir
from tunecore.model import JsonDict
from tunecore.shell.executors.host import TrialHost
from tunecore.shell.trainable.function import FunctionTrainable
from tunecore.shell.trainable.worker import TrialContext

SLOW_S = 1e-3
WARM_UP = 5  # turnovers left out: the first threads and directories


def report_once(_config: JsonDict) -> None:
    tunecore.report({"score": 1.0})


def report_at_rungs(_config: JsonDict) -> None:
    for step in range(50):
        tunecore.report({"score": float(step)})


PATTERNS: dict[str, tuple[Callable[[JsonDict], None], tuple[str, float] | None]] = {
    # The function, and the horizon the driver gives its batches.
    "a": (report_once, None),
    "c": (report_at_rungs, ("training_iteration", 1.0)),
}


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """`count` processes that each keep a core busy while the block runs."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(count)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
        for spinner in spinners:
            spinner.join()


def turnovers(pattern: str, trials: int) -> list[float]:
    """Seconds of each trial's `assign_and_train`, after the warm-up."""
    function, horizon = PATTERNS[pattern]
    host = TrialHost(lambda config, context: FunctionTrainable(function, config, context))
    root = run_dir(f"bench-turnover-{pattern}-")
    seconds = []
    try:
        for number in range(trials + WARM_UP):
            trial_id = f"trial_{number:05d}"
            context = TrialContext(
                trial_id=trial_id,
                trial_name=trial_id,
                trial_dir=os.path.join(root, trial_id),
                experiment_dir=root,
                chdir=True,
            )
            started = time.perf_counter()
            # The Ray executor's run-ahead batch: RUN_AHEAD_RESULTS, RUN_AHEAD_S.
            host.assign_and_train({"x": number}, context, (256, 0.05, horizon))
            seconds.append(time.perf_counter() - started)
    finally:
        host.release()
    return seconds[WARM_UP:]


def row(pattern: str, busy: int, seconds: Sequence[float]) -> str:
    slow = [s for s in seconds if s > SLOW_S]
    slow_mean = f"{statistics.mean(slow) * 1e3:.2f} ms" if slow else "-"
    return (
        f"| {pattern} | {busy} | {statistics.median(seconds) * 1e3:.3f} ms | "
        f"{statistics.mean(seconds) * 1e3:.3f} ms | {len(slow) / len(seconds):.1%} | {slow_mean} |"
    )


def run(trials: int, busy: Sequence[int]) -> str:
    lines = [
        f"### A worker's trial turnover, {trials:,} trials ({os.cpu_count()} cores)",
        "",
        "| pattern | cores kept busy | median | mean | over 1 ms | mean of those |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for count in busy:
        with busy_cores(count):
            for pattern in PATTERNS:
                lines.append(row(pattern, count, turnovers(pattern, trials)))
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks host_turnover")
    parser.add_argument("--trials", type=int, default=2_000, help="turnovers per row")
    parser.add_argument(
        "--busy",
        default=f"0,{os.cpu_count() or 1}",
        help="comma-separated counts of cores to keep busy, one set of rows each",
    )
    args = parser.parse_args(argv)
    busy = [int(count) for count in args.busy.split(",")]
    print(run(args.trials, busy))
    return 0
