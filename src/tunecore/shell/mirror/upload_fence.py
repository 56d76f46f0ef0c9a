"""Fencing a paused driver's workers out of storage: on `file://` a worker
replaces a directory (`checkpoint_000003/`, `export/`) only by renames
that the next driver's take-over makes fail; on an object store each
lease generation stores its checkpoints under names of its own.

Why. A worker checks that no later driver claimed the experiment before
it deletes or uploads (`claims.check_not_taken_over`), but a check and a
write are two requests. A worker frozen between them (its driver
SIGSTOPped or its VM paused past the lease) once thawed deleted and
replaced the `checkpoint_000003` a new driver's worker had stored there,
so the checkpoint the new log names held the stale trial's state.

How, on a store with a local path (`Store.local_path`: a `LocalStore`,
one kernel resolves every path):

- The driver of lease generation g makes `.tunecore_upload_g<g>/` in the
  experiment's directory as it takes the lease, and moves every earlier
  generation's aside (`.tunecore_fenced_g<k>_<random>`), then deletes
  those (`open_generation`): all after its claim, before it reads
  anything.
- A worker of generation g builds the new directory inside its
  generation's, which it never makes itself, then renames the directory
  it replaces into its generation's, then renames the new one into place
  (`replace_dir`). The kernel resolves `.tunecore_upload_g<g>/` as each
  rename happens: once a later driver moved it aside, both fail, and the
  worker raises `TakenOverError` having replaced nothing. Whenever the
  worker froze, its renames were either done before the take-over (the
  new driver reads after it, and its worker replaces them as any earlier
  generation's) or fail after it.
- A worker whose generation's directory was never made (a driver before
  this) writes as before, after the check.

How, on S3, GCS and other object stores (`store_checkpoint`), which have
no rename and no request that makes a write depend on another object
(the claim), so no write there can be refused once a later driver
claimed: fenced by naming instead.

- A worker of generation g >= 2 stores the checkpoint directory its
  driver named `checkpoint_000003` as `checkpoint_000003_g<g>`
  (`core.checkpoints.generation_dirname`), and returns that path, which
  its driver records (`CheckpointSaved`): the log names which
  generation's directory is the trial's checkpoint. Generation 1 (the
  experiment's first driver) keeps Ray's plain name. No two generations
  share a name, so a stale worker's deletion and upload, whenever they
  land, touch only its own generation's directory, which no later
  driver's log names: its driver never recorded it (a later log is a
  prefix of the stale driver's, and a driver never names a checkpoint
  its log records). Readers (restore,
  `ResultGrid.from_path`, `Result.checkpoint`, retention) take the
  path the log names, so they never see it.
- The worker checks for a later claim before it writes and again once
  its upload is whole. A later claim then deletes what it uploaded (its
  own name) and raises `TakenOverError`; a worker frozen through that
  too leaves a directory no log names, which the next take-over's
  resume deletes (`resume.drop_unrecorded_checkpoints`: every directory
  no log names of a generation before the resuming driver's).
- A driver's `held` names (`ExperimentStorage.checkpoint_path`) are the
  names without the suffix: a recorded `checkpoint_000003_g2` is never
  written over by the same iteration saved again.

Exports (`export/`) and output files keep their names (users look for
them there, and no log names them): on `file://` they go through
`replace_dir` and `replace_file`, on object stores through the copies
`output_fence` keeps.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from tunecore.core.checkpoints import generation_dirname
from tunecore.shell.mirror.claims import GENERATION_DIGITS, TakenOverError, check_not_taken_over
from tunecore.shell.storage import own_files
from tunecore.shell.storage.store import Store, local_files

logger = logging.getLogger(__name__)

_UPLOAD = re.compile(rf"^\.tunecore_upload_g({GENERATION_DIGITS})$")
_FENCED = re.compile(rf"^\.tunecore_fenced_g{GENERATION_DIGITS}_[0-9a-f]+$")
_T = TypeVar("_T")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def upload_dir(generation: int) -> str:
    """The directory of generation `generation`'s uploads, in the
    experiment's directory (a dot name: never a trial's)."""
    return f".tunecore_upload_g{generation:08d}"


def open_generation(store: Store, generation: int) -> str | None:
    """Make generation `generation`'s upload directory and fence every
    earlier one (module docstring); nothing on a store with no local path
    (`Store.local_path`). Called by the driver that took the lease, after
    its claim and before it reads anything. Returns the directory made (its
    path in `store`), None if none: the driver keeps it for as long as it
    runs, since its workers' writes without it are not fenced."""
    root = store.local_path("")
    if root is None or generation <= 0:
        return None
    os.makedirs(root, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(os.path.join(root, upload_dir(generation)))
    for entry in os.scandir(root):
        match = _UPLOAD.match(entry.name)
        if match is not None and int(match.group(1)) < generation:
            fenced = f".tunecore_fenced_g{match.group(1)}_{secrets.token_hex(4)}"
            with contextlib.suppress(FileNotFoundError):
                os.rename(entry.path, os.path.join(root, fenced))
    for entry in os.scandir(root):
        if _FENCED.match(entry.name) and entry.is_dir(follow_symlinks=False):
            # A stale worker may still write into it: what it leaves goes
            # with the next take-over.
            shutil.rmtree(entry.path, ignore_errors=True)
    return upload_dir(generation)


def replace_dir(
    store: Store, generation: int, local: str, rel: str, what: str, *, marker: str | None = None
) -> None:
    """Store the directory `local` at `rel`, replacing what is there, as a
    writer of lease generation `generation` that must not write once a
    later driver took over (`TakenOverError` naming `what` it would have
    done). Fenced by renames on a store with a local path whose driver
    made the generation's directory (module docstring); else checked just
    before (`check_not_taken_over`), the deletion and the upload then two
    more requests."""
    check_not_taken_over(store, generation, what)
    if not _fenced_replace(store, generation, local, rel):
        store.delete_dir(rel)
        store.upload_dir(local, rel, marker=marker)


def replace_file(store: Store, generation: int, rel: str, data: bytes) -> None:
    """Store `data` at `rel` (a file), replacing what is there, as a writer
    of lease generation `generation` that checked no later driver took
    over (`check_not_taken_over`). On a store with a local path whose
    driver made the generation's directory the file is written there whole
    and renamed into place, a rename the next take-over makes fail
    (`TakenOverError`, module docstring); else by `write_bytes`, which
    nothing fences (`output_fence` keeps what it would replace on an object
    store)."""
    if not _fenced_write(store, generation, rel, data):
        store.write_bytes(rel, data)


def store_checkpoint(
    store: Store, generation: int, local: str, rel: str, what: str, *, marker: str
) -> str:
    """Store the checkpoint directory `local` that the driver named `rel`
    as a writer of lease generation `generation`, and return where it was
    stored: `rel` on a store with a local path (`replace_dir`), else the
    generation's own name for it (module docstring). `TakenOverError`
    naming `what` once a later driver claimed, with nothing of it left
    stored that the check after the upload saw."""
    if not names_by_generation(store):
        replace_dir(store, generation, local, rel, what, marker=marker)
        return rel
    stored = _named_for(store, generation, rel)
    check_not_taken_over(store, generation, what)
    store.delete_dir(stored)  # a failed save's, of this generation: never another's
    store.upload_dir(local, stored, marker=marker)
    try:
        check_not_taken_over(store, generation, f"keep what it stored at {stored}")
    except TakenOverError:
        with contextlib.suppress(OSError):  # else the next take-over's resume deletes it
            store.delete_dir(stored)
        raise
    return stored


def names_by_generation(store: Store) -> bool:
    """Whether the workers of a driver of `store` store their checkpoints
    under their lease generation's names (module docstring): on every
    store with no local path, whose writes no rename can fence
    (`Store.local_path`)."""
    return store.local_path("") is None


def _named_for(store: Store, generation: int, rel: str) -> str:
    """Where a writer of `generation` stores the checkpoint directory
    `rel`: the same place on a store with a local path or for the first
    generation, else its generation's name for it."""
    if not names_by_generation(store) or generation <= 1:
        return rel
    head, _, name = rel.rpartition("/")
    return "/".join(filter(None, (head, generation_dirname(name, generation))))


def _fenced_replace(store: Store, generation: int, local: str, rel: str) -> bool:
    """`replace_dir` by renames through the generation's directory; False
    when there is none (nothing done); `TakenOverError` once it was
    fenced."""
    with _staging(store, generation) as staging:
        if staging is None:
            return False
        root, staged = staging
        files = local_files(local, None)
        _in_generation(store, generation, lambda: os.mkdir(staged, dir_fd=root))
        try:
            _copy_into(root, staged, local, files)
        except BaseException:
            shutil.rmtree(staged, dir_fd=root, ignore_errors=True)
            raise
        aside = f"{staged}.replaced"
        # With no files nothing is stored there, as after a deletion.
        _into_place(store, generation, root, rel, staged if files else None, aside=aside)
        for done in (aside, staged):
            with contextlib.suppress(OSError):
                shutil.rmtree(done, dir_fd=root)
        return True


def _fenced_write(store: Store, generation: int, rel: str, data: bytes) -> bool:
    """`replace_file` as `_fenced_replace` replaces a directory, by one
    rename: a file is renamed over another."""
    with _staging(store, generation) as staging:
        if staging is None:
            return False
        root, staged = staging
        fd = _in_generation(store, generation, lambda: os.open(staged, _CREATE, 0o666, dir_fd=root))
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            _into_place(store, generation, root, rel, staged, aside=None)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(staged, dir_fd=root)
            raise
        return True


def _in_generation(store: Store, generation: int, make: Callable[[], _T]) -> _T:
    """`make()`, which makes an entry in the generation's directory (never
    made by a worker): `TakenOverError` when that directory is gone."""
    try:
        return make()
    except FileNotFoundError:
        raise _taken_over(store, generation) from None


def _into_place(
    store: Store, generation: int, root: int, rel: str, staged: str | None, *, aside: str | None
) -> None:
    """Rename `staged` (in the generation's directory, below the store's
    root open as `root`) to `rel`; with `aside`, first rename what is at
    `rel` there (a directory is never renamed over another). Both renames
    go through the generation's directory: `TakenOverError` once it was
    fenced."""
    target = store.local_path(rel)  # checked: a store path, no link on the way
    top = store.local_path("")
    # Both local: the caller found the generation's directory there.
    assert target is not None
    assert top is not None
    parent = own_files.directory_fd(Path(os.path.dirname(target)), Path(top), create=True)
    name = os.path.basename(target)
    try:
        if aside is not None:
            try:
                os.rename(name, aside, src_dir_fd=parent, dst_dir_fd=root)
            except FileNotFoundError:
                if not _exists(upload_dir(generation), root):
                    raise _taken_over(store, generation) from None
                # nothing stored there yet
        if staged is not None:
            os.rename(staged, name, src_dir_fd=root, dst_dir_fd=parent)
    except FileNotFoundError:
        raise _taken_over(store, generation) from None
    finally:
        os.close(parent)


@contextlib.contextmanager
def _staging(store: Store, generation: int) -> Iterator[tuple[int, str] | None]:
    """A descriptor of the store's root, while it is open, and a fresh
    name below it in the generation's upload directory, if the store has a
    local path and that directory is there (`_generation_dir`); else
    None."""
    top = store.local_path("")
    if top is None or generation <= 0:
        yield None
        return
    root = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if not _generation_dir(store, generation, root):
            yield None
            return
        yield root, f"{upload_dir(generation)}/{secrets.token_hex(8)}"
    finally:
        os.close(root)


def _generation_dir(store: Store, generation: int, root: int) -> bool:
    """Whether generation `generation`'s upload directory is there (a
    driver before fencing never made it); `TakenOverError` if it is gone
    because a later driver fenced it since the caller's check, and
    `NotRegularFileError` if something else than a directory is there."""
    gen = upload_dir(generation)
    try:
        mode = os.stat(gen, dir_fd=root, follow_symlinks=False).st_mode
    except FileNotFoundError:
        check_not_taken_over(store, generation, "store anything")  # fenced since the check
        return False
    if not stat.S_ISDIR(mode):
        raise own_files.NotRegularFileError(
            errno.ELOOP, "not a directory: uploads never go through a link", store.uri(gen)
        )
    return True


def _copy_into(root: int, staged: str, local: str, files: list[str]) -> None:
    """Copy `files` of `local` into the directory `staged` (just made in
    the generation's), every file and directory made below it without
    following a link."""
    top = os.open(staged, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root)
    try:
        for name in files:
            *dirs, leaf = name.split("/")
            parent = os.dup(top)
            try:
                for part in dirs:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=parent)
                    inner = os.open(
                        part,
                        os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                        dir_fd=parent,
                    )
                    os.close(parent)
                    parent = inner
                with (
                    open(os.path.join(local, *name.split("/")), "rb") as source,
                    os.fdopen(os.open(leaf, _CREATE, 0o666, dir_fd=parent), "wb") as copy,
                ):
                    shutil.copyfileobj(source, copy)
            finally:
                os.close(parent)
    finally:
        os.close(top)


def _exists(name: str, root: int) -> bool:
    try:
        os.stat(name, dir_fd=root, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _taken_over(store: Store, generation: int) -> TakenOverError:
    """The error of a writer whose generation's directory a later driver
    fenced: which driver, as the claims say."""
    try:
        check_not_taken_over(store, generation, "replace what the new driver stored")
    except TakenOverError as error:
        return error
    return TakenOverError(
        f"{store.uri()}: the uploads of generation {generation} were fenced (another driver "
        "took this experiment over); nothing was replaced"
    )
