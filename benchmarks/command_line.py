"""What the size-sweeping benchmarks (`scale_reads`, `scale_vs_ray_tune`,
`scale_regression`) share on their command line: the parser of a sizes
flag and the exit status."""

from __future__ import annotations

import argparse


def trial_counts(text: str) -> tuple[int, ...]:
    """An argparse type: comma-separated trial counts, each at least 2."""
    values = tuple(int(n) for n in text.split(",") if n)
    if any(n < 2 for n in values):
        raise argparse.ArgumentTypeError(f"{text!r}: sizes must be at least 2")
    return values


def exit_status(measured: tuple[str, bool, list[str]] | None) -> int:
    """What `main` returns for what `measure_from` did: 0 for a child's one
    measurement (it printed it); else the table printed, and 0 only if
    every run did its work."""
    if measured is None:
        return 0
    table, ok, _ = measured
    print(table)
    return 0 if ok else 1
