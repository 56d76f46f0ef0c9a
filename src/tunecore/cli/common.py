"""What the commands share: finding the experiment a command names (a
directory, or a URI whose stored state is read through a local copy) and
an unusable event log as a message and an exit code."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from tunecore.cli.errors import EXIT_CORRUPT, EXIT_MISMATCH, CliError
from tunecore.shell.eventlog import LOG_FILE, CorruptLogError, LogError, log_path
from tunecore.shell.mirror.remote import is_stored, open_stored
from tunecore.shell.mirror.stored_state import StoredLogCorruptError
from tunecore.shell.replay import ReplayMismatchError


def log_error(error: LogError) -> CliError:
    """An unusable event log as a message and an exit code (see the
    docstring of `tunecore.cli`)."""
    if isinstance(error, ReplayMismatchError):
        return CliError(str(error), EXIT_MISMATCH)
    if isinstance(error, CorruptLogError):
        if not error.record or isinstance(
            error, StoredLogCorruptError
        ):  # the header: cutting there would leave nothing
            return CliError(str(error), EXIT_CORRUPT)
        hint = (
            f"To cut the log there, keeping the records before it: "
            f"tunecore replay {error.path.parent} --truncate"
        )
        return CliError(f"{error}\n{hint}", EXIT_CORRUPT)
    return CliError(str(error))


def experiment_dir(given: str, flag: str = "") -> Path:
    """`given` if it holds an experiment, else an error saying what it is
    (naming the flag it was given to, if any)."""
    path = Path(given).expanduser()
    named = f"{flag} {path}" if flag else str(path)
    if not path.exists():
        raise CliError(f"{named} does not exist")
    if not path.is_dir():
        raise CliError(f"{named} is not a directory")
    if not log_path(path).is_file():
        raise CliError(f"{named} is not a tunecore experiment directory (no {LOG_FILE})")
    return path


@contextlib.contextmanager
def readable(given: str, flag: str = "") -> Iterator[tuple[Path, str]]:
    """The local directory of the experiment `given` (a directory, or a URI
    whose stored state is fetched into a local copy) and how to name it.
    An unusable log of a URI is reported naming the URI, not the copy."""
    if not is_uri(given, flag):
        directory = experiment_dir(given, flag)
        yield directory, str(directory)
        return
    try:
        stored = open_stored(given)
    except CorruptLogError as error:  # no advice to cut: a stored log is only read
        raise CliError(str(error), EXIT_CORRUPT) from None
    except (LogError, OSError, ValueError, ImportError) as error:
        raise CliError(as_given(error, given, flag)) from None
    try:
        yield stored.local, stored.uri
    except CorruptLogError as error:  # no advice to cut: a stored log is only read
        raise CliError(
            f"{stored.uri}: the stored event log's record {error.record} at byte offset "
            f"{error.offset} is corrupt",
            EXIT_CORRUPT,
        ) from None
    except LogError as error:
        code = log_error(error).code
        raise CliError(str(error).replace(str(stored.local), stored.uri), code) from None


def is_uri(given: str, flag: str = "") -> bool:
    try:
        return is_stored(given)
    except ValueError as error:  # `s3:/x`: a scheme without `://`
        raise CliError(as_given(error, given, flag)) from None


def as_given(error: Exception, given: str, flag: str) -> str:
    """The storage layer's message about the URI `given` (or the storage
    above it, as a resume opens it), which names it as the Python setting
    `storage_path`, naming it as typed instead: the argument itself, or
    the flag it was given to."""
    named = f"{flag} {given}" if flag else given

    def as_typed(match: re.Match[str]) -> str:
        return named if given.startswith(match.group(1)) else match.group(0)

    return re.sub(r"storage_path '([^']*)'", as_typed, str(error))
