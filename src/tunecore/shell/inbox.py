"""Requests from outside to a running experiment: `tunecore stop` and `add`.

The channel is a directory, `<experiment dir>/inbox/`, so it needs no
server, no port and no process id: whoever can write the experiment
directory can post, and a request posted while the driver is down waits
there for `tunecore resume`. (The seed ran a TuneServer and a client for
this.) An experiment kept in storage has the same inbox there
(`post_to_store`); the driver's shipper moves what arrives into the
staging directory's inbox.

- A request is one small JSON file holding a `Request` (a tagged union, so
  decoding builds nothing but these two structs; no pickle). It is written
  to a hidden temporary file in the same directory and renamed into place
  (`os.replace`), so a reader sees a whole request or none.
- Names are `{time_ns:020d}-{pid}-{counter:06d}.json`: unique across
  processes and threads, and in posting order when sorted (within a
  process exactly, across processes by the clock).
- `take` turns the requests into the core's events (`StopRequested`,
  `TrialRequested`) in name order and deletes their files. The loop logs
  those events like any other, so the event log, not this directory, is
  the record: replay never reads the inbox.
- Anyone who can write the directory can put anything there, and the loop
  reads it every 0.5 s, so `take` trusts no entry. The inbox itself must be
  a real directory: a symbolic link in its place (which would make the
  driver read and delete the requests of whatever directory it points to)
  is ignored with one warning. Of its entries `take` reads only regular
  files (`tunecore.shell.storage.own_files`: no symbolic link, no FIFO), at most
  `MAX_REQUEST_BYTES`, and decodes only JSON nested at most `MAX_DEPTH`
  deep (msgspec recurses, so deeper would raise RecursionError), holding
  only values the event log can store (`tunecore.model.storable`: a 1e23
  written as an integer would stop the driver when logged). Any other
  entry is skipped with one warning naming it and why, then deleted (a
  directory, which unlink cannot remove, is renamed aside to a hidden
  name), so neither this loop nor a resume meets it again.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeAlias, cast

import msgspec

from tunecore.model import ExperimentEvent, JsonDict, StopRequested, TrialRequested
from tunecore.model.codec import from_json, to_json
from tunecore.model.storable import UnstorableValueError, check_storable
from tunecore.shell.storage.own_files import NotRegularFileError, kind_of, read_bytes

if TYPE_CHECKING:
    from tunecore.shell.storage.store import Store

logger = logging.getLogger(__name__)

INBOX_DIR = "inbox"
MAX_REQUEST_BYTES = 1 << 20
"""A request is a few hundred bytes; a bigger entry is skipped unread."""
MAX_DEPTH = 100
"""Deepest nesting of JSON arrays and objects a request may have (the
request itself is level 1, its `config` level 2)."""
_SUFFIX = ".json"
_REJECTED_PREFIX = ".rejected-"
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_counter = itertools.count()  # next() on a count is atomic under the GIL


class StopTrialRequest(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Stop this trial for good (`tunecore stop DIR TRIAL_ID`)."""

    trial_id: Annotated[str, msgspec.Meta(min_length=1)]


