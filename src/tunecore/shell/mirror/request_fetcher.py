"""The driver's fetch of requests posted to the storage (`tunecore stop|add
URI`) into its staging inbox, on its own: the shipper's thread runs it each
round beside shipping, and tests call it alone."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tunecore.shell.mirror.stored_state import fetch_requests
from tunecore.shell.storage.store import Store


class RequestFetcher:
    """Copies new stored requests into the staging inbox of `local_dir`.

    A request stays in storage until the log that records it is stored (the
    loop deletes it then), so the names copied are remembered here and
    never copied twice."""

    def __init__(self, store: Store, local_dir: Path) -> None:
        self.store = store
        self.local_dir = Path(local_dir)
        self._copied: set[str] = set()  # copied to the staging inbox, still stored

    def fetch(self) -> None:
        """One round: copy the requests not copied yet (a bounded number:
        `fetch_requests`); a storage failure raises `OSError`."""
        self._copied.update(fetch_requests(self.store, self.local_dir, skip=self._copied))

    def fetched_already(self, names: Iterable[str]) -> None:
        """Requests copied to the staging inbox before this fetcher started
        (a resume's first read): never copied again."""
        self._copied.update(names)
