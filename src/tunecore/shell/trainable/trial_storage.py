"""`TrainContext.get_storage()`: where a trial's files are kept, read-only,
in the names Ray's `StorageContext` gives them (`storage_filesystem`, the
`*_fs_path` paths inside it, `experiment_dir_name`, `trial_dir_name`), so a
trainable that writes or reads its trial's stored files with pyarrow, as
Ray's docs show, runs unchanged.

Ray's object also persists checkpoints and artifacts (`persist_*`): tunecore
does that itself (`shell.trainable.persist`), so only the paths are here.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

from tunecore.shell.storage.resolve import filesystem_of
from tunecore.shell.storage.store import Store

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem


@dataclass(frozen=True)
class TrialStorage:
    """A trial's place in its experiment's storage. The paths are paths in
    `storage_filesystem` ('/'-joined; local absolute paths for a local
    directory or `file://`)."""

    storage_fs_path: str
    """The storage root: `RunConfig.storage_path` inside its filesystem."""
    experiment_dir_name: str
    trial_dir_name: str
    """The trial directory, relative to the experiment's."""
    store: Store | None = field(default=None, repr=False)
    """The experiment's storage when mirrored, else None (a local directory)."""

    @classmethod
    def of(cls, experiment_dir: str, trial_dir: str, store: Store | None) -> TrialStorage:
        """The storage of the trial in `trial_dir` of `experiment_dir` (a
        trial context's directories: the node's scratch copy when `store`
        is set, whose names are the stored ones)."""
        inner = os.path.relpath(trial_dir, experiment_dir)
        trial_dir_name = "/".join(PurePath(inner).parts)
        experiment = PurePath(experiment_dir).as_posix() if store is None else store.fs_path()
        root, name = posixpath.split(experiment)
        return cls(root, name, trial_dir_name, store)

    @property
    def storage_filesystem(self) -> FileSystem:
        """The `pyarrow.fs.FileSystem` the experiment is on (needs pyarrow,
        `tunecore[storage]`)."""
        return filesystem_of(self.store)

    @property
    def experiment_fs_path(self) -> str:
        return posixpath.join(self.storage_fs_path, self.experiment_dir_name)

    @property
    def trial_fs_path(self) -> str:
        return posixpath.join(self.experiment_fs_path, self.trial_dir_name)
