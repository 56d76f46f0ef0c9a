"""`LocalStore`: a `Store` on a local (or mounted) directory, with `os` and
`shutil`: what a plain `storage_path` and a `file://` URI give."""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, BinaryIO

from tunecore.shell.storage import own_files
from tunecore.shell.storage.own_files import NotRegularFileError, is_temp
from tunecore.shell.storage.store import (
    Readable,
    check_rel,
    join_path,
    local_files,
    local_filesystem,
    naming,
)

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

logger = logging.getLogger(__name__)


def _joined(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/"))


class LocalStore:
    """A store on a local (or mounted) directory, with `os` and `shutil`."""

    __slots__ = ("root",)

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(os.path.expanduser(root))

    def __repr__(self) -> str:
        return f"LocalStore({self.root!r})"

    def _path(self, rel: str, *, root_ok: bool = True) -> str:
        """The local path of `rel`, once no entry on the way from the root
        to it is a symbolic link: storage is never read, written or deleted
        through a link (one in place of a trial directory would lead a
        resume into someone else's files). `NotRegularFileError` names it.
        Reads open the path again without following a link below the root
        (`own_files`, `beneath`): a link planted after this check is
        refused there too."""
        check_rel(rel, root_ok=root_ok)
        if not rel:
            return self.root
        path = self.root
        for part in rel.split("/"):
            path = os.path.join(path, part)
            try:
                mode = os.lstat(path).st_mode
            except (FileNotFoundError, NotADirectoryError):
                break
            if stat.S_ISLNK(mode):
                raise NotRegularFileError(
                    errno.ELOOP, "a symbolic link: storage is never used through a link", path
                )
        return _joined(self.root, rel)

    def uri(self, rel: str = "") -> str:
        check_rel(rel)
        return _joined(self.root, rel) if rel else self.root

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        path = self._path(rel, root_ok=False)
        with naming(self, rel):
            if not os.path.lexists(path) or stat.S_ISDIR(os.lstat(path).st_mode):
                raise FileNotFoundError("no object")
            return own_files.read_bytes(Path(path), limit, beneath=Path(self.root))

    def open_input(self, rel: str) -> contextlib.AbstractContextManager[Readable]:
        path = self._path(rel, root_ok=False)
        with naming(self, rel):
            if not os.path.lexists(path) or stat.S_ISDIR(os.lstat(path).st_mode):
                raise FileNotFoundError("no object")
            return os.fdopen(own_files.open_fd(Path(path), beneath=Path(self.root)), "rb")

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self._path(rel, root_ok=False)
        with naming(self, rel):
            self._write(path, lambda file: file.write(data))

    def _write(self, path: str, write: Callable[[BinaryIO], object]) -> None:
        """Write the file `path` with `write`, into a temporary beside it
        renamed over it once whole, in its directory reached from the root
        without following a link (made on the way): `_path` checked every
        component, but a directory swapped for a link after that check had
        the write land where the link points. Such a link is refused with
        `NotRegularFileError` naming it."""
        own_files.write_through(
            Path(path), write, shared=True, beneath=Path(self.root), create=True
        )

    def list(self, rel: str = "") -> list[str]:
        path = self._path(rel)
        with naming(self, rel):
            try:
                entries = list(os.scandir(path))
            except (FileNotFoundError, NotADirectoryError):
                return []
        names = []
        for entry in entries:
            if is_temp(entry.name):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except FileNotFoundError:  # deleted meanwhile
                continue
            if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                names.append(entry.name)
            else:
                logger.warning("%s: skipped, %s in storage", entry.path, own_files.kind_of(mode))
        return sorted(names)

    def exists(self, rel: str) -> bool:
        try:
            return os.path.lexists(self._path(rel))
        except NotRegularFileError:
            return True  # something is there: a link, which nothing uses

    def upload_dir(self, local: str, rel: str, *, marker: str | None = None) -> int:
        self._path(rel)
        written = 0
        for name in local_files(local, marker):
            with naming(self, join_path(rel, name)):
                target = self._path(join_path(rel, name), root_ok=False)
                with open(os.path.join(local, *name.split("/")), "rb") as source:
                    self._write(target, functools.partial(shutil.copyfileobj, source))
                    written += source.tell()
        return written

    def download_dir(self, rel: str, local: str) -> int:
        source = self._path(rel)
        read = 0
        with naming(self, rel):
            files = local_files(source, None, links=False) if os.path.isdir(source) else []
            if not files:
                raise FileNotFoundError("nothing stored under it")
            for name in files:
                target = os.path.join(local, *name.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(os.path.join(source, *name.split("/")), target)
                read += os.path.getsize(target)
        return read

    def copy_dir(self, src: str, dst: str, *, marker: str | None = None) -> None:
        source = self._path(src)
        self._path(dst)
        with naming(self, src):
            if not (os.path.isdir(source) and local_files(source, None, links=False)):
                raise FileNotFoundError("nothing stored under it")
        self.upload_dir(source, dst, marker=marker)

    def copy_file(self, src: str, dst: str) -> None:
        target = self._path(dst, root_ok=False)
        with self.open_input(src) as source, naming(self, dst):

            def copy(file: BinaryIO) -> None:
                while chunk := source.read(1 << 20):
                    file.write(chunk)

            self._write(target, copy)

    def delete_dir(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with (
            naming(self, rel),
            contextlib.suppress(FileNotFoundError),
            own_files.in_directory(Path(path), Path(self.root)) as (name, parent),
        ):
            shutil.rmtree(name, dir_fd=parent)

    def delete_file(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with (
            naming(self, rel),
            contextlib.suppress(FileNotFoundError),
            own_files.in_directory(Path(path), Path(self.root)) as (name, parent),
        ):
            os.unlink(name, dir_fd=parent)

    def local_path(self, rel: str) -> str:
        return self._path(rel)

    def under(self, rel: str) -> LocalStore:
        return LocalStore(self._path(rel, root_ok=False))

    def fs_path(self, rel: str = "") -> str:
        return PurePath(self.uri(rel)).as_posix()

    def filesystem(self) -> FileSystem:
        return local_filesystem()

    def shown(self, rel: str = "") -> str:
        try:
            return self._path(rel)
        except NotRegularFileError:
            return self.uri(rel)


class SubtreeStore(LocalStore):
    """A local directory the user named by a path inside a
    `pyarrow.fs.SubTreeFileSystem` over the local filesystem: kept by
    `LocalStore` (pyarrow's filesystems follow symbolic links), while the
    places in it are shown, and read by `filesystem()`, as paths inside
    the user's filesystem, as Ray shows them (`fs_path`, `shown`)."""

    __slots__ = ("fs", "fs_base")

    def __init__(self, root: str, fs: FileSystem, fs_base: str) -> None:
        super().__init__(root)
        self.fs = fs
        self.fs_base = fs_base.rstrip("/") or fs_base

    def __repr__(self) -> str:
        return f"SubtreeStore({self.root!r}, {self.fs_base!r})"

    def under(self, rel: str) -> SubtreeStore:
        return SubtreeStore(self._path(rel, root_ok=False), self.fs, self.fs_path(rel))

    def fs_path(self, rel: str = "") -> str:
        return join_path(self.fs_base, check_rel(rel))

    def filesystem(self) -> FileSystem:
        return self.fs

    def shown(self, rel: str = "") -> str:
        return self.fs_path(rel)
