"""Ctrl-C that never lands between logging an event and applying it.

The loop logs each event, steps the core, then records what the step
applied; a KeyboardInterrupt raised by the SIGINT handler in between would
leave the log holding an event the live state never applied, and replay
would disagree with the run. `InterruptGuard` holds a SIGINT back while
such a section runs and delivers it, to whatever handler was installed
before (Python's, or the CLI's that remembers the exit code), as soon as
the section ends. Outside the sections Ctrl-C acts at once, so a loop
waiting for events still stops promptly.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

Handler = Callable[[int, FrameType | None], object]

INTERRUPTED = "interrupted by the user (Ctrl-C)"
"""The reason an experiment Ctrl-C ended stops with (`ExperimentState.stopping`):
the summary and `tunecore status` tell it from one that finished by it."""


class InterruptGuard:
    """Install with `installed()`; wrap each critical section in
    `critical()`. Only the main thread can handle signals, and only a
    Python handler can be wrapped: elsewhere both are no-ops."""

    def __init__(self) -> None:
        self._previous: Handler | None = None
        self._critical = False
        self._held: tuple[int, FrameType | None] | None = None
        self._section = _Critical(self._enter, self._leave)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous) or threading.current_thread() is not threading.main_thread():
            yield
            return
        self._previous = previous
        signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
            self._previous = None

    def critical(self) -> _Critical:
        """Hold a Ctrl-C back until the block ends (not re-entrant). A plain
        context manager, not a generator: the loop enters one per event."""
        return self._section

    def _enter(self) -> None:
        self._critical = True

    def _leave(self) -> None:
        self._critical = False
        held, self._held = self._held, None
        if held is not None and self._previous is not None:
            self._previous(*held)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self._critical:
            self._held = (signum, frame)
        elif self._previous is not None:
            self._previous(signum, frame)


class _Critical:
    """The block `InterruptGuard.critical` returns: `enter` as it starts,
    `leave` as it ends, however it ends."""

    __slots__ = ("_enter", "_leave")

    def __init__(self, enter: Callable[[], None], leave: Callable[[], None]) -> None:
        self._enter = enter
        self._leave = leave

    def __enter__(self) -> None:
        self._enter()

    def __exit__(self, *_: object) -> None:
        self._leave()
