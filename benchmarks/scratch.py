"""Where a benchmark run keeps its files: a new directory under one root
per benchmark session, deleted when the session's first process exits.

Why not a `TemporaryDirectory` per run: on the benchmark machines' ext4
(mounted without a journal) the inode allocator skips inodes deleted in
the last few seconds, or while their inode table block is still dirty,
reading each one's deletion time as it goes (`recently_deleted` under
`ext4_create` in `perf`). After a run's thousands of files are deleted,
creating a file costs 0.5-1 ms of kernel CPU for the next minute instead
of 0.02-0.06 ms, so deleting each run's storage right after it charged the
next run, whichever framework that was, for the last one's clean-up. No
user's experiment pays that; the benchmarks keep every run's files until
the end instead (`docs/speed.md`, "The sixth profile").

The root is shared with child processes through `SCRATCH_ENV`, so the
children of one `python -m benchmarks` all write under it, and the parent
deletes it once, after the last measurement.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

SCRATCH_ENV = "TUNECORE_BENCH_SCRATCH"


@functools.cache
def root() -> str:
    """The session's root: inherited from the parent process, or made here
    (and deleted when this process exits)."""
    inherited = os.environ.get(SCRATCH_ENV)
    if inherited:
        return inherited
    made = tempfile.mkdtemp(prefix="tunecore-bench-")
    os.environ[SCRATCH_ENV] = made
    atexit.register(shutil.rmtree, made, ignore_errors=True)
    return made


def run_dir(prefix: str) -> str:
    """A new, empty directory for one run's files, kept until the session ends."""
    return tempfile.mkdtemp(prefix=prefix, dir=root())
