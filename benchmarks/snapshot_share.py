"""What the driver's state snapshots cost a run, as experiments grow (issue
41): their size, their time, and their share of the run.

    python -m benchmarks snapshot_share [--sizes 1000,10000,100000]

Each size is a fresh interpreter (`--child N`) that runs N one-report
trials under `tunecore.simulate` (in-process, virtual time, 16 virtual
CPUs) and times every snapshot the loop's journal writes
(`shell.journal.Journal.snapshot`, wrapped in this benchmark's process
only), by the clock the journal spaces them with (`time.monotonic`). The
journal waits at least `cost / 2%` after each snapshot (and 10 s), so the
periodic ones take at most 2% of the run; the last one, as the run ends,
is written whatever its cost. Target: all of them at most 5% of the run's
wall time ("a few percent"), at every size. The size is the newest
snapshot file's bytes per trial.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.children import Child, emit, run_child
from benchmarks.scratch import run_dir

SHARE_TARGET = 0.05
CHILD_TIMEOUT_S = 1800.0


def one_result(config: Mapping[str, Any], _iteration: int) -> tuple[dict[str, Any], float]:
    """The simulated trainable: its score, one virtual second."""
    return {"score": float(config["x"])}, 1.0


def child(trials: int) -> None:
    import tunecore  # noqa: PLC0415 - imported before the clock
    from tunecore.model import Resources  # noqa: PLC0415
    from tunecore.shell.journal import SNAPSHOT_DIR, Journal  # noqa: PLC0415

    spent: list[float] = []
    snapshot = Journal.snapshot

    @functools.wraps(snapshot)
    def timed(self: Journal, state: Any, files: Any = None) -> None:
        started = time.monotonic()
        snapshot(self, state, files)
        spent.append(time.monotonic() - started)

    Journal.snapshot = timed  # type: ignore[method-assign]
    root = Path(run_dir("bench-snapshot-share-"))
    started = time.monotonic()
    grid = tunecore.simulate(
        one_result,
        param_space={"x": tunecore.uniform(0.0, 1.0)},
        tune_config=tunecore.TuneConfig(num_samples=trials, seed=0),
        run_config=tunecore.RunConfig(name="run", storage_path=str(root), verbose=0),
        cluster=Resources(cpu=16),
        max_iterations=1,
    )
    run_s = time.monotonic() - started
    files = sorted((root / "run" / SNAPSHOT_DIR).glob("snapshot_*.msgpack"))
    emit(
        {
            "trials": len(grid),
            "run_s": run_s,
            "snapshots": len(spent),
            "snapshot_s": sum(spent),
            "last_s": spent[-1] if spent else 0.0,
            "bytes": files[-1].stat().st_size if files else 0,
        }
    )


def table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| trials | run s | snapshots | their s (last) | share of the run | B / trial |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        share = row["snapshot_s"] / row["run_s"]
        lines.append(
            f"| {row['trials']:,} | {row['run_s']:.1f} | {row['snapshots']} | "
            f"{row['snapshot_s']:.2f} ({row['last_s']:.2f}) | {100 * share:.1f}% | "
            f"{row['bytes'] / row['trials']:,.0f} |"
        )
    worst = max(row["snapshot_s"] / row["run_s"] for row in rows)
    met = "met" if worst <= SHARE_TARGET else "**NOT met**"
    lines.append("")
    lines.append(
        f"- snapshots at most {100 * SHARE_TARGET:g}% of a run at every size: "
        f"{100 * worst:.1f}% at most ({met})"
    )
    return lines


def main(
    argv: Sequence[str] | None = None, runner: Callable[[str, list[str], float], Child] = run_child
) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks snapshot_share")
    parser.add_argument(
        "--sizes", default="1000,10000,100000", help="trial counts, comma-separated"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child)
        return 0
    rows = []
    for size in (int(part) for part in args.sizes.split(",")):
        done = runner("benchmarks.snapshot_share", ["--child", str(size)], CHILD_TIMEOUT_S)
        result = done.data
        if result is None or result["trials"] != size:
            raise RuntimeError(
                f"{size} trials: {done.problem or json.dumps(result)}\n{done.stderr}"
            )
        rows.append(result)
    print(f"`python -m benchmarks snapshot_share --sizes {args.sizes}`\n")
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
