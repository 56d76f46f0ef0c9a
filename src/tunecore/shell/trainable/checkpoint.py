"""`Checkpoint`: a directory of training state, as Ray users know it.

A checkpoint is nothing but the absolute path of a local directory. It is
frozen and holds no other state, so passing one between the user's function
and tunecore never shares anything mutable, and persisting one means writing
a path, never pickling an object. Whatever the user put in the directory is
the state; tunecore copies it (into the trial's `checkpoint_NNNNNN/`
directories, or into a tar in memory) and never interprets it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

import msgspec


class Checkpoint(msgspec.Struct, frozen=True):
    """A local directory holding a checkpoint; build one with `from_directory`."""

    path: str

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

        The checkpoint is local already, so this yields its own path: do not
        modify or delete what is in it (copy with `to_directory` for that).
        It exists so code written for Ray, whose checkpoints may be remote,
        runs unchanged."""
        if not os.path.isdir(self.path):
            raise FileNotFoundError(f"the checkpoint directory {self.path!r} no longer exists")
        yield self.path

    def to_directory(self, dest: str | os.PathLike[str] | None = None) -> str:
        """Copy the checkpoint's files into `dest` (created if missing; files
        already there with the same names are replaced) or, without `dest`,
        into a new temporary directory; returns the directory written."""
        target = tempfile.mkdtemp(prefix="checkpoint_") if dest is None else os.fspath(dest)
        shutil.copytree(self.path, target, dirs_exist_ok=True)
        return os.path.abspath(target)
