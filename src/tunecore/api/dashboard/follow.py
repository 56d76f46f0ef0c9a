"""Keeps an `ExperimentView` in step with an experiment's log as it grows.

A local experiment is followed by reading only the records appended since
the last look (`LogFollower`), at most every `interval` seconds, and only
when the log file changed size. An experiment at a URI is followed
through a local copy of its stored state, fetched again every
`stored_interval` seconds (storage is shipped every few seconds anyway;
see `SyncConfig.sync_period`); a copy whose log was compacted or replaced
(shorter than what was read) is read again from its start.

Readers (the server's threads) take `view()` under the follower's lock,
and the background thread updates it under the same lock, so a page never
sees half an event.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tunecore.api.dashboard.view import ExperimentView
from tunecore.shell.eventlog import LogError, LogFollower, log_path
from tunecore.shell.mirror.remote import StoredExperiment, is_stored, open_stored
from tunecore.shell.mirror.stored_state import fetch_state
from tunecore.shell.replay import header_state

logger = logging.getLogger(__name__)

BATCH = 2_000
"""Events stepped per turn holding the lock: a first read of a huge log
serves pages between batches instead of after the whole log."""


class Follower:
    """An experiment's directory or URI, and its view as of the last look."""

    def __init__(
        self, location: str | os.PathLike[str], interval: float = 1.0, stored_interval: float = 5.0
    ) -> None:
        self.location = str(location)
        self.stored: StoredExperiment | None = (
            open_stored(location) if is_stored(location) else None
        )
        self.directory = (
            self.stored.local if self.stored is not None else Path(location).expanduser().resolve()
        )
        self.interval = stored_interval if self.stored is not None else interval
        self.problem: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._read_all = threading.Event()
        self._reader = LogFollower(self.directory)
        self._view = ExperimentView(header_state(self._reader.header, self._reader.path))
        self._size = -1
        self._fed = self._reader.offset
        self._fetched = time.monotonic()
        self._thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        return self._reader.header.name

    def progress(self) -> tuple[int, int]:
        """(bytes of the log whose events the view holds, the log's size
        when last looked at; before the first look, its size now, so a
        follower that has read nothing yet never counts as caught up)."""
        size = self._size
        if size < 0:
            try:
                size = log_path(self.directory).stat().st_size
            except OSError:
                size = self._fed
        return self._fed, max(size, self._fed)

    @contextmanager
    def view(self) -> Iterator[ExperimentView]:
        """The view, held still while the caller reads it."""
        with self._lock:
            yield self._view

    def catch_up(self) -> bool:
        """Read whatever the log gained; whether anything was."""
        if self.stored is not None and time.monotonic() - self._fetched >= self.interval:
            self._fetch()
        try:
            size = log_path(self.directory).stat().st_size
        except OSError as error:
            self.problem = f"the event log cannot be read: {error}"
            return False
        if size == self._size:
            return False
        if size < self._reader.offset:
            self._restart()
        self._size = size
        grew = False
        while True:
            try:
                events = self._reader.read_new(most=BATCH)
            except LogError as error:
                self.problem = str(error)
                return grew
            if not events:
                # What is left is a record still being written (or a crashed
                # writer's torn tail): the view holds the whole log there is.
                self._size = self._reader.offset
                break
            with self._lock:
                self._view.feed(events)
                self._fed = self._reader.offset
            grew = True
        return grew

    def caught_up(self, timeout: float) -> bool:
        """Wait until the follower has read the whole log as it was when it
        last looked (at most `timeout` seconds); whether it has."""
        return self._read_all.wait(timeout)

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        """Follow in a background thread until `stop`."""

        def follow() -> None:
            while not self._stop.is_set():
                try:
                    if self.catch_up() and on_change is not None:
                        on_change()
                except Exception:  # a bad read must not end the page
                    logger.exception("following %s", self.location)
                read, size = self.progress()
                if read >= size:
                    self._read_all.set()
                self._stop.wait(min(self.interval, 1.0))

        self._thread = threading.Thread(
            target=follow, name="tunecore-dashboard-follow", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _fetch(self) -> None:
        assert self.stored is not None
        self._fetched = time.monotonic()
        try:
            fetch_state(self.stored.store, self.directory)
        except (OSError, LogError) as error:
            self.problem = f"{self.location}: {error}"

    def _restart(self) -> None:
        """The log is shorter than what was read: a fetched copy replaced
        by a compacted one. Read it again from the start."""
        self._reader = LogFollower(self.directory)
        with self._lock:
            self._view = ExperimentView(header_state(self._reader.header, self._reader.path))
            self._fed = self._reader.offset
