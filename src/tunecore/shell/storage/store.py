"""Where an experiment's bytes are kept: a local directory or any `pyarrow.fs`
filesystem (S3, GCS, HDFS, a mounted fsspec filesystem), behind one small
`Store` protocol.

On a cluster the driver and the workers do not share a disk, so every file
that has to outlive a node goes through a `Store` instead of a path:
workers upload their checkpoints, the driver ships the experiment state,
and readers (resume, the CLI, `ResultGrid`) read it back from any machine
with nothing but the URI. `resolve_storage` turns `RunConfig.storage_path`
and `storage_filesystem` into a `StorageSpec` (what the event log records)
and a `Store` (what does the I/O; never persisted: it may hold credentials).

pyarrow is optional (`pip install 'tunecore[storage]'`): a plain path or a
`file://` URI needs only the standard library, and pyarrow is imported the
first time a URI or a filesystem object asks for it.

Why one module of over 400 lines: the `Store` protocol and its two
implementations (`LocalStore`, `ArrowStore`) are read together, each rule
the protocol states implemented twice below it; the URI parsing next to them
decides which one a path gets.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import shutil
import stat
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from tunecore.shell.storage import own_files
from tunecore.shell.storage.own_files import NotRegularFileError

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

logger = logging.getLogger(__name__)

DEFAULT_ROOT = "~/tunecore_results"
"""Where the API puts experiments unless told otherwise (`ExperimentStorage`
itself takes its root as given)."""

INSTALL_HINT = "pip install 'tunecore[storage]'"

KNOWN_SCHEMES = ("file", "s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss")
"""Schemes `pyarrow.fs.FileSystem.from_uri` knows. pyarrow decides; this only
explains the error for any other."""

# Filesystems where one write of an object is atomic by itself (a PUT):
# there a temporary name plus a rename would double the requests for nothing.
_OBJECT_STORES = frozenset({"s3", "gcs", "abfs"})

# `scheme:/...` starts a URI; `C:\\x`, `runs` or `a:b` stay local paths.
_URI_START = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):/")

# In-flight writes (`write_bytes` where a PUT is not atomic) live next to
# their target under this suffix; listings never show them, so a crash
# mid-write leaves nothing a reader mistakes for data.
_TEMP_SUFFIX = re.compile(r"\.tmp-[0-9a-f]{16}$")

_CHUNK = 1 << 20


class Readable(Protocol):
    """What `Store.open_input` gives: `read(n)` up to `n` bytes."""

    def read(self, size: int, /) -> bytes: ...


class StorageSpec(msgspec.Struct, frozen=True):
    """What an experiment's storage is, as the event log records it.

    `uri` is `scheme://...` (credentials removed) or an absolute local
    path; `mirrored` is True when the storage is not the driver's own
    experiment directory (any URI, `file://` included), so the driver works
    in a local staging directory and ships state to it."""

    uri: str
    mirrored: bool


class Store(Protocol):
    """The storage of one experiment tree, addressed by relative paths.

    Paths: every `rel` is relative to the store's root, its components
    joined by `/` on every platform (`trial_1/checkpoint_000003`). `""` is
    the root itself (a directory, never an object). A component is never
    empty, `.` or `..`, and a path neither starts nor ends with `/`:
    anything else raises `ValueError` naming the path, before any I/O.
    Object stores have directories only through what is under them, so
    empty directories are not part of the contract (a local store may keep
    them; no caller relies on them).

    Errors: a missing object or tree where one is required raises
    `FileNotFoundError`; any other failure of the storage raises `OSError`;
    both messages name the full URI (`uri(rel)`). Nothing is retried here:
    callers decide (a failed checkpoint upload fails the trial, which
    `max_failures` retries).

    Concurrency: one writer per path. Implementations are picklable (Ray
    ships them to workers) and keep no open handle between calls.
    """

    def uri(self, rel: str = "") -> str:
        """The full address of `rel`, for messages and logs (no credentials)."""
        ...

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        """The whole object at `rel`. `FileNotFoundError` if there is no
        object there (a directory is not an object). An object over `limit`
        bytes is refused with `NotRegularFileError` having read at most
        `limit + 1` of its bytes: a reader bounds its memory."""
        ...

    def open_input(self, rel: str) -> contextlib.AbstractContextManager[Readable]:
        """The object at `rel` to read a piece at a time (`read(n)` gives at
        most `n` bytes, fewer only at its end), for objects too large to
        hold in memory. `FileNotFoundError` if there is no object there."""
        ...

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Create or replace the object at `rel` with `data`, atomically: a
        reader, even on another machine, sees the old object or the new one,
        never a part (a single PUT on object stores, a temporary name and a
        rename elsewhere). Missing parent directories are created."""
        ...

    def list(self, rel: str = "") -> list[str]:
        """The names (not paths) of the objects and directories directly
        under `rel`, sorted. `[]` when `rel` is no directory (missing, or an
        object). In-flight temporary files are never listed."""
        ...

    def exists(self, rel: str) -> bool:
        """True if `rel` is an object or a directory holding something."""
        ...

    def upload_dir(self, local: str, rel: str, *, marker: str | None = None) -> int:
        """Copy every file under the local directory `local` (recursively;
        a symlink to a file as its content) to `rel/<same relative path>`,
        replacing objects of the same name and leaving other objects under
        `rel` alone (delete first to replace a tree). Returns the bytes
        written.

        Order: the top-level file named `marker`, if given and present, is
        written last, only after every other file has been written
        completely; so a reader that finds `rel/<marker>` finds the whole
        tree, and an upload cut short leaves a tree without it. Checkpoints
        pass `.tunecore_checkpoint.json`. `FileNotFoundError` if `local` is
        not a directory."""
        ...

    def download_dir(self, rel: str, local: str) -> int:
        """Copy every object under `rel` into the local directory `local`
        (created if needed), keeping relative paths and replacing local
        files of the same name. Returns the bytes read.
        `FileNotFoundError` if nothing is under `rel`."""
        ...

    def copy_dir(self, src: str, dst: str, *, marker: str | None = None) -> None:
        """Copy every object under `src` to `dst` within the storage (a
        server-side copy on object stores: no byte passes through this
        process). `marker` is copied last, as in `upload_dir`.
        `FileNotFoundError` if nothing is under `src`."""
        ...

    def delete_dir(self, rel: str) -> None:
        """Delete `rel` and everything under it. Idempotent: a missing `rel`
        is no error. The root (`""`) is refused with `ValueError`."""
        ...

    def delete_file(self, rel: str) -> None:
        """Delete the object at `rel`. Idempotent: a missing object is no
        error."""
        ...

    def local_path(self, rel: str) -> str | None:
        """The local filesystem path of `rel` when this store is a local
        directory (callers may then read and write there in place, with no
        copy); None for every other store."""
        ...


