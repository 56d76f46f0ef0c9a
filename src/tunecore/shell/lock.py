"""One driver per experiment: a lock on the experiment directory.

Two drivers appending to one event log (two `tunecore resume`s, or a resume
while the first run goes on) would interleave their records and duplicate
every result, so a driver holds `driver_lock` for its whole run. It is an
`fcntl.flock` on `<experiment dir>/driver.lock`, taken without waiting.
The kernel drops the lock when the holding process ends, however it ends
(a SIGKILL too), so a lock left by a dead driver is simply free: no pid is
checked to decide it is stale, and of two drivers taking it over at once
the kernel lets exactly one win.

The file's content, the holder's pid, host, when it took the lock and when
its process started (`shell.processes`) as JSON, makes the refusal say who
holds the lock, and `tunecore status` say whether that driver still runs
(`shell.driver_state`); no driver decides anything from it. The
file is never deleted: a driver could otherwise lock the deleted file while
another locks its replacement, and both would run. For the same reason an
experiment directory is moved only by a holder of its lock (a `fit()`
setting an earlier run aside), and a lock counts only on the file at the
path once locked: a driver that opened the file just before it moved
opens the one now at the path (`_locked`).

The lock file is opened as every file tunecore keeps is (`own_files`):
without following a symlink, without waiting on a FIFO, and used only if
it is a regular file: the experiment directory may
come from someone else, and a `driver.lock` linked to a file outside it would
otherwise have that file truncated (`LockFileError` instead).
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

from tunecore.shell.eventlog import LogError
from tunecore.shell.processes import process_start
from tunecore.shell.storage.own_files import NotRegularFileError, kind_of, open_fd

LOCK_FILE = "driver.lock"
_MOVED_TRIES = 3
"""How often a lock file moved away between its opening and its locking
is opened again at its path before the driver gives up."""


class ExperimentLockedError(LogError):
    """Another driver runs the experiment; the message names it."""


class LockFileError(LogError):
    """The experiment's `driver.lock` is not a regular file (a symlink, a
    directory, a FIFO, a device): nothing is opened through it, and the
    message names the path and what it is."""


@contextlib.contextmanager
def driver_lock(experiment_dir: Path) -> Iterator[None]:
    """Hold the experiment's driver lock for the `with` block, or raise
    `ExperimentLockedError` at once if another process holds it. Released
    when the block ends, by an exception or Ctrl-C too."""
    fd = _locked(experiment_dir)
    try:
        _write_holder(fd)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # who held it is no longer true
    finally:
        os.close(fd)  # closing the only descriptor releases the flock


def _locked(experiment_dir: Path) -> int:
    """A descriptor holding the flock of the lock file that is at
    `experiment_dir/driver.lock` once locked, or `ExperimentLockedError`.
    The file opened can be moved before it is locked: a `fit()` under the
    same name sets the earlier run aside by renaming its directory under
    the lock, then releases it and runs in a new one. Locked then, it is
    the set-aside run's lock, and this driver would run beside that one;
    so the file at the path is opened again, a few times at most."""
    path = experiment_dir / LOCK_FILE
    for _ in range(_MOVED_TRIES):
        fd = _open_lock_file(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise ExperimentLockedError(
                f"{experiment_dir} is in use by another driver ({holder}). "
                "Only one driver may run an experiment: wait for it to end, or end "
                "it first (Ctrl-C where it runs)."
            ) from None
        if _is_at(fd, path):
            return fd
        os.close(fd)
    raise ExperimentLockedError(
        f"{experiment_dir} was moved or replaced each of the {_MOVED_TRIES} times this "
        "driver locked it: another driver is setting it aside; try again once it runs"
    )


def _is_at(fd: int, path: Path) -> bool:
    """Whether the open file `fd` is the one at `path` (links not followed)."""
    try:
        there = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def _open_lock_file(path: Path) -> int:
    """A read-write descriptor on the regular file `path`, created if it is
    missing; `LockFileError` if `path` is anything else."""
    try:
        return open_fd(path, "rw")
    except NotRegularFileError as error:
        if not error.mode:
            raise
        is_link = stat.S_ISLNK(error.mode)
        kind = f"a symlink (to {os.readlink(path)})" if is_link else kind_of(error.mode)
        raise _not_a_regular_file(path, kind) from None


def _not_a_regular_file(path: Path, kind: str) -> LockFileError:
    return LockFileError(
        f"{path} is {kind}, not a regular file: it cannot hold the experiment's "
        "driver lock, and nothing is opened through it. Remove it; the next "
        "driver creates a fresh one."
    )


def _write_holder(fd: int) -> None:
    pid = os.getpid()
    holder = {
        "pid": pid,
        "host": socket.gethostname(),
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "process_start": process_start(pid),
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
