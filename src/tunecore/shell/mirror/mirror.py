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

import contextlib
import datetime
import logging
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from tunecore.shell.eventlog import LOG_FILE, CorruptLogError, LogError, read_log
from tunecore.shell.inbox import INBOX_DIR, request_of
from tunecore.shell.journal import SNAPSHOT_DIR
from tunecore.shell.lock import LOCK_FILE
from tunecore.shell.mirror.claims import SEGMENT_DIR
from tunecore.shell.mirror.fetched_files import RECORD_FILE, fetched_signatures, file_signature
from tunecore.shell.mirror.lease import LEASE_MIN_S, LeaseKeeper
from tunecore.shell.mirror.shipper import StateShipper
from tunecore.shell.mirror.stored_state import (
    fetch_log,
    fetch_requests,
    fetch_state,
    stored_log,
    stored_objects,
    stored_snapshot_name,
)
from tunecore.shell.storage.layout import experiment_dirname
from tunecore.shell.storage.own_files import kind_of
from tunecore.shell.storage.resolve import staging_root, within
from tunecore.shell.storage.shared_storage import TOKEN_FILE
from tunecore.shell.storage.store import StorageSpec, Store, delete_entry

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
        self.lease = LeaseKeeper(self.store)
        self._fetched: list[str] = []

    @property
    def staging_dir(self) -> Path:
        return self.staging_root / self.name

    def holds_experiment(self) -> bool:
        """Whether the storage has an experiment under this name: a log
        object (not only the lease's claims and fences: this driver
        claims it before it looks)."""
        listing = stored_objects(self.store.list(SEGMENT_DIR))
        return bool(listing.found or listing.stale)

    def set_aside_earlier_run(self) -> str | None:
        """As with a local directory (`Tuner.fit`), running again under the
        same name starts afresh and keeps the earlier experiment whole: it
        is copied within the storage (server side on object stores) to
        `<name>_<date>_<time>` and deleted here; the new name, or None.
        Called with the lease held: the copy runs nowhere (this driver's
        lease, claim and upload directory are deleted from it), and the
        deletion here keeps them (`LeaseKeeper.held`), or another driver
        would find the experiment free and a worker of the earlier run no
        later claim."""
        if not self.holds_experiment():
            return None
        stem = f"{self.name}_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}"
        aside = next(
            candidate
            for number in range(1, 1000)
            if not self.root.exists(candidate := stem if number == 1 else f"{stem}_{number}")
        )
        self.root.copy_dir(self.name, aside)
        copy = within(self.root, aside)
        for rel in self.lease.held:
            delete_entry(copy, rel)
        _delete_all_but(self.store, self.lease.held)
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
        same bytes: the event log (stored as its segments), the snapshots
        (stored under this driver's lease generation), and every other file
        but the driver's own (its lock, its run's token, the record of
        what it fetched, and the inbox: requests nobody reads once the
        experiment has ended) and those fetched from storage and unchanged
        since (`fetched_files`: a worker may have stored a newer one)."""
        missing = []
        log = self.staging_dir / LOG_FILE
        if not log.is_file() or stored_log(self.store) != log.read_bytes():
            missing.append(LOG_FILE)
        drivers = (LOG_FILE, LOCK_FILE, TOKEN_FILE, RECORD_FILE)
        fetched = fetched_signatures(self.staging_dir)
        for path in sorted(self.staging_dir.rglob("*")):
            rel = path.relative_to(self.staging_dir).as_posix()
            if path.is_dir() or rel in drivers or rel.startswith(f"{INBOX_DIR}/"):
                continue
            if rel in fetched and fetched[rel] == file_signature(path):
                continue
            at = rel
            if rel.startswith(f"{SNAPSHOT_DIR}/"):  # stored under this driver's generation
                at = f"{SNAPSHOT_DIR}/{stored_snapshot_name(path.name, self.lease.generation)}"
            try:
                stored = self.store.read_bytes(at)
            except (OSError, ValueError):  # not there, or a name storage cannot hold
                stored = None
            if not path.is_file() or path.is_symlink() or stored != path.read_bytes():
                missing.append(rel)
        return missing

    def clear_staging(self) -> None:
        """Empty the staging directory for a new run (its driver lock, held
        by the caller, stays). A staging log the stored log does not begin
        with (a run whose storage was unreachable, or whose driver was
        killed before it shipped, is there only) is moved aside first, as
        `sync_down` does, named in a warning: a staging log is never
        deleted. Called before the earlier stored run is set aside."""
        local = self.staging_dir / LOG_FILE
        if local.is_file() and not self._stored_log_begins_with(local):
            aside = self._quarantine_staging()
            logger.warning(
                "The staging log %s holds records %s does not: the new run starts "
                "afresh; the earlier run's staging copy is kept in %s",
                local,
                self.store.uri(),
                aside,
            )
        _empty_but_lock(self.staging_dir)

    def _stored_log_begins_with(self, local: Path) -> bool:
        """Whether the stored log holds all of the log at `local` (a damaged
        stored log holds nothing)."""
        stored = self.staging_dir / f".{LOG_FILE}.stored"
        held = os.path.getsize(local)
        try:
            if fetch_log(self.store, stored) < held:
                return False
            return not held or _starts_with(stored, local, held)
        except CorruptLogError:
            return False
        finally:
            stored.unlink(missing_ok=True)

    def sync_down(self) -> None:
        """Make the staging directory hold the stored experiment, for a
        resume: kept as it is when its log extends the stored one (this
        machine ran the driver, and may hold the shipper's last lag) and it
        holds no symbolic link or special file (`_planted_entry`), else
        moved aside whole (`<name>.quarantine-<time>` beside it, named in a
        warning: a staging log is never deleted) and replaced by what the
        storage holds. A damaged stored log (`CorruptLogError`, naming the
        offset) leaves the staging directory as it is. Only reads the
        storage (a restore does it before it knows whether it may run)."""
        self.staging_dir.mkdir(parents=True, exist_ok=True)
        local = self.staging_dir / LOG_FILE
        stored = self.staging_dir / f".{LOG_FILE}.stored"
        planted = _planted_entry(self.staging_dir)
        try:
            size = fetch_log(self.store, stored)
            if planted is None and local.is_file() and _starts_with(local, stored, size):
                return
        except CorruptLogError:
            if local.is_file():
                logger.warning(
                    "The stored log of %s is damaged; the staging log %s is kept as it is",
                    self.store.uri(),
                    local,
                )
            raise
        finally:
            stored.unlink(missing_ok=True)
        if not size:
            raise LogError(f"{self.store.uri()} holds no tunecore experiment (no event log stored)")
        if planted is not None or local.is_file():
            why = (
                f"The staging directory holds {planted}, which tunecore never makes"
                if planted is not None
                else f"The staging log {local} does not extend the log stored in "
                f"{self.store.uri()} ({size} bytes)"
            )
            aside = self._quarantine_staging()
            logger.warning(
                "%s: the resume goes on from storage; the staging directory is kept in %s",
                why,
                aside,
            )
        _empty_but_lock(self.staging_dir)
        fetch_state(self.store, self.staging_dir)

    def _quarantine_staging(self) -> Path:
        """Copy the staging directory (its lock aside) to a new sibling."""
        stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
        aside = self.staging_root / f"{self.name}.quarantine-{stamp}"
        shutil.copytree(
            self.staging_dir, aside, symlinks=True, ignore=shutil.ignore_patterns(LOCK_FILE)
        )
        return aside

    def take_requests(self) -> None:
        """Copy the requests posted to the stored inbox while no driver ran
        into the staging inbox, for the loop's first read; only with the
        lease held (they are the running driver's to take). Those the
        staging log records already (taken by a driver that died before
        their deletion) are only deleted from storage."""
        logged = {request_of(e) for e in read_log(self.staging_dir, quiet=True).events}
        self._fetched += fetch_requests(self.store, self.staging_dir, logged=logged)

    def shipper(self, log_size: Callable[[], int], lag_s: float) -> StateShipper:
        """The shipper of this experiment, keeping the lease."""
        self.lease.stale_s = max(LEASE_MIN_S, 10 * lag_s)
        shipper = StateShipper(
            self.store, self.staging_dir, log_size, lag_s=lag_s, lease=self.lease
        )
        shipper.requests.fetched_already(self._fetched)
        return shipper

    # -- the driver's lease: one driver per stored experiment, across machines ---------

    def take_lease(self, lag_s: float) -> None:
        """Claim the stored experiment for this driver, or raise
        `ExperimentLockedError` naming the driver that holds it
        (`shell.mirror.lease`). The staging directory's lock keeps out a second
        driver on this machine; the lease keeps out one on another machine
        while its holder renews it."""
        self.lease.stale_s = max(LEASE_MIN_S, 10 * lag_s)
        self.lease.take()

    def renew_lease(self) -> None:
        """Renew the lease; `LeaseLostError` if another driver took it."""
        self.lease.renew()

    def drop_lease(self) -> None:
        """Give the experiment up (only a lease this driver still holds).
        Never raises: it runs as `fit()` ends, however it ends, and a
        storage down then cost the run its results (or hid the error that
        ended it) for a lease that lapses by itself; a failure is a
        warning instead."""
        try:
            self.lease.drop()
        except OSError as error:
            logger.warning(
                "Storage %s: could not give the lease up (%s); it lapses %.0f s after its "
                "last renewal, and until then another driver cannot take the experiment over",
                self.store.uri(),
                error,
                self.lease.stale_s,
            )


def _starts_with(path: Path, prefix: Path, size: int) -> bool:
    """Whether the file `path` begins with the `size` bytes of `prefix`
    (compared a piece at a time)."""
    if os.path.getsize(path) < size:
        return False
    if not size:  # nothing stored (a driver killed before its first shipment)
        return True
    with path.open("rb") as file, prefix.open("rb") as expected:
        while chunk := expected.read(1 << 20):
            if file.read(len(chunk)) != chunk:
                return False
    return True


def _planted_entry(directory: Path) -> str | None:
    """The first symbolic link or special file in the staging `directory`
    (links not followed), in words, or None. tunecore makes neither there,
    so one was planted: a trial directory linked to someone else's would
    have the resume refuse to go on (or, raced, write there); the copy is
    set aside instead, as a diverging one is, and the storage's taken."""
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            with contextlib.suppress(FileNotFoundError):
                mode = os.lstat(path).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    return f"{path} ({kind_of(mode)})"
    return None


def _delete_all_but(store: Store, kept: frozenset[str]) -> None:
    """Delete everything in `store` but the paths `kept` (and the
    directories holding them)."""
    for name in store.list():
        if name in kept:
            continue
        if any(rel.startswith(f"{name}/") for rel in kept):
            _delete_all_but(within(store, name), _below(name, kept))
        else:
            delete_entry(store, name)


def _below(name: str, kept: frozenset[str]) -> frozenset[str]:
    return frozenset(rel.removeprefix(f"{name}/") for rel in kept if rel.startswith(f"{name}/"))


def _empty_but_lock(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.name == LOCK_FILE:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
