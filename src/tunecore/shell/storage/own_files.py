"""Opening the files tunecore itself keeps in an experiment directory.

Anyone who can write the experiment directory can replace one of its
files (result.json, progress.csv, error.txt, events.log, a snapshot, an
inbox request) with a symbolic link or a special file. Followed, a link
makes the driver append a traceback to a file elsewhere, and a link to
`/dev/zero` or a FIFO makes a read never end (memory exhausted, or a hang).
So every such file is opened here, and only here:

- without following a symbolic link in its last component (`O_NOFOLLOW`)
  and without blocking on a FIFO (`O_NONBLOCK`);
- checked on the open descriptor to be a regular file (the entry may have
  changed since anyone looked at its name);
- read only up to its size at that moment (a file that grows meanwhile is
  read as it was), and refused whole if it exceeds the caller's `limit`.

A file written whole (params.json, the run's token) is either created
new, exclusively and in one write (`write_new`: nothing there can be
followed or blocked on), or written beside its name and renamed over it
(`write_atomic`: a reader never sees half of it, and a link in its place
is replaced, not followed).

A file in a directory tunecore made (a trial directory in the experiment
directory) is opened with `beneath`, the directory it trusts: every
directory from there to the file is opened without following a link
(`dir_fd`, one component at a time), so a trial directory removed and
replaced by a link while the run goes on is refused, not written through.
Without `beneath` only the last component is kept from being a link: a
user's checkpoint may well sit in a linked directory.

Anything else raises `NotRegularFileError`, an `OSError` naming the path
and what it is; each caller decides whether that is an error (the event
log) or a warning and a skipped file (trial files, inbox requests).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, TextIO, cast

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}
_MODES = {
    "r": os.O_RDONLY,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "w": os.O_WRONLY | os.O_CREAT,
    "r+": os.O_RDWR,
    "rw": os.O_RDWR | os.O_CREAT,
}


class NotRegularFileError(OSError):
    """A file tunecore keeps is a symbolic link, a special file, or larger
    than the bound its reader sets; it is not opened (or not read).
    `mode` holds the entry's file type bits (`stat.S_IFMT`) when it is
    refused for its kind, 0 when for its size."""

    mode: int = 0


def kind_of(mode_bits: int) -> str:
    """What an entry of these `st_mode` bits is, in words ("a FIFO")."""
    return _KINDS.get(stat.S_IFMT(mode_bits), "a special file")


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def directory_fd(directory: Path, beneath: Path, *, create: bool = False) -> int:
    """A descriptor of `directory`, reached from `beneath` (followed as
    given) without following a symbolic link in any component below it;
    `NotRegularFileError` names the first component that is not a
    directory. `directory` must lie below `beneath` (`ValueError`). With
    `create`, each missing component is made on the way (in the directory
    reached so far, so never through a link either)."""
    fd = os.open(beneath, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    reached = beneath
    try:
        for part in directory.relative_to(beneath).parts:
            reached = reached / part
            if create:
                with suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                inner = os.open(part, _DIRECTORY, dir_fd=fd)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                refused = NotRegularFileError(
                    errno.ELOOP, f"{kind_of(mode)} in place of a directory", str(reached)
                )
                refused.mode = stat.S_IFMT(mode)
                raise refused from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def in_directory(
    path: Path, beneath: Path | None, *, create: bool = False
) -> Iterator[tuple[str | Path, int | None]]:
    """(the name to open, the `dir_fd` to open it in) for `path`: its
    last component in its directory reached from `beneath`
    (`directory_fd`), else the path itself as the OS resolves it. With
    `create`, the directories missing on the way are made: `beneath`
    itself as given (it is trusted), those below it one at a time in the
    directory reached, never through a link."""
    if beneath is None:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        yield path, None
        return
    if create:
        beneath.mkdir(parents=True, exist_ok=True)
    parent = directory_fd(path.parent, beneath, create=create)
    try:
        yield path.name, parent
    finally:
        os.close(parent)


def open_fd(path: Path, mode: str = "r", *, beneath: Path | None = None) -> int:
    """A descriptor of `path` opened with `mode` ('r', 'a', 'w' which
    truncates, 'r+', 'rw' which reads and writes, creating the file if it
    is missing and never truncating it), once it is known to be a regular
    file reached without following a symbolic link (in any directory below
    `beneath`, if given)."""
    flags = _MODES[mode] | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with in_directory(path, beneath) as (name, parent):
        try:
            fd = os.open(name, flags, 0o644, dir_fd=parent)
        except OSError as error:
            # ELOOP: the last component is a symlink; ENXIO: a FIFO nobody
            # reads; EISDIR: a directory opened to write.
            if error.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                mode_bits = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
                raise _refused(path, mode_bits) from None
            raise
    try:
        mode_bits = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode_bits):
            raise _refused(path, mode_bits)
        os.set_blocking(fd, True)
        if mode == "w":
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_text(path: Path, mode: str = "r", *, beneath: Path | None = None) -> TextIO:
    """`open_fd` as a UTF-8 text file without newline translation (CSV and
    JSON lines are written as they are)."""
    fd = open_fd(path, mode, beneath=beneath)
    return cast(TextIO, os.fdopen(fd, mode, encoding="utf-8", newline=""))


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Hand all of `data` to the OS: a regular file takes a write whole but
    for a signal or a full disk, and then the rest is written again."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_bytes(path: Path, limit: int | None = None, *, beneath: Path | None = None) -> bytes:
    """The bytes `path` holds now, read through `open_fd`; a file over
    `limit` bytes is refused unread."""
    fd = open_fd(path, beneath=beneath)
    try:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise NotRegularFileError(errno.EFBIG, f"larger than {limit} bytes ({size})", str(path))
        chunks: list[bytes] = []
        left = size
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text(path: Path, limit: int | None = None, *, beneath: Path | None = None) -> str:
    """`read_bytes` decoded as UTF-8 (an undecodable byte is replaced: a
    crash can cut a character in half)."""
    return read_bytes(path, limit, beneath=beneath).decode("utf-8", errors="replace")


def _refused(path: Path, mode_bits: int) -> NotRegularFileError:
    error = NotRegularFileError(
        errno.EINVAL, f"{kind_of(mode_bits)}, not a regular file", str(path)
    )
    error.mode = stat.S_IFMT(mode_bits)
    return error


def write_new(path: Path, data: bytes, *, beneath: Path | None = None) -> bool:
    """Create `path` and write `data` into it with one write, unless
    something is there already (False: nothing written). One directory
    entry made instead of `write_atomic`'s two (the temporary file, the
    rename), which counts where creating one costs most of a trial's file
    time; a crash between the creation and the write can leave the file
    short, which its reader must check (`write_atomic` again)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with in_directory(path, beneath) as (name, parent):
        try:
            fd = os.open(name, flags, 0o644, dir_fd=parent)
        except FileExistsError:
            return False
    try:
        write_all(fd, data)
    finally:
        os.close(fd)
    return True


