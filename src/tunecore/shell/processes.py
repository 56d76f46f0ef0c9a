"""Whether a process on this machine is the one a record names.

A pid alone does not say it: once a driver is gone, the kernel may give its
pid to any later process. So a driver records, with its pid, when its
process started (`process_start`): the start time in clock ticks after boot
from `/proc/<pid>/stat`, with the boot's id, which no later process of any
boot shares. Where `/proc` is missing (macOS), there is no start time, and
only whether the pid is in use can be told.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")


def alive(pid: int) -> bool:
    """Whether some process on this machine has the id `pid`."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def process_start(pid: int) -> str | None:
    """When the process `pid` started, as `<boot id>:<clock ticks after
    boot>`; None without `/proc`, or when no such process exists."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or
    # parentheses itself: the fields after its last ")" start at field 3;
    # the start time is field 22.
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 20:
        return None
    return f"{boot}:{fields[19]}"


def is_running(pid: int, started: str | None) -> bool:
    """Whether the process a record names as `pid`, started at `started`
    (`process_start`'s answer when it was recorded; None if not recorded),
    still runs on this machine: the pid is in use, and by a process that
    started then, when both start times are known."""
    if not alive(pid):
        return False
    if started is None:
        return True
    now = process_start(pid)
    return now is None or now == started
