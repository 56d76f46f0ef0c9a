"""Whether an experiment's driver still runs, for `tunecore status`.

An unfinished experiment is either being run, or its driver is gone (killed,
crashed, its machine lost) and it waits for a resume. The event log cannot
tell the two apart; what the driver leaves besides it can:

- in an experiment directory, `driver.lock` (`shell.lock`) names the
  holder (pid, host, when its process started) while a driver holds it,
  and is emptied when the driver lets go. A name left behind is a driver
  that died holding it: it still runs only if its pid is in use, on this
  host, by the process that started then (`shell.processes`: a later
  process given the same pid is not it). Of a driver on another host,
  nothing can be told from here.
- in storage (a URI), `driver.lease` (`shell.mirror.lease`) names the driver
  and when it last renewed the lease: a driver renews it every shipping
  period, so a lease older than ten periods (a minute at least) belongs to
  a driver that is gone; on this host, the process is checked too. The
  lease's own rules (`lease.lapsed`) decide, as they do for a driver
  taking the experiment over.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from tunecore.shell.lock import LOCK_FILE
from tunecore.shell.mirror.lease import LEASE_MIN_S, lapsed, read_lease
from tunecore.shell.mirror.remote import as_location, is_stored
from tunecore.shell.processes import is_running
from tunecore.shell.storage.own_files import read_bytes
from tunecore.shell.storage.resolve import resolve_storage
from tunecore.shell.storage.store import Store

MAX_RECORD_BYTES = 4096


@dataclass(frozen=True)
class Driver:
    """The driver an experiment's lock or lease names."""

    pid: object
    host: str
    running: bool | None
    """Whether it still runs; None when it cannot be told (another host)."""
    renewed_s_ago: float | None = None
    """For a lease, how long ago its driver renewed it."""

    def describe(self) -> str:
        return f"driver pid {self.pid} on {self.host}"


def locked_by(experiment_dir: Path) -> Driver | None:
    """The driver holding, or last holding without letting go, the lock of
    `experiment_dir`; None if no driver holds it (none ever ran there, or
    the last one ended and let go)."""
    try:
        holder = json.loads(read_bytes(experiment_dir / LOCK_FILE, MAX_RECORD_BYTES) or b"null")
    except (OSError, ValueError):
        return None
    if not isinstance(holder, dict):
        return None
    pid, host = holder.get("pid"), str(holder.get("host"))
    if host != socket.gethostname() or not isinstance(pid, int):
        return Driver(pid, host, running=None)
    started = holder.get("process_start")
    return Driver(pid, host, running=is_running(pid, started if isinstance(started, str) else None))


def leased_by(store: Store, sync_period_s: float) -> Driver | None:
    """The driver whose lease on the stored experiment `store` has not been
    given up (None: no lease), and whether it still runs."""
    held = read_lease(store)
    if held is None:
        return None
    now = time.time()
    running = lapsed(held, max(LEASE_MIN_S, 10 * sync_period_s), now) is None
    return Driver(held.pid, held.host, running=running, renewed_s_ago=now - held.renewed)


def driver_of(location: str, local: Path, sync_period_s: float) -> Driver | None:
    """The driver of the experiment at `location` (a directory, or a URI
    whose state was fetched into `local`): the lease's, in storage, else
    the lock's of the local directory."""
    if is_stored(location):
        _, store = resolve_storage(as_location(location))
        leased = leased_by(store, sync_period_s)
        if leased is not None:
            return leased
    return locked_by(local)
