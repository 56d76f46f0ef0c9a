"""Ctrl-C during `tunecore run` and `tunecore resume`: the first stops the
experiment through the core (the loop logs the interruption, ends the
workers and closes the log); any later one while that goes on is only
acknowledged, so nothing recorded is cut short, and no traceback of Ray's
exit handler is printed either: a Ray the command started is shut down here,
while Ctrl-C is still in hand, not by Ray's `atexit` hook after `main`."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType


@contextlib.contextmanager
def stopping_cleanly(command: str) -> Iterator[list[bool]]:
    """Whether Ctrl-C was pressed (the loop turns the KeyboardInterrupt into
    a stop and `fit()` returns normally, so the exit code, 130, has to be
    learned here). Only Python's default handler in the main thread is
    wrapped; elsewhere nothing changes but the shutdown of Ray."""
    seen: list[bool] = []
    default = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if not default or threading.current_thread() is not threading.main_thread():
        with _ray_shut_down_if_started():
            yield seen
        return

    def interrupted(_signum: int, _frame: FrameType | None) -> None:
        seen.append(True)
        if len(seen) == 1:
            raise KeyboardInterrupt
        if len(seen) == 2:  # once: a signal handler must not print (stderr may be mid-write)
            _write_to_terminal(
                f"tunecore {command}: already stopping: ending the workers and closing "
                "the event log, so that nothing recorded is lost\n"
            )

    signal.signal(signal.SIGINT, interrupted)
    try:
        with _ray_shut_down_if_started():
            yield seen
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _write_to_terminal(text: str) -> None:
    """Write to the process's own standard error, below `sys.stderr`: a
    signal handler must not go through Python's buffered stream, and
    `sys.stderr` may be a stream with no file descriptor at all (pytest's
    capture, a notebook's), which must not turn a second Ctrl-C into an
    error in the middle of stopping."""
    stream = sys.__stderr__
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):
        os.write(stream.fileno(), text.encode())


@contextlib.contextmanager
def _ray_shut_down_if_started() -> Iterator[None]:
    """Shut down (or disconnect from) a Ray the block started; one that was
    running before (a notebook's, a test session's) is left running."""
    running_before = _ray_running()
    try:
        yield
    finally:
        if not running_before and _ray_running():
            import ray  # noqa: PLC0415 - imported already, or Ray is not running

            ray.shutdown()


def _ray_running() -> bool:
    """Without importing Ray: `run --executor in_process` never does."""
    if "ray" not in sys.modules:
        return False
    import ray  # noqa: PLC0415 - imported already

    return ray.is_initialized()
