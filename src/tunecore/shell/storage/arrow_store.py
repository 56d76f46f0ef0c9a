"""`ArrowStore`: a `Store` on any `pyarrow.fs.FileSystem` (S3, GCS, HDFS, a
mounted fsspec filesystem). pyarrow is optional (`pip install
'tunecore[storage]'`) and is imported only by the methods that need it."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tunecore.shell.storage.own_files import NotRegularFileError, is_temp, temp_name
from tunecore.shell.storage.store import (
    Readable,
    Store,
    check_rel,
    join_path,
    join_uri,
    local_files,
    marker_last,
    naming,
)

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

logger = logging.getLogger(__name__)


# Filesystems where one write of an object is atomic by itself (a PUT):
# there a temporary name plus a rename would double the requests for nothing.
_OBJECT_STORES = frozenset({"s3", "gcs", "abfs"})


_CHUNK = 1 << 20


def _parent(path: str) -> str:
    return path.rpartition("/")[0] or "/"


def _check_listed(store: Store, rel: str, name: str) -> None:
    """Refuse a name a listing gave that is no store path (an S3 key may be
    `ckpt/../x`, which pyarrow's client normalises into another object's
    GET): `OSError` naming it, before anything is read or written."""
    try:
        check_rel(name, root_ok=False)
    except ValueError:
        raise OSError(
            f"{store.uri(rel)} holds an object named {name!r}, which is no store path "
            "(an empty, '.' or '..' component): refused, nothing read or written"
        ) from None


def _too_large(store: Store, rel: str, limit: int, size: int) -> NotRegularFileError:
    return NotRegularFileError(
        errno.EFBIG, f"larger than {limit} bytes ({size}): refused unread", store.uri(rel)
    )


def _is_component(store: Store, rel: str, name: str) -> bool:
    """Whether a name a listing of `rel` gave is one path component; the
    `..` of an S3 key `x/../y` is not, and is left out with a warning."""
    if name not in ("", ".", "..") and "/" not in name and "\0" not in name:
        return True
    logger.warning("%s: skipped the entry %r, which is no store path", store.uri(rel), name)
    return False


class ArrowStore:
    """A store on a `pyarrow.fs.FileSystem`, under the directory `base` of
    that filesystem (`bucket/prefix` on S3, an absolute path on a local
    one). `uri` names it in messages (default `<type name>://<base>`).
    `shown_as_path`: the storage was named by a path inside a filesystem
    the user gave (`storage_path="experiments"` beside
    `storage_filesystem=fs`), whose URI is made up, so the places in it
    are shown to the user as that path (`shown`), as Ray
    shows them.

    Transfers go one object at a time, in the calling thread (Ray's
    `use_threads=False` for uploads: arrow#32372), which is also what makes
    the marker-last order hold without further synchronisation."""

    __slots__ = ("_uri", "base", "fs", "shown_as_path")

    def __init__(
        self, fs: FileSystem, base: str, uri: str | None = None, *, shown_as_path: bool = False
    ) -> None:
        self.fs = fs
        self.base = base.rstrip("/") or base
        self._uri = (uri or f"{fs.type_name}://{self.base}").rstrip("/")
        self.shown_as_path = shown_as_path

    def __repr__(self) -> str:
        return f"ArrowStore({self._uri!r})"

    def _path(self, rel: str, *, root_ok: bool = True) -> str:
        return join_path(self.base, check_rel(rel, root_ok=root_ok))

    def _atomic_put(self) -> bool:
        return self.fs.type_name in _OBJECT_STORES

    def _make_parent(self, path: str, made: set[str]) -> None:
        """Create `path`'s parent directory where the filesystem needs one
        (object stores do not; each creation there would cost a request)."""
        parent = _parent(path)
        if not self._atomic_put() and parent not in made:
            self.fs.create_dir(parent, recursive=True)
            made.add(parent)

    def uri(self, rel: str = "") -> str:
        return join_uri(self._uri, check_rel(rel))

    def shown(self, rel: str = "") -> str:
        return self.fs_path(rel) if self.shown_as_path else self.uri(rel)

    def under(self, rel: str) -> ArrowStore:
        base = self._path(rel, root_ok=False)
        return ArrowStore(self.fs, base, self.uri(rel), shown_as_path=self.shown_as_path)

    def fs_path(self, rel: str = "") -> str:
        return self._path(rel)

    def filesystem(self) -> FileSystem:
        return self.fs

    def _kind(self, path: str) -> str:
        from pyarrow.fs import FileType  # noqa: PLC0415 - pyarrow is optional

        kind = self.fs.get_file_info(path).type
        if kind == FileType.File:
            return "file"
        return "dir" if kind == FileType.Directory else "missing"

    def _files(self, rel: str) -> list[str]:
        """The '/'-joined paths, relative to `rel`, of the objects under it."""
        from pyarrow.fs import FileSelector, FileType  # noqa: PLC0415

        root = self._path(rel)
        try:
            infos = self.fs.get_file_info(FileSelector(root, allow_not_found=True, recursive=True))
        except NotADirectoryError:
            return []
        names = sorted(
            info.path[len(root.rstrip("/")) + 1 :]
            for info in infos
            if info.type == FileType.File and not is_temp(info.base_name)
        )
        for name in names:
            _check_listed(self, rel, name)
        return names

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        path = self._path(rel, root_ok=False)
        with naming(self, rel):
            if limit is not None:  # its size first: a GET of a huge object costs its size
                self._check_size(path, rel, limit)
            try:
                with self.fs.open_input_stream(path, compression=None) as stream:
                    data: bytes = stream.read() if limit is None else stream.read(limit + 1)
            except OSError:
                if self._kind(path) != "file":
                    raise FileNotFoundError("no object") from None
                raise
            if limit is not None and len(data) > limit:  # it grew meanwhile
                raise _too_large(self, rel, limit, len(data))
            return data

    @contextlib.contextmanager
    def open_input(self, rel: str) -> Iterator[Readable]:
        path = self._path(rel, root_ok=False)
        with naming(self, rel):
            if self._kind(path) != "file":
                raise FileNotFoundError("no object")
            with self.fs.open_input_stream(path, compression=None) as stream:
                yield _ArrowInput(self, path, rel, stream)

    def _check_size(self, path: str, rel: str, limit: int) -> None:
        from pyarrow.fs import FileType  # noqa: PLC0415

        info = self.fs.get_file_info(path)
        if info.type in (FileType.NotFound, FileType.Directory):
            raise FileNotFoundError("no object")
        if info.size is not None and info.size > limit:
            raise _too_large(self, rel, limit, info.size)

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self._path(rel, root_ok=False)
        with naming(self, rel):
            if self._atomic_put():
                with self.fs.open_output_stream(path, compression=None) as stream:
                    stream.write(data)
                return
            self._make_parent(path, set())
            temp = temp_name(path)
            try:
                with self.fs.open_output_stream(temp, compression=None) as stream:
                    stream.write(data)
                self.fs.move(temp, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    self.fs.delete_file(temp)

    def list(self, rel: str = "") -> list[str]:
        from pyarrow.fs import FileSelector  # noqa: PLC0415

        path = self._path(rel)
        with naming(self, rel):
            try:
                infos = self.fs.get_file_info(FileSelector(path, allow_not_found=True))
            except NotADirectoryError:
                return []
        names = sorted(info.base_name for info in infos if not is_temp(info.base_name))
        return [name for name in names if _is_component(self, rel, name)]

    def exists(self, rel: str) -> bool:
        path = self._path(rel)
        with naming(self, rel):
            return self._kind(path) != "missing"

    def upload_dir(self, local: str, rel: str, *, marker: str | None = None) -> int:
        dest = self._path(rel)
        made: set[str] = set()
        written = 0
        for name in local_files(local, marker):
            target = join_path(dest, name)
            with naming(self, join_path(rel, name)):
                self._make_parent(target, made)
                with (
                    open(os.path.join(local, *name.split("/")), "rb") as source,
                    self.fs.open_output_stream(target, compression=None) as stream,
                ):
                    while chunk := source.read(_CHUNK):
                        stream.write(chunk)
                        written += len(chunk)
        return written

    def download_dir(self, rel: str, local: str) -> int:
        root = self._path(rel)
        read = 0
        with naming(self, rel):
            files = self._files(rel)
            if not files:
                raise FileNotFoundError("nothing stored under it")
            for name in files:
                target = os.path.join(local, *name.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with (
                    self.fs.open_input_stream(join_path(root, name), compression=None) as stream,
                    open(target, "wb") as out,
                ):
                    while chunk := stream.read(_CHUNK):
                        out.write(chunk)
                        read += len(chunk)
        return read

    def copy_dir(self, src: str, dst: str, *, marker: str | None = None) -> None:
        source, dest = self._path(src), self._path(dst)
        with naming(self, src):
            files = marker_last(self._files(src), marker)
            if not files:
                raise FileNotFoundError("nothing stored under it")
        made: set[str] = set()
        for name in files:
            target = join_path(dest, name)
            with naming(self, join_path(dst, name)):
                self._make_parent(target, made)
                self.fs.copy_file(join_path(source, name), target)

    def copy_file(self, src: str, dst: str) -> None:
        source, target = self._path(src, root_ok=False), self._path(dst, root_ok=False)
        with naming(self, src):
            if self._kind(source) != "file":
                raise FileNotFoundError("no object")
        with naming(self, dst):
            if self._atomic_put():
                self.fs.copy_file(source, target)
                return
            self._make_parent(target, set())
            temp = temp_name(target)
            try:
                self.fs.copy_file(source, temp)
                self.fs.move(temp, target)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    self.fs.delete_file(temp)

    def delete_dir(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with naming(self, rel), contextlib.suppress(FileNotFoundError):
            self.fs.delete_dir(path)

    def delete_file(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with naming(self, rel), contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(path)

    def local_path(self, rel: str) -> str | None:
        check_rel(rel)
        return None


class _ArrowInput:
    """An object being read: a read that fails because the object is gone
    (deleted after it was opened: S3 sends the GET only when read) is a
    `FileNotFoundError`, as in `read_bytes`; other failures name the URI."""

    def __init__(self, store: ArrowStore, path: str, rel: str, stream: Readable) -> None:
        self._store, self._path, self._rel, self._stream = store, path, rel, stream

    def read(self, size: int, /) -> bytes:
        with naming(self._store, self._rel):
            try:
                return self._stream.read(size)
            except OSError:
                if self._store._kind(self._path) != "file":
                    raise FileNotFoundError("no object (deleted while read)") from None
                raise
