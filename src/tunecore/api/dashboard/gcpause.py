"""The garbage collector held off while a route builds and encodes its JSON.

Why: a route that walks every trial (`/api/trials`, `/api/decisions`)
allocates a few containers per trial, hundreds of thousands at 100,000
trials, and CPython runs a full collection once the containers allocated
since the last one reach a quarter of the long-lived ones: about one full
pass per such request, over every object the view holds (1.4 million at
100,000 ASHA trials, 1.4 to 5.6 s each, measured). That pass made these
routes cost 5 to 14 times more per trial at 100,000 trials than at
10,000. What a route builds is fresh acyclic lists and dicts, freed by
reference counting as soon as it is sent, so holding the collector off for
the request loses nothing; it runs again, as scheduled, after.

The collector is process-wide and requests run on several threads: the
pause is counted, and the collector is enabled again only when the last
request ends, and only if it was enabled when the first began (a process
that disabled it keeps it disabled).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Pauses:
    """How many requests hold the collector off, and whether it was on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held = 0
        self.was_enabled = False


_PAUSES = _Pauses()


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic garbage collection while the block runs."""
    with _PAUSES.lock:
        if _PAUSES.held == 0:
            _PAUSES.was_enabled = gc.isenabled()
            gc.disable()
        _PAUSES.held += 1
    try:
        yield
    finally:
        with _PAUSES.lock:
            _PAUSES.held -= 1
            if _PAUSES.held == 0 and _PAUSES.was_enabled:
                gc.enable()
