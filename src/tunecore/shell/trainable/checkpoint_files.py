"""The files tunecore itself keeps in a checkpoint directory, and checkpoints as bytes.

A saved checkpoint directory holds the trainable's own files plus:

- `.tunecore_checkpoint.json` (`CheckpointMeta`): the training iteration and
  total time the state belongs to, so counting continues after a restore,
  and, for the class API, how `load_checkpoint` gets the state back;
- `.null_marker` (the seed's *null checkpoint*): a function trainable was
  saved before it ever reported a checkpoint; restoring it means starting
  the function fresh, with `get_checkpoint()` returning None;
- `.temp_marker` (the seed's *temporary checkpoint*): the directory was
  unpacked from bytes only to restore from. It lives until the trainable
  stops (the function may read it lazily); saving copies it into a real
  checkpoint directory, without the marker, which makes it permanent.

In-memory checkpoints are uncompressed tar archives of such a directory,
built with `tarfile` and unpacked with its "data" filter (no absolute
paths, no links or files outside the destination, no devices): bytes from
elsewhere can at worst fail to unpack, never write outside their directory
or run code, which is why this is not a pickle.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tarfile
import time
import uuid
from pathlib import Path
from typing import Literal, NamedTuple

import msgspec

from tunecore.shell.storage.own_files import NotRegularFileError, read_bytes

META_FILE = ".tunecore_checkpoint.json"
NULL_MARKER = ".null_marker"
TEMP_MARKER = ".temp_marker"
# Where the class API keeps the dict `save_checkpoint` returned.
STATE_FILE = "checkpoint_state.json"

# Not copied from a source directory: the metadata is written afresh for
# each save and a copy is never temporary.
_NOT_COPIED = frozenset({META_FILE, TEMP_MARKER})


class CheckpointMeta(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What a checkpoint directory says about itself.

    `saved_as` tells the class API what to hand `load_checkpoint`: the
    directory, the file `file` (relative to the directory) that
    `save_checkpoint` returned, or the dict stored in `STATE_FILE`.
    Function checkpoints are always "directory". New fields get defaults,
    so older checkpoints keep loading.
    """

    training_iteration: int = 0
    time_total_s: float = 0.0
    timesteps_total: int | float | None = None
    """The sum of `timesteps_this_iter` so far (None: never reported)."""
    episodes_total: int | float | None = None
    saved_as: Literal["directory", "file", "dict"] = "directory"
    file: str = ""
    earlier: bool = False
    """A function trainable's save of a checkpoint it reported before its
    last result (`CheckpointRef.earlier`)."""


_META_DECODER = msgspec.json.Decoder(CheckpointMeta)
_META_LIMIT = 1 << 20
"""The largest metadata file read (it holds a few dozen bytes)."""


def read_meta(directory: str) -> CheckpointMeta | None:
    """The directory's metadata, or None for a directory tunecore did not
    save (a checkpoint the user made by hand: its iteration is unknown) and
    for the path of a file (a class trainable's save may return the file
    it wrote inside its checkpoint directory)."""
    path = os.path.join(directory, META_FILE)
    try:  # never a FIFO (it blocked the restore forever) nor /dev/zero
        data = read_bytes(Path(path), _META_LIMIT)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except NotRegularFileError as exc:
        raise ValueError(f"the checkpoint metadata {path!r} is refused: {exc.strerror}") from None
    try:
        return _META_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise ValueError(f"the checkpoint metadata {path!r} is malformed: {exc}") from exc


def write_meta(directory: str, meta: CheckpointMeta) -> None:
    with open(os.path.join(directory, META_FILE), "wb") as file:
        file.write(msgspec.json.encode(meta))


def is_null(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, NULL_MARKER))


def is_earlier(directory: str) -> bool:
    """Whether the save in `directory` holds a checkpoint reported before
    the trainable's last result (`CheckpointMeta.earlier`)."""
    meta = read_meta(directory)
    return meta is not None and meta.earlier


class SavedCheckpoint(NamedTuple):
    """What a worker's persistent save gives the driver: the path to
    restore from, whether it is a null checkpoint (`empty`: nothing of the
    trainable's own, see `CheckpointRef.empty`), and whether it holds a
    checkpoint reported before the last result (`CheckpointRef.earlier`)."""

    path: str
    empty: bool = False
    earlier: bool = False


def is_temporary(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, TEMP_MARKER))


def make_temporary_dir(parent: str) -> str:
    """A new directory under `parent` marked temporary (see the module doc)."""
    path = os.path.join(parent, f"restored_{uuid.uuid4().hex[:8]}")
    os.makedirs(path)
    open(os.path.join(path, TEMP_MARKER), "ab").close()
    return path


def write_checkpoint(
    dest: str, source: str | None, meta: CheckpointMeta, *, link: bool = False
) -> None:
    """Fill `dest` with the files of the checkpoint directory `source` (or,
    with no source, the null marker) and the metadata `meta`.

    With `link`, files are hard-linked where the file system allows (else
    copied): only for a source nobody will change in place, since both
    directories then share the files."""
    os.makedirs(dest, exist_ok=True)
    if source is None:
        open(os.path.join(dest, NULL_MARKER), "ab").close()
    elif os.path.abspath(source) != os.path.abspath(dest):
        copy = _link_or_copy if link else shutil.copy2
        for entry in _copied_entries(source):
            origin, target = os.path.join(source, entry), os.path.join(dest, entry)
            if os.path.isdir(origin) and not os.path.islink(origin):
                shutil.copytree(
                    origin, target, symlinks=True, dirs_exist_ok=True, copy_function=copy
                )
            else:
                copy(origin, target, follow_symlinks=False)
    write_meta(dest, meta)


def _link_or_copy(origin: str, target: str, *, follow_symlinks: bool = True) -> None:
    """Hard-link `origin` at `target` (replacing a file there, never writing
    through it), or copy it where no link can be made (a symlink, another
    file system, one without hard links)."""
    if not os.path.islink(origin):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        with contextlib.suppress(OSError):
            os.link(origin, target)
            return
    shutil.copy2(origin, target, follow_symlinks=follow_symlinks)


def pack_checkpoint(source: str | None, meta: CheckpointMeta) -> bytes:
    """What `write_checkpoint(dest, source, meta)` would put in `dest`, as an
    uncompressed tar archive in memory (no copy on disk first)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        if source is None:
            _add_bytes(tar, NULL_MARKER, b"")
        else:
            for entry in _copied_entries(source):
                tar.add(os.path.join(source, entry), arcname=entry)
        _add_bytes(tar, META_FILE, msgspec.json.encode(meta))
    return buffer.getvalue()


def unpack_checkpoint(data: bytes, dest: str) -> None:
    """Unpack an archive made by `pack_checkpoint` into the directory `dest`."""
    os.makedirs(dest, exist_ok=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            tar.extractall(dest, filter="data")
    except tarfile.TarError as exc:
        raise ValueError(
            f"these {len(data)} bytes are not a checkpoint archive made by save_to_bytes: {exc}"
        ) from exc


def _copied_entries(source: str) -> list[str]:
    if not os.path.isdir(source):
        raise FileNotFoundError(f"the checkpoint directory {source!r} does not exist (any more)")
    return sorted(entry for entry in os.listdir(source) if entry not in _NOT_COPIED)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))
