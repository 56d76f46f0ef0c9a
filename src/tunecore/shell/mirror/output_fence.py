"""Fencing a paused driver's workers out of a trial's outputs: the
`log_to_file` files, `sync_artifacts` artifacts and `export/`, which
users read at Ray's names, so no lease generation may store them under
names of its own as checkpoints are (`upload_fence.store_checkpoint`).

Why. A worker checks that no later driver claimed the experiment before
it writes (`claims.check_not_taken_over`), but a check and a write are two
requests. A worker frozen between them (its driver paused past its
lease) once thawed stored its `stdout` and `export/` over the ones the new
driver's worker had stored, and they stayed so.

How, on a `LocalStore`: fenced by renames (`upload_fence.replace_file`,
`upload_fence.replace_dir`), as exports were: each file is written whole
in the generation's upload directory and renamed into place, which fails
once the next driver fenced that directory. A stale write never lands.

How, on S3, GCS and other object stores: there a write cannot be made to
depend on the claim (no rename, and pyarrow sends no conditional
request), so a stale write at Ray's name can land after any check. What
can be had, and is: nothing the new generation stored is destroyed, and
Ray's name shows it again.

- A worker of generation g >= 2 stores each output first as its
  generation's copy, `.tunecore_kept_g<g>/<path>` in the experiment's
  directory, then at Ray's name (a file: the same bytes; `export/`:
  copied from the copy, server-side). No other generation writes that
  copy, so a stale worker can overwrite the name but never the copy.
  Generation 1 keeps no copy: no writer is older than it.
- Every worker checks for a later claim before it writes and again after
  (`fenced_outputs`). A later claim at the second check means its writes
  may have landed over a later generation's: it puts back, at each name
  it wrote, the copy of the highest generation above its own that holds
  one, and raises `TakenOverError`. No such copy: no later generation
  stored that output, so nothing of theirs was replaced.
- A take-over's resume puts back, at every output name of the trials its
  log knows, the highest earlier generation's copy, and deletes the
  copies that one outranks (`put_back_outputs`): a stale write that
  landed with no second check after it (its worker frozen again, or
  killed) lasts until then.

What no design here can close: a stale worker's write that lands after
the last of these checks (its worker frozen or killed between its write
and its second check, after the new driver's resume) shows at Ray's name
until the next resume puts the copy back. The copy itself is whole.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

from tunecore.shell.mirror.claims import GENERATION_DIGITS, TakenOverError, check_not_taken_over
from tunecore.shell.mirror.upload_fence import names_by_generation, replace_dir, replace_file
from tunecore.shell.storage.store import Store, check_rel, local_files
from tunecore.shell.trial_files import is_tunecore_entry

logger = logging.getLogger(__name__)

_KEPT = re.compile(rf"^\.tunecore_kept_g({GENERATION_DIGITS})$")
EXPORT_DIR = "export"
"""A trial's exports: one output, replaced as a whole."""


def kept_dir(generation: int) -> str:
    """The directory of generation `generation`'s copies of its outputs, in
    the experiment's directory (a dot name: never a trial's, never
    fetched into a staging directory)."""
    return f".tunecore_kept_g{generation:08d}"


def kept_generations(store: Store) -> list[int]:
    """The generations that kept copies in `store`, highest first."""
    found = (_KEPT.match(name) for name in store.list())
    return sorted((int(match.group(1)) for match in found if match is not None), reverse=True)


@contextlib.contextmanager
def fenced_outputs(store: Store, generation: int, what: str) -> Iterator[FencedOutputs]:
    """The outputs one worker of lease generation `generation` stores at
    once (module docstring): the first check before, the second once the
    block ended without an error. `TakenOverError` naming `what` from
    either; the second puts back what a later generation kept first.
    `OSError` from the storage, as from any `Store` call."""
    check_not_taken_over(store, generation, what)
    outputs = FencedOutputs(store, generation, what)
    yield outputs
    if not outputs.written or not names_by_generation(store):
        return  # on a `LocalStore` the renames fenced each write
    try:
        check_not_taken_over(store, generation, f"keep what it stored: {what}")
    except TakenOverError:
        outputs.put_back()
        raise


