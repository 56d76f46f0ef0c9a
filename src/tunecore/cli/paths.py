"""The paths a command writes to, checked before it starts: a directory
that cannot be made, a file where a directory is needed (or the reverse),
a place that cannot be written are refused in one line naming the flag
and the value, not met as an `OSError` traceback halfway through."""

from __future__ import annotations

import os
import tempfile
import urllib.parse
from pathlib import Path

from tunecore.cli.errors import CliError


def directory_to_make(flag: str, given: str) -> Path:
    """`given` (`--storage-path`, a path or a `file://` URI) is a directory,
    or can be made one, and can take new entries; the local path. Nothing
    is left behind by the check."""
    parts = urllib.parse.urlsplit(given)
    local = urllib.parse.unquote(parts.path) if parts.scheme == "file" else given
    path = Path(local).expanduser()
    try:
        existing = next(p for p in (path, *path.parents) if p.exists())
    except OSError as error:  # a parent that cannot be read
        raise CliError(f"{flag} {given}: cannot look there ({error.strerror})") from None
    if not existing.is_dir():
        where = "is a file" if existing == path else f"is under the file {existing}"
        raise CliError(f"{flag} {given}: {where}, not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".tunecore-probe-"))
    except OSError as error:
        raise CliError(
            f"{flag} {given}: cannot create a directory there ({error.strerror})"
        ) from None
    return path


def file_to_write(flag: str, given: str | Path) -> None:
    """`given` (`--out`, `--plot`) can be written as a file: its directory
    exists and takes new files, and it is not a directory itself."""
    path = Path(given).expanduser()
    if path.is_dir():
        raise CliError(f"{flag} {given}: is a directory, not a file")
    _writable(f"{flag} {given}", path.parent, "a file there")


def experiment_to_write(directory: Path) -> None:
    """The experiment's directory takes new files (`resume`, `stop`, `add`,
    `replay --truncate` write in it)."""
    _writable(str(directory), directory, "in it")


def _writable(named: str, directory: Path, what: str) -> None:
    if not directory.is_dir():
        missing = "does not exist" if not directory.exists() else "is not a directory"
        raise CliError(f"{named}: cannot write {what} ({directory} {missing})")
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".tunecore-probe-")
    except OSError as error:
        raise CliError(f"{named}: cannot write {what} ({error.strerror})") from None
    os.close(fd)
    os.unlink(probe)
