"""One driver per stored experiment, across machines: the lease.

Storage has no lock and no compare-and-swap, so the driver of an experiment
in storage keeps a lease there (`driver.lease`: its host, pid, a random
token, a generation and when it last renewed it) and renews it on a
schedule of its own (`LeaseKeeper`). A driver that stops renewing (killed,
frozen, cut off) loses the experiment after `stale_s`, and another driver
may take it over with the next generation.

Nothing in the lease is trusted: it is read bounded (`MAX_LEASE_BYTES`)
and decoded into `Lease`, and one that does not decode, or whose time is
not a finite number within `stale_s` of this machine's clock (a day in
the future, `1e308`: it would never lapse), is no lease: it is named in a
warning and taken over.

A driver that renews reads the lease first: if another driver's token is
there, this driver lost the experiment (it was frozen past the lapse, or
its clock ran behind). The renewal then raises `LeaseLostError` naming the
new holder, and the driver stops shipping before it writes anything more.

The lease alone cannot stop a write already under way when the driver
froze. What is written is fenced instead (`shell.mirror.stored_state`): each
take-over is a new generation, which is in the name of every log object
and snapshot a driver ships; the new driver claims its generation before
it reads anything, and marks where it took the log over; readers trust an
older generation's objects only below that mark. Its workers' checkpoints
are fenced by renames on `file://` and by their generation's names on
object stores (`shell.mirror.upload_fence`).
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import Annotated

import msgspec

from tunecore.shell.lock import ExperimentLockedError
from tunecore.shell.mirror.claims import SEGMENT_DIR, claim_name, claimants
from tunecore.shell.mirror.stored_state import stored_objects
from tunecore.shell.mirror.upload_fence import open_generation
from tunecore.shell.processes import is_running, process_start
from tunecore.shell.storage.own_files import NotRegularFileError
from tunecore.shell.storage.store import Store

logger = logging.getLogger(__name__)

LEASE_FILE = "driver.lease"
LEASE_MIN_S = 60.0
"""A lease not renewed for this long (or ten shipping periods, if longer)
belongs to a driver that is gone."""
MAX_LEASE_BYTES = 4096
"""A lease is about 120 bytes; a larger object is no lease, and is not read."""


class Lease(msgspec.Struct, frozen=True, kw_only=True):
    """A driver's claim on a stored experiment, as stored."""

    host: str
    pid: Annotated[int, msgspec.Meta(gt=0)]
    token: str
    renewed: float
    """When the holder last renewed it (its clock, seconds since the epoch)."""
    generation: Annotated[int, msgspec.Meta(ge=0)] = 0
    """How many drivers held the experiment before this one (+1 per take-over)."""
    process_start: str | None = None
    """When the holder's process started (`shell.processes`), so that a later
    process given the same pid on its host is not taken for it."""

    def holder(self) -> str:
        return f"pid {self.pid} on host {self.host!r}"


class LeaseLostError(ExperimentLockedError):
    """Another driver took this driver's experiment over: this one stops."""


def read_lease(store: Store) -> Lease | None:
    """The lease in `store`, or None if there is none; what is there but no
    lease (garbage, too large) is None too, with a warning naming it."""
    try:
        data = store.read_bytes(LEASE_FILE, MAX_LEASE_BYTES)
    except FileNotFoundError:
        return None
    except NotRegularFileError as error:  # too large, a link: no lease
        logger.warning("Ignoring %s: not a lease (%s)", store.uri(LEASE_FILE), error)
        return None
    try:
        return msgspec.json.decode(data, type=Lease)
    except msgspec.DecodeError as error:
        logger.warning("Ignoring %s: not a lease (%s)", store.uri(LEASE_FILE), error)
        return None


def lapsed(lease: Lease, stale_s: float, now: float) -> str | None:
    """Why `lease` no longer keeps other drivers out (None: it does)."""
    if not math.isfinite(lease.renewed):
        return f"its time {lease.renewed!r} is no finite number"
    if lease.renewed > now + stale_s:
        return f"its time is {lease.renewed - now:.0f} s ahead of this machine's clock"
    if now - lease.renewed > stale_s:
        return f"not renewed for {now - lease.renewed:.0f} s"
    if lease.host == socket.gethostname() and not is_running(lease.pid, lease.process_start):
        return f"its driver (pid {lease.pid} on this host) is dead"
    return None


