"""Run every benchmark and print Markdown tables.

    python -m benchmarks [--quick] [--skip-ray-tune] [--skip-scale] [--skip-storage]
    python -m benchmarks search_quality|search_overhead [ARGS]

First the pure core's throughput, then tunecore against Ray Tune on real
Ray (`benchmarks.vs_ray_tune`; it needs `ray[tune]`, which `nox -s bench`
installs), the in-process anchor against Optuna (`benchmarks.vs_optuna`),
the scale suite of issue 41 (`benchmarks.scale`: tunecore at 1,000 to
100,000 trials on Ray, against Ray Tune at 1,000 and 10,000, and reading
experiments of up to 100,000 trials back, each target marked), then what
keeping the experiment in storage costs, on a local
directory, `file://` and a local S3 server (`benchmarks.storage_sync`; it
needs pyarrow and moto, in the `bench` extra; its rows also go to
storage_sync.json), and the dashboard at 1,000 and 10,000 trials
(`benchmarks.dashboard_page`: the log's read, the trials page's first
showing and sort in headless Chromium, the JSON routes; a minute or two).
The exit code is 1 when a comparison run failed its
checks.

The search benchmarks (issue 12) run on their own, named first:
`search_quality` (model-based search against random search on objectives
with known optima) and `search_overhead` (what running Optuna inside
tunecore adds to each suggestion and observation); so does
`host_turnover` (a worker's turn from one trial to the next, without Ray,
on idle and on busy cores).
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Callable

from benchmarks import (
    callback_trials,
    dashboard_page,
    host_turnover,
    ray_floor,
    scale,
    scale_reads,
    scale_regression,
    scale_vs_ray_tune,
    search_overhead,
    search_quality,
    simulate_asha,
    snapshot_share,
    step_throughput,
    storage_sync,
    vs_optuna,
    vs_ray_tune,
)
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler

COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "search_quality": search_quality.main,
    "search_overhead": search_overhead.main,
    "vs_optuna": vs_optuna.main,
    "scale": scale.main,
    "scale_reads": scale_reads.main,
    "scale_vs_ray_tune": scale_vs_ray_tune.main,
    "snapshot_share": snapshot_share.main,
    "scale_regression": scale_regression.main,
    "ray_floor": ray_floor.main,
    "host_turnover": host_turnover.main,
    "callback_trials": callback_trials.main,
    "dashboard_page": dashboard_page.main,
}
"""Benchmarks run only when named: `python -m benchmarks NAME [ARGS]`."""


def _parser() -> argparse.ArgumentParser:
    """The full run's flags; `--help` lists the benchmarks run only when named."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run every benchmark and print Markdown tables.",
        epilog="Run on their own, with their own flags (python -m benchmarks NAME --help): "
        + ", ".join(COMMANDS),
        allow_abbrev=False,
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument(
        "--skip-ray-tune", action="store_true", help="leave out the runs of Ray Tune"
    )
    parser.add_argument(
        "--skip-scale",
        action="store_true",
        help="leave out the scale suite (1,000 to 100,000 trials)",
    )
    parser.add_argument(
        "--skip-storage", action="store_true", help="leave out the storage benchmark"
    )
    return parser


def main(argv: list[str]) -> int:
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:])
    args = _parser().parse_args(argv)
    quick: bool = args.quick
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.node()}\n")
    schedulers: dict[str, Callable[[], TrialScheduler]] = {
        "FIFO": FIFOScheduler,
        "ASHA": step_throughput.never_stopping_asha,
    }
    print(step_throughput.run(schedulers, quick=quick), flush=True)
    print("\n" + simulate_asha.run(trials=1_000 if quick else 10_000), flush=True)
    ok = True
    if not args.skip_ray_tune:
        table, ok = vs_ray_tune.run(quick=quick)
        print("\n" + table, flush=True)
    print("\n" + ray_floor.run(), flush=True)
    print()
    ok = vs_optuna.main(["--trials", "20", "--repeats", "1"] if quick else []) == 0 and ok
    if not args.skip_scale:
        print()
        scale_argv = ["--quick"] if quick else []
        scale_argv += ["--skip-ray-tune"] if args.skip_ray_tune else []
        ok = scale.main(scale_argv) == 0 and ok
    if not args.skip_storage:
        print()
        storage_argv = ["--quick"] if quick else []
        if args.skip_ray_tune:
            storage_argv += ["--frameworks", storage_sync.TUNECORE]
        ok = storage_sync.main(storage_argv) == 0 and ok
    print()
    ok = dashboard_page.main(["--quick"] if quick else []) == 0 and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