def check_rel(rel: str, *, root_ok: bool = True) -> str:
    """`rel` if it is a valid relative store path (see `Store`), else
    `ValueError` naming it. The root `""` only where `root_ok`."""
    if rel == "" and root_ok:
        return rel
    if "\0" in rel or any(part in ("", ".", "..") for part in rel.split("/")):
        raise ValueError(
            f"store path {rel!r} is not a relative '/'-joined path to "
            + ("an object" if rel == "" else "a file or directory")
            + " (no leading or trailing '/', no empty, '.' or '..' component)"
        )
    return rel


def _join(base: str, rel: str) -> str:
    return f"{base.rstrip('/')}/{rel}" if rel else base


def _parent(path: str) -> str:
    return path.rpartition("/")[0] or "/"


def _local_files(local: str, marker: str | None, *, links: bool = True) -> list[str]:
    """The '/'-joined relative paths of the files under `local`, sorted, the
    top-level `marker` (if present) moved to the end. With `links` a
    symbolic link to a file counts as that file (a worker's own directory);
    without (a tree in storage), a link or special file under `local` is
    refused with `NotRegularFileError` naming it."""
    if not os.path.isdir(local):
        raise FileNotFoundError(f"{local!r} is not a directory")
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(local):
        prefix = os.path.relpath(dirpath, local).replace(os.sep, "/")
        for name in filenames if links else [*filenames, *dirnames]:
            path = os.path.join(dirpath, name)
            if not links:
                mode = os.lstat(path).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise NotRegularFileError(
                        errno.EINVAL, f"{own_files.kind_of(mode)} in storage: refused", path
                    )
                if stat.S_ISDIR(mode):
                    continue
            if os.path.isfile(path) and not _is_temp(name):
                files.append(name if prefix == "." else f"{prefix}/{name}")
    return _marker_last(sorted(files), marker)


