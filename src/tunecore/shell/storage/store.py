"""The `Store` protocol: the storage of one experiment tree, addressed by
relative paths, whatever holds it (a local directory: `local_store`; any
`pyarrow.fs` filesystem, S3, GCS, HDFS: `arrow_store`).

On a cluster the driver and the workers do not share a disk, so every file
that has to outlive a node goes through a `Store` instead of a path:
workers upload their checkpoints, the driver ships the experiment state,
and readers (resume, the CLI, `ResultGrid`) read it back from any machine
with nothing but the URI. `shell.storage.resolve` decides which store a
`RunConfig` names.

Below the protocol: the path rules every store checks (`check_rel`,
`checkpoint_root`, `join_uri`) and the helpers both backends share (the
local files an upload sends, temporary names, the errors' wording).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import urllib.parse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

import msgspec

from tunecore.shell.storage import own_files
from tunecore.shell.storage.own_files import NotRegularFileError, is_temp

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

INSTALL_HINT = "pip install 'tunecore[storage]'"


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

    def shown(self, rel: str = "") -> str:
        """Where `rel` is, as the user is shown it and as Ray shows it (a
        result's `path`, a checkpoint's, `ResultGrid.experiment_path`):
        the local path for a local directory; the path inside the
        filesystem for a storage named by one beside the user's
        `storage_filesystem` (whose URI tunecore made up); else `uri(rel)`.
        Does no I/O and never fails for a valid `rel`: a path the store
        refuses to use (a symbolic link on the way) is still shown."""
        ...

    def under(self, rel: str) -> Store:
        """The same storage rooted at the directory `rel` (an experiment
        inside the storage root): every path of the result is relative to
        `rel`, and its `uri`, `shown` and `fs_path` name the same places.
        The root `""` is refused with `ValueError`; a local store refuses a
        `rel` reached through a symbolic link (`NotRegularFileError`)."""
        ...

    def fs_path(self, rel: str = "") -> str:
        """`rel`'s path inside `filesystem()`, as Ray's `StorageContext`
        names it (`storage_fs_path`, `trial_fs_path`): the absolute local
        path, '/'-joined, for a local directory; the path the filesystem
        was given for any other (`bucket/prefix/rel` on S3). Does no I/O
        and never fails for a valid `rel`."""
        ...

    def filesystem(self) -> FileSystem:
        """The `pyarrow.fs.FileSystem` the store is on, with which
        `fs_path(rel)` reaches `rel` (Ray's `storage_filesystem`,
        `Result.filesystem`, a stored `Checkpoint`'s): the one resolved
        for a URI or given by the user, a `LocalFileSystem` for a local
        directory. `ImportError` naming the extra to install when pyarrow
        is not installed."""
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

    def copy_file(self, src: str, dst: str) -> None:
        """Create or replace the object at `dst` with a copy of the object
        at `src`, atomically as in `write_bytes` (a server-side copy on
        object stores). `FileNotFoundError` if there is no object at
        `src`."""
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
        copy); None for every other store.

        A store with a local path (`local_path("")` is not None) is one
        kernel's directory: a rename there is atomic and resolves its paths
        as it happens, which is how a stale driver's workers are fenced out
        of it (`mirror.upload_fence`); a store without one has no rename,
        and its checkpoints are named by lease generation instead."""
        ...


def local_filesystem() -> FileSystem:
    """pyarrow's `LocalFileSystem`, the filesystem of a local directory;
    `ImportError` naming the extra when pyarrow is not installed."""
    try:
        from pyarrow.fs import LocalFileSystem  # noqa: PLC0415 - optional
    except ImportError as exc:
        raise ImportError(f"the storage's filesystem is a pyarrow one: {INSTALL_HINT}") from exc
    return LocalFileSystem()


def delete_entry(store: Store, rel: str) -> None:
    """Delete the object or directory `rel`, whichever it is (an empty
    directory, which lists as nothing, only a `LocalStore` has: deleting
    it as a file fails)."""
    if store.list(rel):
        store.delete_dir(rel)
        return
    try:
        store.delete_file(rel)
    except OSError:
        store.delete_dir(rel)


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


def join_path(base: str, rel: str) -> str:
    return f"{base.rstrip('/')}/{rel}" if rel else base


def local_files(local: str, marker: str | None, *, links: bool = True) -> list[str]:
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
            if os.path.isfile(path) and not is_temp(name):
                files.append(name if prefix == "." else f"{prefix}/{name}")
    return marker_last(sorted(files), marker)


def marker_last(paths: list[str], marker: str | None) -> list[str]:
    if marker is not None and marker in paths:
        paths.remove(marker)
        paths.append(marker)
    return paths


@contextlib.contextmanager
def naming(store: Store, rel: str) -> Iterator[None]:
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


def _is_arrow_error(exc: Exception) -> bool:
    """pyarrow's own exception types (`ArrowNotImplementedError`, ...),
    told apart without importing pyarrow."""
    return any(cls.__module__ == "pyarrow.lib" for cls in type(exc).__mro__)


def join_uri(uri: str, rel: str) -> str:
    """`rel` under the directory `uri`, keeping the URI's query (the
    endpoint and options that reach the storage) at the end."""
    if not rel:
        return uri
    parts = urllib.parse.urlsplit(uri)
    return urllib.parse.urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{rel}"))


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
