"""A trial's output stream under `log_to_file`: its file, echoed.

Ray Tune's trainable writes what a trial prints to the trial's file and to
the stream it replaced (its `Tee`): on a Ray worker that is the worker's
own output, which Ray shows on the driver's console prefixed with the
worker (`(TrialActor pid=..., ip=...)`); in process it is the driver's
console itself. The file is what matters: an echo that fails (a closed or
missing console) is dropped, never the trial's write.
"""

from __future__ import annotations

import contextlib
import io
from typing import TextIO


class Tee(io.TextIOBase):
    """Writes go to `file` and to `echo` (None: nowhere else)."""

    def __init__(self, file: TextIO, echo: TextIO | None) -> None:
        super().__init__()
        self._file = file
        self._echo = echo

    def write(self, text: str) -> int:
        written = self._file.write(text)
        if self._echo is not None:
            with contextlib.suppress(OSError, ValueError):  # a closed console: the file has it
                self._echo.write(text)
        return written

    def flush(self) -> None:
        self._file.flush()
        if self._echo is not None:
            with contextlib.suppress(OSError, ValueError):
                self._echo.flush()

    def close(self) -> None:
        """Flush, then close the file; the echoed stream is not this
        trial's to close."""
        if not self.closed:
            super().close()  # flushes first
            self._file.close()

    def fileno(self) -> int:
        """The file's: what writes to the descriptor reach, as before the echo."""
        return self._file.fileno()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._file.encoding
