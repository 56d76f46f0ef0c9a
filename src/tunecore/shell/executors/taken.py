"""Process-wide settings that trial hosts take over in turn: `sys.stdout`
and `sys.stderr` (`log_to_file`) and the working directory
(`chdir_to_trial_dir`).

A Ray actor hosts one trial at a time, but the in-process executor's
trials share the driver's process and end in any order: two trials run
side by side, and a failed trial's release may run after its restart, on
another worker thread, has begun. So a host cannot put back the value it
found, which may be another trial's file, closed by now, or another
trial's directory. The rule: the newest value still held is in place; once
none is held, the value the first holder replaced comes back. (Putting
back what it found, a failed trial's release moved its restart out of the
trial directory; the same with streams left `sys.stderr` a closed file.)
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Generic, TextIO, TypeVar

T = TypeVar("T")


class Hold(Generic[T]):
    """One holder's value, given back by identity (two trials of one
    directory hold equal values)."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


class TakenInTurn(Generic[T]):
    """One process-wide setting (see the module docstring)."""

    def __init__(self, read: Callable[[], T], write: Callable[[T], object]) -> None:
        self._read = read
        self._write = write
        self._lock = threading.RLock()  # `take_over` takes under it
        self._held: list[Hold[T]] = []  # oldest first
        self._found: list[T] = []  # what the first holder replaced (None is a value: sys.stdout)

    def take(self, value: T) -> Hold[T]:
        """Put `value` in place until its hold is given back."""
        hold = Hold(value)
        with self._lock:
            if not self._held:
                self._found = [self._read()]
            self._write(value)
            self._held.append(hold)
        return hold

    def take_over(self, make: Callable[[T], T]) -> Hold[T]:
        """`take` the value `make` builds from the one found before the
        first value still held (the one in place when none is held): a
        trial's echoed stream wraps the console, never another trial's."""
        with self._lock:
            found = self._found[0] if self._held else self._read()
            return self.take(make(found))

    def give_back(self, hold: Hold[T]) -> None:
        """End `hold`: the newest value still held is put in place, or, with
        none left, the value found before the first."""
        with self._lock:
            self._held = [held for held in self._held if held is not hold]
            if self._held:
                self._write(self._held[-1].value)
                return
            found, self._found = self._found, []
            if found:
                self._write(found[0])


def _set_stdout(stream: TextIO) -> None:
    sys.stdout = stream


def _set_stderr(stream: TextIO) -> None:
    sys.stderr = stream


STDOUT: TakenInTurn[TextIO] = TakenInTurn(lambda: sys.stdout, _set_stdout)
STDERR: TakenInTurn[TextIO] = TakenInTurn(lambda: sys.stderr, _set_stderr)
WORKING_DIR: TakenInTurn[str] = TakenInTurn(os.getcwd, os.chdir)
