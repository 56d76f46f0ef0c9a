"""The driver's side of an experiment kept in storage it does not own (a
URI `storage_path`: `s3://`, `gs://`, `file://`, ...).

The driver works in a local *staging* directory exactly as it does with a
plain path (event log, snapshots, trial files, lock, inbox), and a
`StateShipper` copies that directory to the storage as it grows. Workers
write checkpoints straight to the storage (`shell.trainable.persist`), so
the staging directory never holds one. What the storage holds is a prefix
of what the staging directory holds, so the storage alone is enough to
inspect or resume the experiment from any machine; what is only local is
at most the shipper's lag.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import secrets
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path

from tunecore.shell.driver_state import LEASE_FILE, LEASE_MIN_S, lease_holder
from tunecore.shell.eventlog import LOG_FILE, LogError
from tunecore.shell.inbox import INBOX_DIR
from tunecore.shell.lock import LOCK_FILE, ExperimentLockedError
from tunecore.shell.processes import process_start
from tunecore.shell.shared_storage import TOKEN_FILE
from tunecore.shell.shipper import StateShipper
from tunecore.shell.storage import experiment_dirname
from tunecore.shell.store import StorageSpec, Store, staging_root, within
from tunecore.shell.stored_state import SEGMENT_DIR, fetch_requests, fetch_state, stored_log

logger = logging.getLogger(__name__)


class Mirror:
    """One experiment `name` in the storage `root` (a store on the storage
    root, as `resolve_storage` returns it), and its staging directory."""

    def __init__(self, spec: StorageSpec, root: Store, name: str) -> None:
        self.spec = spec
        self.root = root
        self.name = experiment_dirname(name)
        self.store = within(root, self.name)
        self.staging_root = Path(staging_root(spec))
        self._token = secrets.token_hex(8)
        self._stale_s = LEASE_MIN_S
        self._process_start = process_start(os.getpid())

    @property
    def staging_dir(self) -> Path:
        return self.staging_root / self.name

    def holds_experiment(self) -> bool:
        """Whether the storage has an experiment under this name."""
        return self.store.exists(SEGMENT_DIR)

    def set_aside_earlier_run(self) -> str | None:
        """As with a local directory (`Tuner.fit`), running again under the
        same name starts afresh and keeps the earlier experiment whole: it
        is copied within the storage (server side on object stores) to
        `<name>_<date>_<time>` and deleted here; the new name, or None."""
        if not self.holds_experiment():
            return None
        stem = f"{self.name}_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}"
        aside = next(
            candidate
            for number in range(1, 1000)
            if not self.root.exists(candidate := stem if number == 1 else f"{stem}_{number}")
        )
        self.root.copy_dir(self.name, aside)
        self.root.delete_file(f"{aside}/{LEASE_FILE}")  # the copy runs nowhere
        self.root.delete_dir(self.name)
        return self.root.uri(aside)

    def drop_staging(self) -> Path | None:
        """Once the experiment has ended and been shipped: delete the
        staging copy if the storage holds all of it, byte for byte, and is
        a local directory (`file://`, where the results are then read);
        that directory, or None with the staging copy kept and a warning
        naming what the storage lacks. Of other storage the copy is kept:
        the results read their histories from it. The lock file stays (a
        lock file is never deleted, `shell.lock`)."""
        local = self.store.local_path("")
        if local is None:
            return None
        missing = self.not_stored()
        if missing:
            logger.warning(
                "Kept the staging copy %s: the storage %s does not hold all of it (%s)",
                self.staging_dir,
                self.store.uri(),
                ", ".join(missing[:5])
                + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""),
            )
            return None
        _empty_but_lock(self.staging_dir)
        return Path(local)

    def not_stored(self) -> list[str]:
        """What the staging directory holds that the storage does not, the
        same bytes: the event log (stored as its segments), and every other
        file but the driver's own (its lock, its run's token, and the
        inbox: requests nobody reads once the experiment has ended)."""
        missing = []
        log = self.staging_dir / LOG_FILE
        if not log.is_file() or stored_log(self.store) != log.read_bytes():
            missing.append(LOG_FILE)
        drivers = (LOG_FILE, LOCK_FILE, TOKEN_FILE)
        for path in sorted(self.staging_dir.rglob("*")):
            rel = path.relative_to(self.staging_dir).as_posix()
            if path.is_dir() or rel in drivers or rel.startswith(f"{INBOX_DIR}/"):
                continue
            try:
                stored = self.store.read_bytes(rel)
            except (OSError, ValueError):  # not there, or a name storage cannot hold
                stored = None
            if not path.is_file() or path.is_symlink() or stored != path.read_bytes():
                missing.append(rel)
        return missing

    def clear_staging(self) -> None:
        """Empty the staging directory for a new run (its driver lock, held
        by the caller, stays)."""
        _empty_but_lock(self.staging_dir)

    def sync_down(self) -> None:
        """Make the staging directory hold the stored experiment, for a
        resume: kept as it is when its log already extends the stored one
        (this machine ran the driver, and may hold the shipper's last lag),
        else replaced by what the storage holds. Only reads the storage (a
        restore does it before it knows whether it may run)."""
        stored = stored_log(self.store)
        local = self.staging_dir / LOG_FILE
        if not (local.is_file() and _starts_with(local, stored)):
            if not stored:
                raise LogError(
                    f"{self.store.uri()} holds no tunecore experiment (no event log stored)"
                )
            _empty_but_lock(self.staging_dir)
            fetch_state(self.store, self.staging_dir)

    def take_requests(self) -> None:
        """Move the requests posted to the stored inbox while no driver ran
        into the staging inbox, for the loop's first read; only with the
        lease held (they are the running driver's to take)."""
        fetch_requests(self.store, self.staging_dir)

    def shipper(self, log_size: Callable[[], int], lag_s: float) -> StateShipper:
        """The shipper of this experiment, renewing the lease every round."""
        self._stale_s = max(LEASE_MIN_S, 10 * lag_s)
        return StateShipper(
            self.store, self.staging_dir, log_size, lag_s=lag_s, heartbeat=self.renew_lease
        )

    # -- the driver's lease: one driver per stored experiment, across machines ---------

    def take_lease(self, lag_s: float) -> None:
        """Claim the stored experiment for this driver, or raise
        `ExperimentLockedError` naming the driver that holds it. The
        staging directory's lock keeps out a second driver on this machine;
        the lease (`driver.lease` in the storage: host, pid, when renewed)
        keeps out one on another machine while its holder renews it. A
        holder that stopped renewing (`LEASE_MIN_S`, or ten shipping
        periods), or a dead process on this host, is taken over. Advisory:
        storage has no compare-and-swap, so two drivers starting in the
        same instant could both take it."""
        self._stale_s = max(LEASE_MIN_S, 10 * lag_s)
        held = self._read_lease()
        if held is not None and not self._lease_is_stale(held):
            renewed = held.get("renewed")
            age = time.time() - renewed if isinstance(renewed, int | float) else 0.0
            raise ExperimentLockedError(
                f"{self.store.uri()} is in use by another driver (pid {held.get('pid')} on host "
                f"{held.get('host')!r}, lease renewed {age:.0f} s ago). Only one driver may run "
                f"an experiment: wait for it to end (a dead driver's lease lapses after "
                f"{self._stale_s:.0f} s)"
            )
        self.renew_lease()

    def renew_lease(self) -> None:
        pid = os.getpid()
        lease: dict[str, object] = {"host": socket.gethostname(), "pid": pid, "token": self._token}
        lease["process_start"] = self._process_start
        lease["renewed"] = time.time()
        self.store.write_bytes(LEASE_FILE, json.dumps(lease).encode())

    def drop_lease(self) -> None:
        """Give the experiment up (only a lease this driver still holds)."""
        held = self._read_lease()
        if held is not None and held.get("token") == self._token:
            self.store.delete_file(LEASE_FILE)

    def _read_lease(self) -> dict[str, object] | None:
        try:
            held = json.loads(self.store.read_bytes(LEASE_FILE))
        except FileNotFoundError:
            return None
        except ValueError:  # not JSON: nobody's lease
            logger.warning("Ignoring %s: not a lease", self.store.uri(LEASE_FILE))
            return None
        return held if isinstance(held, dict) else None

    def _lease_is_stale(self, held: dict[str, object]) -> bool:
        return not lease_holder(held, self._stale_s).running


def _starts_with(path: Path, prefix: bytes) -> bool:
    if os.path.getsize(path) < len(prefix):
        return False
    with path.open("rb") as file:
        return file.read(len(prefix)) == prefix


def _empty_but_lock(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.name == LOCK_FILE:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
