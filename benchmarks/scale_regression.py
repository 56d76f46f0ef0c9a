"""The regression benchmark of issue 41's read targets, at sizes that take
minutes, not an hour: do `ResultGrid.from_path`, `tunecore status` and
`Tuner.restore` of a killed experiment (to its first new result) stay
flat per trial, and within their 100,000-trial targets once extrapolated?

    python -m benchmarks scale_regression [--sizes 1000,10000] [--cache DIR]

Each read is measured as `benchmarks.scale_reads` measures it (a fresh
interpreter; the experiments built once, kept under `--cache`). The exit
code is 1 when a read's CPU time per trial at the largest size is over
`FLAT_TARGET` times the smallest's, or when the largest size's time, scaled
linearly to 100,000 trials, is over the target (`READ_TARGET_S` for the
reads, `RESTORE_TARGET_S` for the restore, wall time): what made the
targets hold at 100,000 trials (reads that decode only the events after
the snapshot; a resume that repairs only the trials its snapshot's files
mark leaves) would show here first when lost.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from benchmarks.command_line import trial_counts
from benchmarks.scale_reads import (
    ASHA,
    FIFO,
    FLAT_TARGET,
    FROM_PATH,
    KILLED,
    READ_TARGET_S,
    RESTORE,
    RESTORE_TARGET_S,
    STATUS,
    Cell,
    cache_root,
    ensure_built,
    measure,
    per_trial_ratio,
)

TARGET_TRIALS = 100_000
CHECKS = (
    (FROM_PATH, FIFO, "cpu_s", READ_TARGET_S),
    (FROM_PATH, ASHA, "cpu_s", READ_TARGET_S),
    (STATUS, FIFO, "cpu_s", READ_TARGET_S),
    (STATUS, ASHA, "cpu_s", READ_TARGET_S),
    (RESTORE, KILLED, "wall_s", RESTORE_TARGET_S),
)


def run(sizes: Sequence[int], cache: str | None) -> tuple[list[str], bool]:
    """One line per check, and whether every one held."""
    root = cache_root(cache)
    root.mkdir(parents=True, exist_ok=True)
    lines, ok = [], True
    for what, sweep, key, target in CHECKS:
        cells: dict[int, Cell] = {}
        for trials in sizes:
            directory, built = ensure_built(sweep, trials, root)
            cells[trials] = (
                built if isinstance(built, str) else measure(what, sweep, trials, directory)
            )
        failed = {n: c for n, c in cells.items() if isinstance(c, str)}
        if failed:
            lines.append(f"- {what} on {sweep}: FAILED {failed}")
            ok = False
            continue
        ratio = per_trial_ratio(cells, key)
        largest = max(sizes)
        projected = float(cells[largest][key]) * TARGET_TRIALS / largest  # type: ignore[index]
        held = (ratio is None or ratio <= FLAT_TARGET) and projected < target
        ok = ok and held
        lines.append(
            f"- {what} on {sweep}: "
            + ", ".join(f"{n:,}: {cells[n][key]:.2f} s" for n in sizes)  # type: ignore[index]
            + f"; per trial {'-' if ratio is None else f'{ratio:.2f}x'} (<= {FLAT_TARGET:g}x), "
            f"{projected:.1f} s at {TARGET_TRIALS:,} (< {target:g} s): "
            + ("held" if held else "**REGRESSED**")
        )
    return lines, ok


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks scale_regression", description=__doc__
    )
    parser.add_argument("--sizes", type=trial_counts, default=(1_000, 10_000))
    parser.add_argument("--cache", default=None, help="where built experiments are kept")
    args = parser.parse_args(list(argv))
    lines, ok = run(args.sizes, args.cache)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
