"""A watchdog for tests that plant a FIFO where tunecore reads a file.

A reader that opens a FIFO nobody writes blocks forever, so a regression
would hang the test run instead of failing it. `fifo_watchdog(path)` opens
the FIFO's writing end after 20 s, which ends such a read; the block then
yields an event the test asserts is not set (the read never blocked).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WATCHDOG_SECONDS = 20.0
"""How long a read may block before the watchdog ends it: no timing the
test relies on, only a bound on how long a regression hangs."""


@contextmanager
def fifo_watchdog(fifo: Path) -> Iterator[threading.Event]:
    """Within the block, a read blocked on `fifo` is ended after
    `WATCHDOG_SECONDS`; the event yielded tells that it had to be."""
    unblocked = threading.Event()

    def unblock() -> None:
        unblocked.set()
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    watchdog = threading.Timer(WATCHDOG_SECONDS, unblock)
    watchdog.start()
    try:
        yield unblocked
    finally:
        watchdog.cancel()