class AddTrialRequest(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Add a trial with this config (`tunecore add DIR --config JSON`)."""

    config: JsonDict
    experiment_tag: str = ""


Request: TypeAlias = StopTrialRequest | AddTrialRequest


class Inbox:
    """The inbox of the experiment in `experiment_dir`; see the module docstring."""

    def __init__(self, experiment_dir: str | Path) -> None:
        self.directory = Path(experiment_dir) / INBOX_DIR
        self._stuck: set[str] = set()
        """Skipped entries that could not be removed: warned about once."""
        self._warned_not_a_directory = False

    def post(self, request: Request) -> Path:
        """Write `request` atomically; return the file it is in. An inbox
        that is a symbolic link (or a file) is refused with
        `NotRegularFileError` naming it: the driver reads nothing from it,
        so the request would be lost, in a directory outside the
        experiment."""
        self.directory.mkdir(parents=True, exist_ok=True)
        mode = os.lstat(self.directory).st_mode
        if not stat.S_ISDIR(mode):
            raise NotRegularFileError(
                errno.ENOTDIR,
                f"{kind_of(mode)} in place of the inbox: the driver reads no request "
                "from it (remove it; the next request makes the inbox again)",
                str(self.directory),
            )
        name = request_name()
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(to_json(request))
            target = self.directory / name
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return target

    def take(self, at: float) -> list[ExperimentEvent]:
        """The posted requests as events stamped `at`, oldest first; their
        files are deleted, and so are entries that are not requests (with a
        warning)."""
        if not self._is_directory():
            return []
        try:
            names = sorted(
                entry.name
                for entry in os.scandir(self.directory)
                if is_request_name(entry.name) and entry.name not in self._stuck
            )
        except (FileNotFoundError, NotADirectoryError):
            return []
        events: list[ExperimentEvent] = []
        for name in names:
            path = self.directory / name
            try:
                request = cast(Request, from_json(_read(path), Request))
                check_storable("the request", request)
            except FileNotFoundError:
                continue
            except (OSError, msgspec.DecodeError, _Refused, UnstorableValueError) as error:
                logger.warning(
                    "%s: skipped a request that cannot be read (%s); %s",
                    path,
                    error,
                    _discard(path),
                )
                if os.path.lexists(path):
                    self._stuck.add(name)
                continue
            events.append(_event(request, at, name))
            path.unlink(missing_ok=True)
        return events

    def _is_directory(self) -> bool:
        """Whether the inbox is a real directory (not a symbolic link to
        one); anything else in its place is warned about once."""
        try:
            mode = os.lstat(self.directory).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return False
        if stat.S_ISDIR(mode):
            return True
        if not self._warned_not_a_directory:
            self._warned_not_a_directory = True
            logger.warning(
                "%s is not a directory (a symbolic link or a file): ignoring it, no request "
                "is read from it. Remove it; the inbox is recreated by the next request.",
                self.directory,
            )
        return False


class _Refused(Exception):
    """An inbox entry that is not read: its kind, size or depth."""


def request_name() -> str:
    """A new request's file name (see the module docstring)."""
    return f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}{_SUFFIX}"


def post_to_store(store: Store, request: Request) -> str:
    """Post `request` to an experiment kept in storage, from any machine:
    it goes to `inbox/` in `store` (one object, written whole), and the
    driver's `StateShipper` moves it into the staging inbox within a
    shipping period, where `take` reads it like any other. Returns its URI."""
    rel = f"{INBOX_DIR}/{request_name()}"
    store.write_bytes(rel, to_json(request))
    return store.uri(rel)


def is_request_name(name: str) -> bool:
    """Whether `name` may be a posted request (what `take` looks at)."""
    return name.endswith(_SUFFIX) and not name.startswith(".")


def _read(path: Path) -> bytes:
    """The bytes of `path` if it is a regular file of at most
    `MAX_REQUEST_BYTES` holding JSON nested at most `MAX_DEPTH` deep."""
    data = read_bytes(path, MAX_REQUEST_BYTES)
    _check_depth(data)
    return data


def _check_depth(data: bytes) -> None:
    """Refuse JSON nested deeper than `MAX_DEPTH`, counting the brackets
    outside strings. Up to the first syntax error the strings found here
    are those msgspec finds, so msgspec never nests deeper than counted."""
    depth = 0
    for byte in _STRING.sub(b"", data).translate(None, _NOT_BRACKETS):
        depth += 1 if byte in b"[{" else -1
        if depth > MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} deep")


def _discard(path: Path) -> str:
    """Remove a skipped entry so that it is not read again; say what was done."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            aside = path.with_name(_REJECTED_PREFIX + path.name)
            path.rename(aside)
            return f"moved aside to {aside.name}"
        path.unlink()  # a symbolic link or a FIFO: removes the name only
    except FileNotFoundError:
        pass
    except OSError as error:
        return f"could not remove it ({error})"
    return "deleted"


def _event(request: Request, at: float, name: str) -> ExperimentEvent:
    if isinstance(request, StopTrialRequest):
        return StopRequested(trial_id=request.trial_id, at=at, request=name)
    return TrialRequested(
        config=request.config, experiment_tag=request.experiment_tag, at=at, request=name
    )


def request_of(event: ExperimentEvent) -> str:
    """The name of the inbox request `event` came from ("" if none)."""
    return event.request if isinstance(event, StopRequested | TrialRequested) else ""
