"""Reading an experiment kept in storage, from any machine, with nothing
but its URI.

A URI names the experiment's own directory, as `Tuner.restore` does in Ray:
`s3://bucket/runs/my_exp?endpoint_override=...` is the experiment `my_exp`
of a run with `storage_path="s3://bucket/runs?..."` (a `file://` URI, or a
path inside a `storage_filesystem`, the same). Readers (`tunecore status`,
`replay`, `ResultGrid.from_path`, `ExperimentAnalysis`, `Tuner.can_restore`)
work on a local directory, so the stored state (event log segments,
snapshots, trial files: never checkpoints) is fetched into a fresh
temporary directory, removed when the interpreter exits; checkpoints stay
in storage and are downloaded only when read (`Checkpoint.to_directory`).
A plain path is used in place, as before.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from tunecore.shell.eventlog import LogError, LogHeader, log_path, read_header
from tunecore.shell.mirror.claims import SEGMENT_DIR
from tunecore.shell.mirror.stored_state import StoredLogCorruptError, fetch_log, fetch_state
from tunecore.shell.storage.resolve import resolve_storage, uri_scheme, within
from tunecore.shell.storage.store import Store, join_uri
from tunecore.shell.trainable.checkpoint import Checkpoint


@dataclass(frozen=True)
class StoredExperiment:
    """An experiment in storage: its URI (no credentials), a store rooted
    at it, and a local directory holding its state (a fetched copy, or the
    driver's staging directory)."""

    uri: str
    store: Store
    local: Path

    @classmethod
    def named(cls, root_uri: str, root: Store, name: str, local: Path) -> StoredExperiment:
        """The experiment `name` of the storage `root` (at `root_uri`, as
        `StorageSpec.uri` gives it), its state in `local`."""
        return cls(join_uri(root_uri, name), within(root, name), local)

    def location(self, rel: str = "") -> str:
        """Where `rel` (a '/'-joined path in the experiment) is, as the
        user is shown it (`Store.shown`)."""
        return self.store.shown(rel)

    def checkpoint(self, rel: str) -> Checkpoint:
        """The stored checkpoint directory `rel`, readable from here: a
        local one where the user is shown a local path, else read through
        the storage's filesystem (a path inside the `SubTreeFileSystem`
        the user gave, as Ray names it, is read through it)."""
        local = self.store.local_path(rel)
        if local is not None and local == self.location(rel):
            return Checkpoint(local)
        return Checkpoint(self.location(rel), filesystem=self.store.filesystem())


def as_location(location: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """`location`, except that a local directory laid out as storage holds
    an experiment (`events/` log segments and no `events.log`: what a
    `file://` storage holds, and what results of such a run name) is named
    by its `file://` URI, so it is read as stored."""
    if uri_scheme(location) is not None:
        return location
    path = Path(location).expanduser()
    if not log_path(path).is_file() and (path / SEGMENT_DIR).is_dir():
        return path.resolve().as_uri()
    return location


def is_stored(location: str | os.PathLike[str], storage_filesystem: object = None) -> bool:
    """Whether `location` names an experiment in storage (a URI, a path
    inside `storage_filesystem`, or a local directory laid out as storage,
    see `as_location`) rather than a local experiment directory."""
    return storage_filesystem is not None or uri_scheme(as_location(location)) is not None


def open_stored(
    location: str | os.PathLike[str], storage_filesystem: object = None
) -> StoredExperiment:
    """The experiment at `location` (see `is_stored`), its state fetched
    into a new local directory. `LogError` naming the URI if nothing is
    stored there; storage failures are `OSError`s naming it."""
    spec, store = resolve_storage(as_location(location), storage_filesystem)
    local = store.local_path("")
    if local is not None and log_path(local).is_file():
        # A file:// URI of an experiment run with a plain path: read in place.
        return StoredExperiment(spec.uri, store, Path(local))
    cache = Path(tempfile.mkdtemp(prefix="tunecore-stored-"))
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    copy = cache / (_name(spec.uri) or "experiment")
    copy.mkdir()
    try:
        fetch_state(store, copy)
    except FileNotFoundError:  # nothing there: said below
        pass
    except StoredLogCorruptError as error:
        raise error.naming(spec.uri) from None
    if not log_path(copy).is_file():
        raise LogError(f"{spec.uri} holds no tunecore experiment (no event log is stored there)")
    return StoredExperiment(spec.uri, store, copy)


def experiment_header(
    location: str | os.PathLike[str], storage_filesystem: object = None
) -> LogHeader:
    """The header record of the experiment at `location`, reading only the
    event log (no snapshot, no trial file)."""
    if not is_stored(location, storage_filesystem):
        return read_header(Path(location).expanduser())
    spec, store = resolve_storage(as_location(location), storage_filesystem)
    local = store.local_path("")
    if local is not None and log_path(local).is_file():
        return read_header(local)
    with tempfile.TemporaryDirectory(prefix="tunecore-header-") as scratch:
        if not fetch_log(store, log_path(scratch)):
            raise LogError(
                f"{spec.uri} holds no tunecore experiment (no event log is stored there)"
            )
        return read_header(scratch)


def _name(uri: str) -> str:
    """The experiment's name: the last component of the URI's path."""
    path = urllib.parse.unquote(urllib.parse.urlsplit(uri).path)
    return path.rstrip("/").rpartition("/")[2]