def write_atomic(
    path: Path, data: str | bytes, *, shared: bool = False, beneath: Path | None = None
) -> None:
    """Write `data` (text as UTF-8) to a temporary file beside `path`, then
    rename it over `path` (atomic on POSIX and Windows). The file is its
    owner's alone unless `shared` (a picture the user hands on): then it
    has the permissions any new file of theirs gets (0o666 less the umask)."""
    parts = [data.encode() if isinstance(data, str) else data]
    write_parts_atomic(path, parts, shared=shared, beneath=beneath)


def write_parts_atomic(
    path: Path,
    parts: Iterable[bytes],
    *,
    shared: bool = False,
    sync: bool = False,
    beneath: Path | None = None,
) -> None:
    """`write_atomic` of the concatenation of `parts`, written one after
    another (a large file never held twice in memory); with `sync`, on disk
    before it is renamed into place."""

    def write(file: BinaryIO) -> None:
        for part in parts:
            file.write(part)

    write_through(path, write, shared=shared, sync=sync, beneath=beneath)


def write_through(
    path: Path,
    write: Callable[[BinaryIO], object],
    *,
    shared: bool = False,
    sync: bool = False,
    beneath: Path | None = None,
    create: bool = False,
) -> None:
    """Have `write` fill a new temporary file beside `path`, then rename it
    over `path` (atomic on POSIX and Windows): a reader never sees half of
    it, and a link in its place is replaced, not followed. The permissions
    are `write_atomic`'s (`shared`), `sync` puts it on disk before the
    rename, and `beneath` and `create` are `in_directory`'s. The temporary
    name (`temp_name`) is random and created exclusively, never through a
    link: a name anyone could guess, opened following links, lets whoever
    planted a link there have the driver overwrite the file it points to."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with in_directory(path, beneath, create=create) as (name, parent):
        temporary = temp_name(os.fspath(name))
        descriptor = os.open(temporary, flags, 0o666 if shared else 0o600, dir_fd=parent)
        try:
            with os.fdopen(descriptor, "wb") as file:
                write(file)
                if sync:
                    file.flush()
                    os.fsync(file.fileno())
            os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=parent)
            raise


_TEMP_SUFFIX = re.compile(r"\.tmp-[0-9a-f]{16}$")


def temp_name(path: str) -> str:
    """Where a file being written to `path` (a local path, or a store's
    "/"-separated one) stays until it is whole: beside it, hidden (a leading
    dot, which globs and listings of visible names skip) and ending in a
    random `.tmp-<16 hex>` (`is_temp`, which storage listings skip)."""
    head, _, tail = path.rpartition("/")
    return f"{head}{'/' if head else ''}.{tail}.tmp-{secrets.token_hex(8)}"


def is_temp(name: str) -> bool:
    """Whether `name` is a `temp_name`: a write in flight, or one a crash cut."""
    return _TEMP_SUFFIX.search(name) is not None


def unlink(path: Path, *, beneath: Path) -> None:
    """Remove the file `path` (if there), reached from `beneath` without
    following a link (`directory_fd`): never someone else's file through a
    linked directory."""
    with in_directory(path, beneath) as (name, parent), suppress(FileNotFoundError):
        os.unlink(name, dir_fd=parent)