class FencedOutputs:
    """Stores a worker's outputs inside `fenced_outputs`."""

    def __init__(self, store: Store, generation: int, what: str) -> None:
        self._store = store
        self._generation = generation
        self._what = what
        self._kept = names_by_generation(store) and generation >= 2
        self.written: list[tuple[str, bool]] = []
        """(store path, a directory) of each output written at Ray's name
        on an object store."""

    def file(self, rel: str, data: bytes) -> None:
        """Store `data` at the file `rel`."""
        if not names_by_generation(self._store):
            replace_file(self._store, self._generation, rel, data)
            return
        if self._kept:
            self._store.write_bytes(f"{kept_dir(self._generation)}/{rel}", data)
        self.written.append((rel, False))
        self._store.write_bytes(rel, data)

    def directory(self, local: str, rel: str) -> None:
        """Store the local directory `local` at `rel`, in place of what is
        there."""
        if not names_by_generation(self._store):
            replace_dir(self._store, self._generation, local, rel, self._what)
            return
        self.written.append((rel, True))
        if not self._kept:
            self._store.delete_dir(rel)
            self._store.upload_dir(local, rel)
            return
        kept = f"{kept_dir(self._generation)}/{rel}"
        self._store.delete_dir(kept)  # a failed export's
        self._store.upload_dir(local, kept)
        self._store.delete_dir(rel)
        if local_files(local, None):
            self._store.copy_dir(kept, rel)

    def put_back(self) -> None:
        """At each name written, the highest later generation's copy; a
        failure is named in a warning (the next resume puts it back)."""
        for rel, is_dir in self.written:
            try:
                later = [g for g in kept_generations(self._store) if g > self._generation]
                put_back(self._store, later, rel, is_dir=is_dir)
            except OSError as error:
                logger.warning(
                    "%s: could not put back the new driver's copy over this stale worker's "
                    "write (%s); the next resume puts it back",
                    self._store.uri(rel),
                    error,
                )


def put_back(store: Store, generations: list[int], rel: str, *, is_dir: bool) -> None:
    """Store at `rel` the copy of the first of `generations` (highest
    first) that kept one; nothing if none did."""
    for generation in generations:
        source = f"{kept_dir(generation)}/{rel}"
        if is_dir:
            if not store.exists(source):
                continue
            store.delete_dir(rel)
            store.copy_dir(source, rel)
            return
        try:
            store.copy_file(source, rel)
        except FileNotFoundError:
            continue
        return


def put_back_outputs(store: Store, generation: int, trial_dirs: set[str]) -> list[str]:
    """At a resume of lease generation `generation` on an object store,
    after its claim: at each output name of the trials in `trial_dirs`,
    the highest earlier generation's copy (module docstring); the copies
    that one outranks are deleted. Copies of other trials are left alone
    and nothing outside a trial's outputs is written. Returns the names
    put back."""
    earlier = [g for g in kept_generations(store) if g < generation]
    done: dict[str, None] = {}  # in the order put back
    for index, kept in enumerate(earlier):
        for rel, is_dir in _outputs(store, kept_dir(kept), trial_dirs):
            if rel in done:
                continue
            put_back(store, [kept], rel, is_dir=is_dir)
            done[rel] = None
            for lower in earlier[index + 1 :]:
                drop = store.delete_dir if is_dir else store.delete_file
                drop(f"{kept_dir(lower)}/{rel}")
    return list(done)


def _outputs(store: Store, root: str, trial_dirs: set[str]) -> list[tuple[str, bool]]:
    """(store path, a directory) of each output kept under `root`: each
    trial's `export/` as one, every other file on its own; entries a
    worker never stores (tunecore's own files) are left out."""
    found: list[tuple[str, bool]] = []
    for trial in store.list(root):
        if trial not in trial_dirs:
            continue
        for name in store.list(f"{root}/{trial}"):
            rel = check_rel(f"{trial}/{name}", root_ok=False)
            if is_tunecore_entry(name):
                continue
            if name == EXPORT_DIR and store.list(f"{root}/{rel}"):
                found.append((rel, True))
            else:
                found.extend((path, False) for path in _files(store, root, rel))
    return found


def _files(store: Store, root: str, rel: str) -> list[str]:
    """The files at or under `rel` in `root`, as store paths relative to
    `root`."""
    names = store.list(f"{root}/{rel}")
    if not names:
        return [rel] if store.exists(f"{root}/{rel}") else []
    return [path for name in names for path in _files(store, root, f"{rel}/{name}")]
