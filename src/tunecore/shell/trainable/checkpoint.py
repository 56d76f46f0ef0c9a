"""`Checkpoint`: a directory of training state, as Ray users know it.

A checkpoint is the path of a directory: a local one (absolute), or one in
storage (`s3://bucket/exp/trial/checkpoint_000003?endpoint_override=...`,
the checkpoints of an experiment stored at a URI), optionally with the
`pyarrow.fs.FileSystem` to reach it (Ray's `Checkpoint(path, filesystem)`;
then `path` may also be the path inside that filesystem, `bucket/x`).
It is frozen, so passing one between the user's function and tunecore never
shares anything mutable, and only its path is ever recorded, never the
object (the filesystem, which may hold credentials, is not persisted: without
it the path's URI is resolved again, credentials from the environment).
Whatever the user put in the directory is the state; tunecore copies it
and never interprets it. A checkpoint in storage is read by downloading it
(`to_directory`, `as_directory`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from tunecore.model.foreign_class import foreign_base
from tunecore.shell.storage.resolve import resolve_storage, uri_scheme
from tunecore.shell.storage.store import Store
from tunecore.shell.trainable.checkpoint_removed import Removed

METADATA_FILE = ".metadata.json"
"""Where a checkpoint's metadata is kept in its directory (Ray's name)."""


class Checkpoint(msgspec.Struct, frozen=True, omit_defaults=True):
    """A directory holding a checkpoint: build one with `from_directory`;
    `Result.checkpoint` of an experiment in storage is one there."""

    path: str
    filesystem: Any = None
    """A `pyarrow.fs.FileSystem` holding `path`, or None: a local path, or a
    URI resolved when the checkpoint is read."""

    # Ray's methods of before 2.7: each says what to do instead.
    from_dict = Removed()
    to_dict = Removed()
    from_bytes = Removed()
    to_bytes = Removed()
    get_internal_representation = Removed()
    from_uri = Removed()
    to_uri = Removed()
    uri = Removed()
    get_preprocessor = Removed()
    set_preprocessor = Removed()

    def __hash__(self) -> int:
        # pyarrow filesystems are unhashable; equal checkpoints share a path.
        return hash(self.path)

    @classmethod
    def from_directory(cls, path: str | os.PathLike[str]) -> Checkpoint:
        """The checkpoint in `path`, which must be an existing directory.

        The path is made absolute here, so a later change of the working
        directory (user code does that) cannot make it point elsewhere, and a
        missing directory is reported at the user's call rather than at a
        save much later."""
        absolute = os.path.abspath(os.fspath(path))
        if not os.path.isdir(absolute):
            raise NotADirectoryError(
                f"Checkpoint.from_directory({os.fspath(path)!r}): {absolute!r} is not an "
                "existing directory; write the checkpoint's files into a directory first"
            )
        return cls(absolute)

    @contextlib.contextmanager
    def as_directory(self) -> Iterator[str]:
        """A local directory with the checkpoint's files, for reading.

        A local checkpoint yields its own path: do not modify or delete what
        is in it (copy with `to_directory` for that). One in storage is
        downloaded into a temporary directory, deleted afterwards."""
        local = self.local_dir()
        if local is not None:
            if not os.path.isdir(local):
                raise FileNotFoundError(f"the checkpoint directory {self.path!r} no longer exists")
            yield local
            return
        target = tempfile.mkdtemp(prefix="checkpoint_")
        try:
            yield self.to_directory(target)
        finally:
            shutil.rmtree(target, ignore_errors=True)

    def to_directory(self, path: str | os.PathLike[str] | None = None) -> str:
        """Copy (or download) the checkpoint's files into `path` (`~`
        expanded, created if missing; files already there with the same
        names are replaced) or, without `path`, into a new temporary
        directory; returns the directory written. A temporary directory made
        here is deleted again when the copy fails: the caller never learns
        its name."""
        target = (
            tempfile.mkdtemp(prefix="checkpoint_")
            if path is None
            else os.path.expanduser(os.fspath(path))
        )
        try:
            local = self.local_dir()
            if local is None:
                self._store().download_dir("", target)
            else:
                shutil.copytree(local, target, dirs_exist_ok=True)
        except BaseException:
            if path is None:
                shutil.rmtree(target, ignore_errors=True)
            raise
        return os.path.abspath(target)

    def get_metadata(self) -> dict[str, Any]:
        """The metadata stored with the checkpoint (Ray's `.metadata.json`
        in its directory); empty if none was."""
        store = self._store()
        if not store.exists(METADATA_FILE):
            return {}
        metadata = json.loads(store.read_bytes(METADATA_FILE))
        if not isinstance(metadata, dict):
            raise ValueError(
                f"{self.path}/{METADATA_FILE} holds {type(metadata).__name__}, not a JSON object"
            )
        return metadata

    def set_metadata(self, metadata: Mapping[str, Any]) -> None:
        """Store `metadata` (JSON: a `TypeError` names what is not) with
        the checkpoint, in place of what was stored."""
        if not isinstance(metadata, Mapping):
            raise TypeError(f"set_metadata takes a dict, got {type(metadata).__name__}")
        self._store().write_bytes(METADATA_FILE, json.dumps(dict(metadata)).encode())

    def update_metadata(self, metadata: Mapping[str, Any]) -> None:
        """Add `metadata` to what is stored with the checkpoint."""
        self.set_metadata({**self.get_metadata(), **metadata})

    def local_dir(self) -> str | None:
        """The local directory the checkpoint is, None if it is in storage."""
        if self.filesystem is None and uri_scheme(self.path) is None:
            return self.path
        if self.filesystem is None and uri_scheme(self.path) == "file":
            return self._store().local_path("")
        return None

    def _store(self) -> Store:
        """The checkpoint's directory as a store rooted at it."""
        return resolve_storage(self.path, self.filesystem)[1]


def is_ray_checkpoint(value: object) -> bool:
    """Whether `value` is Ray's own `Checkpoint` (`ray.train.Checkpoint`,
    `ray.tune.Checkpoint`), which a library built on Ray hands over in
    code no import rewriting reaches (RLlib's `algo.save()` returns a
    `TrainingResult` holding one). Found by name in the object's MRO:
    tunecore never imports `ray.train`."""
    return foreign_base(type(value), "ray.train", ("Checkpoint",)) is not None