class LeaseKeeper:
    """This driver's lease on the experiment in `store`."""

    def __init__(self, store: Store, stale_s: float = LEASE_MIN_S) -> None:
        self.store = store
        self.stale_s = stale_s
        self.token = secrets.token_hex(8)
        self.generation = 0
        self.held: frozenset[str] = frozenset()
        """What this driver's hold on the experiment is made of in the
        store, once `take` returned: the lease, its claim and (on
        `file://`) its workers' upload directory. Deleting any of them
        gives the experiment up while the driver still runs: a
        driver that clears the experiment's directory keeps these."""
        self._process_start = process_start(os.getpid())
        self._lock = threading.Lock()
        self.lost: LeaseLostError | None = None

    def take(self) -> None:
        """Claim the experiment, or raise `ExperimentLockedError` naming
        the driver that holds it.

        Two drivers starting in the same instant both read the lease
        before either wrote one, and both take the same generation, which
        no fence tells apart. So each first stores its claim of that
        generation under its own token, then lists the claims, and only
        if no other token claimed it stores its lease. Storage lists what
        was stored before (read-after-write and list-after-write), so of
        two such drivers the later to store its claim sees the other's:
        at most one starts (both stay out if each sees the other; the
        next start takes the next generation)."""
        held = read_lease(self.store)
        if held is not None:
            why = lapsed(held, self.stale_s, time.time())
            if why is None:
                raise ExperimentLockedError(
                    f"{self.store.uri()} is in use by another driver ({held.holder()}, lease "
                    f"renewed {time.time() - held.renewed:.0f} s ago). Only one driver may run "
                    "an experiment: wait for it to end (a dead driver's lease lapses after "
                    f"{self.stale_s:.0f} s)"
                )
            logger.warning(
                "%s: taking over the lease of %s: %s",
                self.store.uri(LEASE_FILE),
                held.holder(),
                why,
            )
        # Past every generation that fenced the log too: a lease deleted
        # (its driver ended) must not bring an old generation back.
        fenced = stored_objects(self.store.list(SEGMENT_DIR)).fences.newest()
        self.generation = max(held.generation if held is not None else 0, fenced) + 1
        self.store.write_bytes(claim_name(self.generation, self.token), b"")
        rivals = claimants(self.store.list(SEGMENT_DIR), self.generation) - {self.token}
        if rivals:
            raise ExperimentLockedError(
                f"{self.store.uri()}: another driver started at the same moment (it claimed "
                f"generation {self.generation} too); this one does not start. Only one "
                "driver may run an experiment: start again once it has ended"
            )
        uploads = open_generation(self.store, self.generation)
        self.held = frozenset(
            filter(None, (LEASE_FILE, claim_name(self.generation, self.token), uploads))
        )
        self._write()

    def renew(self) -> None:
        """Renew the lease, unless a later driver took the experiment over:
        then `LeaseLostError` naming it (and every later call raises it
        too). An older driver's lease found instead of this one's (its
        renewal raced the take-over) is replaced, with a warning: that
        driver stops at its next check."""
        with self._lock:
            held = self._check()
            if held is not None and held.token != self.token:
                logger.warning(
                    "%s: %s (generation %d) wrote over the lease of this driver (generation "
                    "%d) after losing the experiment to it; the lease is this driver's again",
                    self.store.uri(LEASE_FILE),
                    held.holder(),
                    held.generation,
                    self.generation,
                )
            self._write()

    def check(self) -> None:
        """`LeaseLostError` if a later driver took the experiment over (and
        on every later call). A later driver claims the experiment
        (`stored_state.claim_name`) after it takes the lease and before it
        reads anything, so what this driver wrote before a check that
        passes, every later driver reads. A write that cannot be fenced
        (deleting a request, a checkpoint) thus waits for a check after
        the log recording it is stored."""
        with self._lock:
            self._check()

    def _check(self) -> Lease | None:
        """The lease as stored, unless this driver lost the experiment."""
        if self.lost is not None:
            raise self.lost
        held = read_lease(self.store)
        claimed = stored_objects(self.store.list(SEGMENT_DIR)).fences.newest()
        other = held if held is not None and held.token != self.token else None
        if claimed > self.generation or (other and other.generation >= self.generation):
            holder = "another driver" if other is None else other.holder()
            generation = max(claimed, 0 if other is None else other.generation)
            self.lost = LeaseLostError(
                f"{self.store.uri()}: another driver ({holder}, generation {generation}) took "
                f"this experiment over while this one (generation {self.generation}) did not "
                "renew its lease; this driver stops and writes nothing more to the storage"
            )
            raise self.lost
        return held

    def drop(self) -> None:
        """Give the experiment up (only a lease this driver still holds)."""
        held = read_lease(self.store)
        if held is not None and held.token == self.token:
            self.store.delete_file(LEASE_FILE)

    def _write(self) -> None:
        lease = Lease(
            host=socket.gethostname(),
            pid=os.getpid(),
            token=self.token,
            renewed=time.time(),
            generation=self.generation,
            process_start=self._process_start,
        )
        self.store.write_bytes(LEASE_FILE, msgspec.json.encode(lease))


def still_held(step: Callable[[], None], on_lost: Callable[[LeaseLostError], None]) -> bool:
    """Run `step` (a renewal or a check of the lease): False, once `on_lost`
    was told, if another driver took the experiment over."""
    try:
        step()
    except LeaseLostError as error:
        on_lost(error)
        return False
    return True


class Renewer:
    """Renews a lease every `period_s` in a thread of its own once started,
    whatever the shipper does meanwhile (a slow tick must not let the lease
    lapse), and at once on `renew_now`; `on_lost` is called if another
    driver took the experiment over."""

    def __init__(
        self, keeper: LeaseKeeper, period_s: float, on_lost: Callable[[LeaseLostError], None]
    ) -> None:
        self._keeper = keeper
        self._period_s = period_s
        self._on_lost = on_lost
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tunecore-lease", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:  # started
            self._thread.join()

    def renew_now(self) -> bool:
        """Renew the lease once, out of schedule (the shipper's, before a
        round writes anything: a driver that lost it, frozen past its
        lapse, stops there). False, once `on_lost` was told, if another
        driver took the experiment over; a storage failure raises `OSError`."""
        return still_held(self._keeper.renew, self._on_lost)

    def _run(self) -> None:
        while not self._stop.wait(self._period_s):
            try:
                if not self.renew_now():
                    return
            except OSError as error:  # storage down: the next period tries again
                logger.warning(
                    "Storage %s: renewing the lease failed (%s)", self._keeper.store.uri(), error
                )
