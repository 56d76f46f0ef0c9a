"""Requests from outside to a running experiment: `tunecore stop` and `add`.

The channel is a directory, `<experiment dir>/inbox/`, so it needs no
server, no port and no process id: whoever can write the experiment
directory can post, and a request posted while the driver is down waits
there for `tunecore resume`. (The seed ran a TuneServer and a client for
this.)

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
  the record: replay never reads the inbox. A file that does not decode is
  deleted with a warning rather than retried forever.
"""

from __future__ import annotations

import itertools
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Annotated, TypeAlias, cast

import msgspec

from tunecore.model import ExperimentEvent, JsonDict, StopRequested, TrialRequested
from tunecore.model.codec import from_json, to_json

logger = logging.getLogger(__name__)

INBOX_DIR = "inbox"
_SUFFIX = ".json"
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

    def post(self, request: Request) -> Path:
        """Write `request` atomically; return the file it is in."""
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}{_SUFFIX}"
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
        files are deleted."""
        try:
            names = sorted(
                entry.name
                for entry in os.scandir(self.directory)
                if entry.name.endswith(_SUFFIX) and not entry.name.startswith(".")
            )
        except FileNotFoundError:
            return []
        events: list[ExperimentEvent] = []
        for name in names:
            path = self.directory / name
            try:
                request = cast(Request, from_json(path.read_bytes(), Request))
            except FileNotFoundError:
                continue
            except (OSError, msgspec.DecodeError) as error:
                logger.warning("%s: skipped a request that cannot be read (%s)", path, error)
            else:
                events.append(_event(request, at))
            path.unlink(missing_ok=True)
        return events


def _event(request: Request, at: float) -> ExperimentEvent:
    if isinstance(request, StopTrialRequest):
        return StopRequested(trial_id=request.trial_id, at=at)
    return TrialRequested(config=request.config, experiment_tag=request.experiment_tag, at=at)
