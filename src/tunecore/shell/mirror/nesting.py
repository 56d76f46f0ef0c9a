"""An experiment is never run inside another experiment's directory.

Each driver owns every name in its experiment's directory: the stored
inbox drops what is no request, the shipper deletes what it did not ship
under `events/` and `snapshots/`, retention deletes checkpoint
directories, and a new run under the same name copies the whole directory
aside and deletes it. A second experiment placed inside (`storage_path`
pointing into the first, or a `name` such as `exp1/inbox`) had its files
read, deleted or moved by the first one's driver, and its own objects
(`driver.lease`, `.tunecore_upload_g*`) took the first one's resume down.
So `fit()` and a resume refuse a place below an experiment
(`check_not_nested`), before they write anything.

An experiment directory is one that holds a local event log (`events.log`:
a local experiment or a staging copy) or a stored one (log objects,
claims or fences in `events/`, `shell.mirror.stored_state`). Only the
directories above the place are looked at: a few listings, whatever the
storage holds below.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from tunecore.shell.eventlog import LOG_FILE
from tunecore.shell.mirror.claims import SEGMENT_DIR
from tunecore.shell.mirror.stored_state import stored_objects
from tunecore.shell.storage.store import Store


class NestedExperimentError(ValueError):
    """The place of an experiment is inside another experiment's directory."""


def check_not_nested(store: Store, name: str, what: str) -> None:
    """`NestedExperimentError` if the experiment `name` in `store` (its
    place as `what` names it: a setting or an argument) would be inside
    another experiment's directory (module docstring)."""
    holder = enclosing_experiment(store, name)
    if holder is not None:
        raise NestedExperimentError(
            f"{what}: {store.shown(name)} is inside the experiment {holder}, whose driver "
            "reads, moves and deletes what is in its directory. Put this experiment "
            "outside it (another storage_path or name)"
        )


def enclosing_experiment(store: Store, name: str) -> str | None:
    """The innermost experiment directory above `name` in `store` (a path
    of the store's filesystem), or None."""
    local = store.local_path(name)
    if local is not None:
        return next(filter(_is_local_experiment, _ancestors(local, os.path.dirname)), None)
    from pyarrow.fs import FileSelector, FileType  # noqa: PLC0415 - pyarrow is optional

    filesystem = store.filesystem()

    def is_experiment(directory: str) -> bool:
        if filesystem.get_file_info(f"{directory}/{LOG_FILE}").type == FileType.File:
            return True
        selector = FileSelector(f"{directory}/{SEGMENT_DIR}", allow_not_found=True)
        names = [info.base_name for info in filesystem.get_file_info(selector)]
        return _holds_stored_log(names)

    def parent(path: str) -> str:
        return path.rpartition("/")[0]

    try:
        return next(filter(is_experiment, _ancestors(store.fs_path(name), parent)), None)
    except OSError as error:
        raise OSError(
            error.errno, f"{store.uri(name)}: looking for an experiment above it: {error}"
        ) from error


def _ancestors(path: str, parent: Callable[[str], str]) -> Iterator[str]:
    """The directories above `path`, innermost first, as `parent` gives
    each one's (the root's is itself, or empty)."""
    above = parent(path)
    while above and above != path:
        yield above
        path, above = above, parent(above)


def _is_local_experiment(directory: str) -> bool:
    if os.path.isfile(os.path.join(directory, LOG_FILE)):
        return True
    try:
        names = os.listdir(os.path.join(directory, SEGMENT_DIR))
    except OSError:  # none, or no directory
        return False
    return _holds_stored_log(names)


def _holds_stored_log(names: list[str]) -> bool:
    found = stored_objects(names)
    return bool(found.found or found.stale or found.fences.newest())
