"""The command line's exit codes and its error for what the user asked
(see `tunecore.cli` for what each code means)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_MISMATCH = 3
EXIT_CORRUPT = 4
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A problem with what the user asked for: printed without a traceback,
    and the process exits with `code`."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code
