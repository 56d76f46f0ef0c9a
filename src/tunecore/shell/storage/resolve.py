"""Which storage `RunConfig(storage_path=..., storage_filesystem=...)`
names: `resolve_storage` turns them into a `StorageSpec` (what the event log
records) and a `Store` (what does the I/O; never persisted: it may hold
credentials), plus the URI rules readers share (`uri_scheme`,
`split_experiment`, `staging_root`, `within`).

pyarrow is optional (`pip install 'tunecore[storage]'`): a plain path or a
`file://` URI needs only the standard library, and pyarrow is imported the
first time a URI or a filesystem object asks for it.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import urllib.parse
from typing import TYPE_CHECKING

from tunecore.shell.storage.arrow_store import ArrowStore
from tunecore.shell.storage.local_store import LocalStore, SubtreeStore
from tunecore.shell.storage.store import (
    INSTALL_HINT,
    StorageSpec,
    Store,
    local_filesystem,
)

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

DEFAULT_ROOT = "~/tunecore_results"
"""Where the API puts experiments unless told otherwise (`ExperimentStorage`
itself takes its root as given)."""

KNOWN_SCHEMES = ("file", "s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss")
"""Schemes `pyarrow.fs.FileSystem.from_uri` knows. pyarrow decides; this only
explains the error for any other."""
# `scheme:/...` starts a URI; `C:\\x`, `runs` or `a:b` stay local paths.
_URI_START = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):/")


def within(store: Store, rel: str) -> Store:
    """The same storage rooted at `rel` (`Store.under`)."""
    return store.under(rel)


def filesystem_of(store: Store | None) -> FileSystem:
    """The `pyarrow.fs.FileSystem` `store` is on (Ray's `Result.filesystem`):
    the one `resolve_storage` resolved for a URI or was given, and a
    `LocalFileSystem` for a local directory (a `LocalStore`, or None: an
    experiment that is not in storage). `ImportError` naming the extra
    when pyarrow is not installed."""
    return local_filesystem() if store is None else store.filesystem()


def resolve_storage(
    storage_path: object, storage_filesystem: object = None
) -> tuple[StorageSpec, Store]:
    """The storage `RunConfig(storage_path=..., storage_filesystem=...)` names.

    - a filesystem object (a `pyarrow.fs.FileSystem`, e.g. an
      `S3FileSystem(endpoint_override=...)`): used as given, `storage_path`
      being the directory inside it (a `scheme://` prefix is dropped, as Ray
      does: `s3://bucket/x` and `bucket/x` are the same); but a
      `LocalFileSystem` is the local directory, as `file://` names it;
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
        return _mirrored_local(_file_uri_path(raw))
    try:
        import pyarrow.fs  # noqa: PLC0415 - optional, and slow to import
    except ImportError as exc:
        raise ImportError(f"storage_path {raw!r} needs pyarrow: {INSTALL_HINT}") from exc
    _check_location(raw, scheme)
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


_BUCKET_SCHEMES = frozenset({"s3", "gs", "gcs"})


def _check_location(raw: str, scheme: str) -> None:
    """`ValueError` naming `raw` for a URI whose place in its storage is
    no plain directory: an object store's without a bucket (`s3://`
    failed deep in pyarrow with "Path cannot start with a separator"), or
    a path with a `.`, `..` or empty component (`s3://b/../x`, `%2e%2e`
    too: pyarrow decodes it), which object stores keep as a key of that
    name while other tools resolve it elsewhere."""
    parts = urllib.parse.urlsplit(raw)
    if scheme.lower() in _BUCKET_SCHEMES and not parts.netloc.rpartition("@")[2]:
        raise ValueError(f"storage_path {raw!r}: names no bucket (expected {scheme}://bucket/dir)")
    components = parts.path.split("/")[1:]
    if components and components[-1] == "":
        components.pop()  # a trailing '/'
    for component in components:
        if urllib.parse.unquote(component) in ("", ".", ".."):
            raise ValueError(
                f"storage_path {raw!r}: its path holds the component {component!r}; "
                "name the directory plainly (no '.', '..' or '//' in it)"
            )


_URI_DEFAULTS: dict[str, tuple[str, str]] = {
    "s3": ("allow_delayed_open", "true"),
    "gs": ("retry_limit_seconds", "30"),
    "gcs": ("retry_limit_seconds", "30"),
}
"""tunecore's default for one option each scheme's URI may leave unsaid.
S3: `allow_delayed_open`, which writes a small object in one PUT instead
of a three-request multipart upload (most of what tunecore stores is
small). GCS: a bound on the client's retries, which otherwise go on for
about 15 minutes, so a read with no network or no credentials (`tunecore
status gs://...`) fails naming the cause instead of seeming to hang; a
failed upload is retried by the shipper at its next round anyway."""


def _with_defaults(uri: str, scheme: str) -> str:
    """`uri` with tunecore's default for what the URI leaves unsaid
    (`_URI_DEFAULTS`); a URI that names the option keeps its own value."""
    default = _URI_DEFAULTS.get(scheme.lower())
    if default is None:
        return uri
    name, value = default
    parts = urllib.parse.urlsplit(uri)
    if name in urllib.parse.parse_qs(parts.query):
        return uri
    query = "&".join(filter(None, (parts.query, f"{name}={value}")))
    return urllib.parse.urlunsplit(parts._replace(query=query))


def _with_filesystem(storage_path: object, storage_filesystem: object) -> tuple[StorageSpec, Store]:
    try:
        from pyarrow.fs import FileSystem, LocalFileSystem  # noqa: PLC0415 - optional
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
    if isinstance(storage_filesystem, LocalFileSystem):
        return _on_local_filesystem(raw)
    match = _URI_START.match(raw)
    if match is None and (local := _local_path_in(storage_filesystem, raw)) is not None:
        root = os.path.abspath(local)
        subtree = SubtreeStore(root, storage_filesystem, raw)
        return StorageSpec(uri=f"file://{root}", mirrored=True), subtree
    if match is None:
        uri = f"{storage_filesystem.type_name}://{raw}"
        store = ArrowStore(storage_filesystem, raw, uri, shown_as_path=True)
        return StorageSpec(uri=uri, mirrored=True), store
    uri = _without_credentials(raw)
    parts = urllib.parse.urlsplit(uri)  # the filesystem knows how to reach it: no query
    base = parts.netloc + parts.path
    return StorageSpec(uri=uri, mirrored=True), ArrowStore(storage_filesystem, base, uri)


def _local_path_in(filesystem: FileSystem, path: str) -> str | None:
    """The local path `path` names in `filesystem` when that is a
    `SubTreeFileSystem` over the local one (through any number of
    subtrees), else None. Such a storage is a local directory, and a
    `LocalStore` keeps it (`SubtreeStore`: pyarrow's filesystems follow
    symbolic links)."""
    # pyarrow ships SubTreeFileSystem; its type stubs do not list it
    from pyarrow.fs import LocalFileSystem, SubTreeFileSystem  # type: ignore[attr-defined]  # noqa: PLC0415

    while isinstance(filesystem, SubTreeFileSystem):
        path = posixpath.join(filesystem.base_path, path.lstrip("/"))
        filesystem = filesystem.base_fs
    return path if isinstance(filesystem, LocalFileSystem) else None


def _on_local_filesystem(raw: str) -> tuple[StorageSpec, Store]:
    """`storage_path` on `pyarrow.fs.LocalFileSystem()`: the local directory
    a `file://` URI names, and the same `LocalStore`, which never goes
    through a symbolic link (pyarrow's follows them: a resume wrote into
    the directory a stored trial directory was linked to)."""
    parts = urllib.parse.urlsplit(raw) if _URI_START.match(raw) else None
    path = raw if parts is None else urllib.parse.unquote(parts.netloc + parts.path)
    return _mirrored_local(os.path.abspath(os.path.expanduser(path)))


def _mirrored_local(root: str) -> tuple[StorageSpec, Store]:
    """The local directory `root` as a `file://` storage: mirrored (the
    driver stages its state and ships it), on the `LocalStore`."""
    return StorageSpec(uri=f"file://{root}", mirrored=True), LocalStore(root)


def split_experiment(location: str, *, in_filesystem: bool = False) -> tuple[str, str]:
    """A URI (or path) naming one experiment directory, split into the
    storage root and the experiment's name, the way `RunConfig` spells them
    (`storage_path`, `name`): `s3://b/runs/exp?endpoint_override=h:p` is
    `("s3://b/runs?endpoint_override=h:p", "exp")`. A URI's query (how to
    reach the storage) stays with the root. A plain path is a local one,
    made absolute, unless `in_filesystem`: then it is a path inside the
    `storage_filesystem` given beside it, taken as written (Ray's
    `Tuner.restore("bucket/runs/exp", storage_filesystem=fs)`; from the
    working directory it would name another place)."""
    parts = urllib.parse.urlsplit(location) if uri_scheme(location) else None
    if parts is not None:
        path = parts.path
    elif in_filesystem:
        path = location
    else:
        path = os.path.abspath(os.path.expanduser(location))
    parent, _, name = path.rstrip("/").rpartition("/")
    if not name or (parts is not None and not parent and not parts.netloc):
        raise ValueError(f"{location!r} names no experiment directory (expected .../<name>)")
    if parts is None and in_filesystem and not parent:
        raise ValueError(
            f"{location!r} names no experiment directory inside the storage_filesystem "
            "(expected <storage_path>/<name>)"
        )
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
