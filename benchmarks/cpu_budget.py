"""Where the machine's CPU went during one benchmark run: the share of all
cores that was busy, and the CPU time of Ray's processes (the workers that
host the trials, and Ray's own daemons) beside the driver's.

On a 2-core machine a run can be bound by CPU rather than by waiting for
Ray's round trips; these numbers tell which (`docs/speed.md`, "The sixth
profile"). Linux only (`/proc`).

Ray ends a run's worker processes as the run ends, before a reading taken
after `fit()` could see them, so `RayProcessesCpu` samples them on a thread
while the run goes on and keeps each one's last reading: a process that
exits between samples is counted up to its last sample (an undercount of at
most `interval_s` of CPU each).

Only the sampling process's descendants count: a local `ray.init` starts
Ray's daemons as its children and they fork the workers, while another
Ray on a shared machine (another session's benchmark or test suite) is
no part of this run.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
WORKER_PREFIX = "ray::"  # a Ray worker's process title: ray::TrialHost, ray::IDLE, ...
DAEMONS = ("raylet", "gcs_server")
RECHECKS = 20  # samples: a new process's title is read again for its first second


def cpu_ticks() -> tuple[int, int]:
    """The machine's CPU time so far, in clock ticks over all cores: (all,
    idle). Two readings give the share of the cores that was busy between
    them, whichever process kept them busy (Ray's workers included)."""
    with open("/proc/stat") as stat:
        fields = [int(field) for field in stat.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]  # idle and iowait


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of all cores' time that was not idle between two readings."""
    total = after[0] - before[0]
    return 1.0 - (after[1] - before[1]) / total if total else 0.0


def process_title(pid: str) -> str | None:
    """A process's title (the one Ray sets, `ray::TrialHost`), else its
    command name; None when it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            title = cmdline.read().split(b"\0", 1)[0].decode(errors="replace")
        if title:
            return title
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return None


def _stat_fields(pid: str) -> list[str] | None:
    """The fields of `/proc/<pid>/stat` after the command name (which may
    hold spaces and parentheses), None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def parent_pid(pid: str) -> str | None:
    """A process's parent, None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else fields[1]


def descends_from(pid: str, ancestor: str) -> bool:
    """Whether `ancestor` is `pid`'s parent, its parent's parent, ..."""
    while pid not in (ancestor, "0", "1"):
        parent = parent_pid(pid)
        if parent is None:
            return False
        pid = parent
    return pid == ancestor


def process_cpu_s(pid: str) -> float | None:
    """A process's CPU seconds so far (user + system), None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) * _TICK_S


def _kind(name: str) -> str | None:
    if name.startswith(WORKER_PREFIX):
        return "workers"
    if any(daemon in name for daemon in DAEMONS):
        return "daemons"
    return None


@dataclass
class RayProcessesCpu:
    """CPU seconds Ray's workers and daemons used between `start` and
    `stop`, sampled every `interval_s` on a thread of its own.

    A sample lists `/proc` and reads one `stat` file per Ray process. A
    process's title decides its kind, read again while the process is young
    (its first `RECHECKS` samples): the raylet forks a worker, which is a
    `raylet` until it execs Python and a `ray::` title a moment later.
    What ran before `start` is looked at once; a process not descended from
    the sampler's own is never counted. The sampler shares the
    driver's process, so it is kept to a fraction of a millisecond per
    sample."""

    interval_s: float = 0.05
    _kinds: dict[str, str | None] = field(default_factory=dict)
    _looks: dict[str, int] = field(default_factory=dict)
    _first: dict[str, float] = field(default_factory=dict)
    _last: dict[str, float] = field(default_factory=dict)
    _done: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _own_pid: str = field(default_factory=lambda: str(os.getpid()))

    def start(self) -> None:
        self._sample(first=True)
        self._thread = threading.Thread(target=self._watch, name="bench-cpu", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, float]:
        """{"workers": s, "daemons": s}: CPU used since `start`."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        self._sample(first=False)
        used = {"workers": 0.0, "daemons": 0.0}
        for pid, seconds in self._last.items():
            kind = self._kinds.get(pid)
            if kind is not None:
                used[kind] += seconds - self._first.get(pid, 0.0)
        return used

    def _watch(self) -> None:
        while not self._done.wait(self.interval_s):
            self._sample(first=False)

    def _sample(self, *, first: bool) -> None:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            if self._looks.get(pid, 0) < RECHECKS:
                # One look at what runs already; a new process, RECHECKS.
                self._looks[pid] = RECHECKS if first else self._looks.get(pid, 0) + 1
                title = process_title(pid)
                if title is not None and descends_from(pid, self._own_pid):
                    self._kinds[pid] = _kind(title)
                else:
                    self._kinds[pid] = None
            if self._kinds[pid] is None:
                continue
            seconds = process_cpu_s(pid)
            if seconds is None:
                continue
            if first:
                self._first[pid] = seconds
            self._last[pid] = seconds