def _joined(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/"))


def _marker_last(paths: list[str], marker: str | None) -> list[str]:
    if marker is not None and marker in paths:
        paths.remove(marker)
        paths.append(marker)
    return paths


def _temp_name(path: str) -> str:
    return f"{path}.tmp-{uuid.uuid4().hex[:16]}"


def _is_temp(name: str) -> bool:
    return _TEMP_SUFFIX.search(name) is not None


@contextlib.contextmanager
def _naming(store: Store, rel: str) -> Iterator[None]:
    """Re-raise a storage failure as the protocol's error, with the URI of
    `rel` in its message."""
    try:
        yield
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{store.uri(rel)}: not found ({exc})") from exc
    except NotRegularFileError:
        raise  # refused, not failed: it names the entry already
    except OSError as exc:
        raise OSError(f"{store.uri(rel)}: {exc}") from exc
    except Exception as exc:
        if not _is_arrow_error(exc):
            raise
        raise OSError(f"{store.uri(rel)}: {exc}") from exc


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


def _is_arrow_error(exc: Exception) -> bool:
    """pyarrow's own exception types (`ArrowNotImplementedError`, ...),
    told apart without importing pyarrow."""
    return any(cls.__module__ == "pyarrow.lib" for cls in type(exc).__mro__)


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
        resume into someone else's files). `NotRegularFileError` names it."""
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
        with _naming(self, rel):
            if not os.path.lexists(path) or stat.S_ISDIR(os.lstat(path).st_mode):
                raise FileNotFoundError("no object")
            return own_files.read_bytes(Path(path), limit)

    def open_input(self, rel: str) -> contextlib.AbstractContextManager[Readable]:
        path = self._path(rel, root_ok=False)
        with _naming(self, rel):
            if not os.path.lexists(path) or stat.S_ISDIR(os.lstat(path).st_mode):
                raise FileNotFoundError("no object")
            return os.fdopen(own_files.open_fd(Path(path)), "rb")

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self._path(rel, root_ok=False)
        with _naming(self, rel):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temp = _temp_name(path)
            try:
                with open(temp, "wb") as file:
                    file.write(data)
                os.replace(temp, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp)

    def list(self, rel: str = "") -> list[str]:
        path = self._path(rel)
        with _naming(self, rel):
            try:
                entries = list(os.scandir(path))
            except (FileNotFoundError, NotADirectoryError):
                return []
        names = []
        for entry in entries:
            if _is_temp(entry.name):
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
        for name in _local_files(local, marker):
            with _naming(self, _join(rel, name)):
                target = self._path(_join(rel, name), root_ok=False)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(os.path.join(local, *name.split("/")), target)
                written += os.path.getsize(target)
        return written

    def download_dir(self, rel: str, local: str) -> int:
        source = self._path(rel)
        read = 0
        with _naming(self, rel):
            files = _local_files(source, None, links=False) if os.path.isdir(source) else []
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
        with _naming(self, src):
            if not (os.path.isdir(source) and _local_files(source, None, links=False)):
                raise FileNotFoundError("nothing stored under it")
        self.upload_dir(source, dst, marker=marker)

    def delete_dir(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with _naming(self, rel), contextlib.suppress(FileNotFoundError):
            shutil.rmtree(path)

    def delete_file(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with _naming(self, rel), contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def local_path(self, rel: str) -> str | None:
        return self._path(rel)


class ArrowStore:
    """A store on a `pyarrow.fs.FileSystem`, under the directory `base` of
    that filesystem (`bucket/prefix` on S3, an absolute path on a local
    one). `uri` names it in messages (default `<type name>://<base>`).

    Transfers go one object at a time, in the calling thread (Ray's
    `use_threads=False` for uploads: arrow#32372), which is also what makes
    the marker-last order hold without further synchronisation."""

    __slots__ = ("_uri", "base", "fs")

    def __init__(self, fs: FileSystem, base: str, uri: str | None = None) -> None:
        self.fs = fs
        self.base = base.rstrip("/") or base
        self._uri = (uri or f"{fs.type_name}://{self.base}").rstrip("/")

    def __repr__(self) -> str:
        return f"ArrowStore({self._uri!r})"

    def _path(self, rel: str, *, root_ok: bool = True) -> str:
        return _join(self.base, check_rel(rel, root_ok=root_ok))

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
            if info.type == FileType.File and not _is_temp(info.base_name)
        )
        for name in names:
            _check_listed(self, rel, name)
        return names

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        path = self._path(rel, root_ok=False)
        with _naming(self, rel):
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
        with _naming(self, rel):
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
        with _naming(self, rel):
            if self._atomic_put():
                with self.fs.open_output_stream(path, compression=None) as stream:
                    stream.write(data)
                return
            self._make_parent(path, set())
            temp = _temp_name(path)
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
        with _naming(self, rel):
            try:
                infos = self.fs.get_file_info(FileSelector(path, allow_not_found=True))
            except NotADirectoryError:
                return []
        names = sorted(info.base_name for info in infos if not _is_temp(info.base_name))
        return [name for name in names if _is_component(self, rel, name)]

    def exists(self, rel: str) -> bool:
        path = self._path(rel)
        with _naming(self, rel):
            return self._kind(path) != "missing"

    def upload_dir(self, local: str, rel: str, *, marker: str | None = None) -> int:
        dest = self._path(rel)
        made: set[str] = set()
        written = 0
        for name in _local_files(local, marker):
            target = _join(dest, name)
            with _naming(self, _join(rel, name)):
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
        with _naming(self, rel):
            files = self._files(rel)
            if not files:
                raise FileNotFoundError("nothing stored under it")
            for name in files:
                target = os.path.join(local, *name.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with (
                    self.fs.open_input_stream(_join(root, name), compression=None) as stream,
                    open(target, "wb") as out,
                ):
                    while chunk := stream.read(_CHUNK):
                        out.write(chunk)
                        read += len(chunk)
        return read

    def copy_dir(self, src: str, dst: str, *, marker: str | None = None) -> None:
        source, dest = self._path(src), self._path(dst)
        with _naming(self, src):
            files = _marker_last(self._files(src), marker)
            if not files:
                raise FileNotFoundError("nothing stored under it")
        made: set[str] = set()
        for name in files:
            target = _join(dest, name)
            with _naming(self, _join(dst, name)):
                self._make_parent(target, made)
                self.fs.copy_file(_join(source, name), target)

    def delete_dir(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with _naming(self, rel), contextlib.suppress(FileNotFoundError):
            self.fs.delete_dir(path)

    def delete_file(self, rel: str) -> None:
        path = self._path(rel, root_ok=False)
        with _naming(self, rel), contextlib.suppress(FileNotFoundError):
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
        with _naming(self._store, self._rel):
            try:
                return self._stream.read(size)
            except OSError:
                if self._store._kind(self._path) != "file":
                    raise FileNotFoundError("no object (deleted while read)") from None
                raise


def within(store: Store, rel: str) -> Store:
    """The same storage rooted at `rel` (an experiment inside the storage
    root): every path of the result is relative to `rel`."""
    check_rel(rel, root_ok=False)
    if isinstance(store, LocalStore):
        return LocalStore(store._path(rel))
    if isinstance(store, ArrowStore):
        return ArrowStore(store.fs, _join(store.base, rel), store.uri(rel))
    raise TypeError(f"within: {store!r} is neither a LocalStore nor an ArrowStore")


def resolve_storage(
    storage_path: object, storage_filesystem: object = None
) -> tuple[StorageSpec, Store]:
    """The storage `RunConfig(storage_path=..., storage_filesystem=...)` names.

    - a filesystem object (a `pyarrow.fs.FileSystem`, e.g. an
      `S3FileSystem(endpoint_override=...)`): used as given, `storage_path`
      being the directory inside it (a `scheme://` prefix is dropped, as Ray
      does: `s3://bucket/x` and `bucket/x` are the same);
    - `None`, a plain path or an `os.PathLike`: a local directory, today's
      behaviour (`~/tunecore_results` for None; not mirrored);
    - `file:///abs/dir`: a local directory too, but mirrored (the driver
      stages locally and ships, as for any URI: the cheap way to exercise
      remote storage, and the way to name a mount every node shares);
    - any other `scheme://...`: `pyarrow.fs.FileSystem.from_uri`. A scheme
      pyarrow does not know raises `ValueError` naming it: a URI never
      becomes a local directory called `s3:`.

    Bad input raises `TypeError` or `ValueError` naming the field and the
    value; a URI without pyarrow installed raises `ImportError` naming the
    extra to install.
    """
    if storage_filesystem is not None:
        return _with_filesystem(storage_path, storage_filesystem)
    if storage_path is None:
        root = os.path.abspath(os.path.expanduser(DEFAULT_ROOT))
        return StorageSpec(uri=root, mirrored=False), LocalStore(root)
    raw = _path_text(storage_path)
    scheme = uri_scheme(raw)
    if scheme is None:
        root = os.path.abspath(os.path.expanduser(raw))
        return StorageSpec(uri=root, mirrored=False), LocalStore(root)
    if scheme.lower() == "file":
        root = _file_uri_path(raw)
        return StorageSpec(uri=f"file://{root}", mirrored=True), LocalStore(root)
    try:
        import pyarrow.fs  # noqa: PLC0415 - optional, and slow to import
    except ImportError as exc:
        raise ImportError(f"storage_path {raw!r} needs pyarrow: {INSTALL_HINT}") from exc
    try:
        fs, base = pyarrow.fs.FileSystem.from_uri(_with_defaults(raw, scheme))
    except ValueError as exc:  # pyarrow.lib.ArrowInvalid
        if "Unrecognized filesystem type" in str(exc):
            raise ValueError(
                f"storage_path {raw!r}: unknown scheme {scheme!r} "
                f"(pyarrow.fs knows {', '.join(KNOWN_SCHEMES)})"
            ) from None
        raise ValueError(f"storage_path {raw!r}: {exc}") from exc
    except OSError as exc:
        raise OSError(f"storage_path {raw!r}: {exc}") from exc
    uri = _without_credentials(raw)
    return StorageSpec(uri=uri, mirrored=True), ArrowStore(fs, base, uri)


def _with_defaults(uri: str, scheme: str) -> str:
    """`uri` with tunecore's defaults for what the URI leaves unsaid. S3:
    `allow_delayed_open`, which writes a small object in one PUT instead of
    a three-request multipart upload (most of what tunecore stores is
    small); a URI that names it keeps its own value."""
    if scheme.lower() != "s3":
        return uri
    parts = urllib.parse.urlsplit(uri)
    if "allow_delayed_open" in urllib.parse.parse_qs(parts.query):
        return uri
    query = "&".join(filter(None, (parts.query, "allow_delayed_open=true")))
    return urllib.parse.urlunsplit(parts._replace(query=query))


def _with_filesystem(storage_path: object, storage_filesystem: object) -> tuple[StorageSpec, Store]:
    try:
        from pyarrow.fs import FileSystem  # noqa: PLC0415 - optional
    except ImportError:
        raise TypeError(
            "storage_filesystem must be a pyarrow.fs.FileSystem (and pyarrow is not "
            f"installed: {INSTALL_HINT}), got a {type(storage_filesystem).__qualname__}: "
            f"{storage_filesystem!r}"
        ) from None
    if not isinstance(storage_filesystem, FileSystem):
        raise TypeError(
            "storage_filesystem must be a pyarrow.fs.FileSystem, got a "
            f"{type(storage_filesystem).__qualname__}: {storage_filesystem!r}"
        )
    if storage_path is None:
        raise ValueError("storage_filesystem needs a storage_path: the directory inside it")
    raw = _path_text(storage_path)
    match = _URI_START.match(raw)
    if match is None:
        uri = f"{storage_filesystem.type_name}://{raw}"
        return StorageSpec(uri=uri, mirrored=True), ArrowStore(storage_filesystem, raw, uri)
    uri = _without_credentials(raw)
    parts = urllib.parse.urlsplit(uri)  # the filesystem knows how to reach it: no query
    base = parts.netloc + parts.path
    return StorageSpec(uri=uri, mirrored=True), ArrowStore(storage_filesystem, base, uri)


def join_uri(uri: str, rel: str) -> str:
    """`rel` under the directory `uri`, keeping the URI's query (the
    endpoint and options that reach the storage) at the end."""
    if not rel:
        return uri
    parts = urllib.parse.urlsplit(uri)
    return urllib.parse.urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{rel}"))


def split_experiment(location: str) -> tuple[str, str]:
    """A URI (or path) naming one experiment directory, split into the
    storage root and the experiment's name, the way `RunConfig` spells them
    (`storage_path`, `name`): `s3://b/runs/exp?endpoint_override=h:p` is
    `("s3://b/runs?endpoint_override=h:p", "exp")`. A URI's query (how to
    reach the storage) stays with the root."""
    parts = urllib.parse.urlsplit(location) if uri_scheme(location) else None
    path = parts.path if parts is not None else os.path.abspath(os.path.expanduser(location))
    parent, _, name = path.rstrip("/").rpartition("/")
    if not name or (parts is not None and not parent and not parts.netloc):
        raise ValueError(f"{location!r} names no experiment directory (expected .../<name>)")
    if parts is None:
        return parent or "/", name
    return urllib.parse.urlunsplit(parts._replace(path=parent)), name


def staging_root(spec: StorageSpec) -> str:
    """Where the driver keeps its local copy of experiments stored at
    `spec` (mirrored storage): `$TUNECORE_STAGING`, else a directory of
    `~/tunecore_results/.staging` named by a hash of the URI, so two
    storages never share one and a driver that runs again on this machine
    finds what it had not shipped yet."""
    digest = hashlib.blake2b(spec.uri.encode(), digest_size=6).hexdigest()
    base = os.environ.get("TUNECORE_STAGING") or os.path.join(DEFAULT_ROOT, ".staging")
    return os.path.join(os.path.abspath(os.path.expanduser(base)), digest)


def uri_scheme(storage_path: object) -> str | None:
    """The scheme of a `storage_path` that is a URI (`s3` for `s3://b/x`,
    as written), None for a plain path; `TypeError` as `resolve_storage`,
    and `ValueError` for a scheme without `://` after it (`s3:/b/x`)."""
    raw = _path_text(storage_path)
    match = _URI_START.match(raw)
    if match is None:
        return None
    scheme = match.group(1)
    if not raw.startswith(f"{scheme}://"):
        raise ValueError(f"storage_path {raw!r}: a URI needs '://' after its scheme {scheme!r}")
    return scheme


def _path_text(storage_path: object) -> str:
    if isinstance(storage_path, str | os.PathLike):
        text = os.fspath(storage_path)
        if isinstance(text, str) and text:
            return text
    raise TypeError(
        "storage_path must be a non-empty str, os.PathLike or URI, got a "
        f"{type(storage_path).__qualname__}: {storage_path!r}"
    )


def _file_uri_path(raw: str) -> str:
    parts = urllib.parse.urlsplit(raw)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(
            f"storage_path {raw!r}: a file:// URI names a local absolute directory "
            f"(file:///dir), not one on the host {parts.netloc!r}"
        )
    path = urllib.parse.unquote(parts.path)
    if not path.startswith("/") or parts.query or parts.fragment:
        raise ValueError(f"storage_path {raw!r}: expected file:///absolute/dir")
    return os.path.normpath(path)


def _without_credentials(uri: str) -> str:
    """`uri` without a `user:secret@` part: the URI goes into the event log."""
    parts = urllib.parse.urlsplit(uri)
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=host)).rstrip("/")


def checkpoint_root(rel: str) -> tuple[str, str]:
    """A checkpoint's path in the experiment (`<trial dir>/checkpoint_N`,
    perhaps with the file inside it the trainable named) split into the
    directory that is uploaded, downloaded, copied and deleted as one, and
    the rest: `("t/checkpoint_000003", "model.pt")`. The directory is always
    the first two components (a trial's `checkpoint_N` or `exploit_N`)."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts) or "\0" in rel:
        raise ValueError(f"checkpoint path {rel!r} is not a clean relative path")
    if len(parts) < 2:
        raise ValueError(f"checkpoint path {rel!r} is not inside a trial directory")
    return "/".join(parts[:2]), "/".join(parts[2:])
