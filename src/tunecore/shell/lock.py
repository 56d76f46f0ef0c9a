"""One driver per experiment: a lock on the experiment directory.

Two drivers appending to one event log (two `tunecore resume`s, or a resume
while the first run goes on) would interleave their records and duplicate
every result, so a driver holds `driver_lock` for its whole run. It is an
`fcntl.flock` on `<experiment dir>/driver.lock`, taken without waiting.
The kernel drops the lock when the holding process ends, however it ends
(a SIGKILL too), so a lock left by a dead driver is simply free: no pid is
checked to decide it is stale, and of two drivers taking it over at once
the kernel lets exactly one win.

The file's content, the holder's pid, host and start time as JSON, only
makes the refusal say who holds the lock; nothing is decided from it. The
file is never deleted: a driver could otherwise lock the deleted file while
another locks its replacement, and both would run.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from tunecore.shell.eventlog import LogError

LOCK_FILE = "driver.lock"


class ExperimentLockedError(LogError):
    """Another driver runs the experiment; the message names it."""


@contextlib.contextmanager
def driver_lock(experiment_dir: Path) -> Iterator[None]:
    """Hold the experiment's driver lock for the `with` block, or raise
    `ExperimentLockedError` at once if another process holds it. Released
    when the block ends, by an exception or Ctrl-C too."""
    fd = os.open(experiment_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ExperimentLockedError(
                f"{experiment_dir} is in use by another driver ({_holder(fd)}). "
                "Only one driver may run an experiment: wait for it to end, or end "
                "it first (Ctrl-C where it runs)."
            ) from None
        _write_holder(fd)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # who held it is no longer true
    finally:
        os.close(fd)  # closing the only descriptor releases the flock


def _write_holder(fd: int) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(holder).encode(), 0)


def _holder(fd: int) -> str:
    """Who holds the lock, as its file says (the holder may not have
    written it yet)."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0))
        return f"pid {holder['pid']} on host {holder['host']}, since {holder['started_at']}"
    except (OSError, ValueError, TypeError, KeyError):
        return "it has not said which"
