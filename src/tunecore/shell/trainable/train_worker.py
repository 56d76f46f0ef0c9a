"""`report`, `get_checkpoint` and `get_context` called in a Ray Train worker.

A Ray Train script whose imports are rewritten calls `tunecore.report`,
`tunecore.get_context()` and `tunecore.get_checkpoint()` where it called
`ray.train.report` & co. in the training function that Ray Train's
trainer (`tunecore.torch.TorchTrainer`, Ray Train's own) runs on each of
its workers. That process runs no tunecore trial: those calls belong to
Ray Train's session there, so they go to Ray Train, with
`tunecore.Checkpoint` converted to Ray Train's `Checkpoint` and back (the
same directory: a path and, for storage, its filesystem).

The worker is told apart by Ray Train's public API: Ray Train V2's (Ray
2.60's default) `ray.train.get_context()` raises RuntimeError outside a
Train worker; V1's (`RAY_TRAIN_V2_ENABLED=0`) gives a context everywhere,
whose `get_world_size()` is None, with a warning, outside one. Ray Train
is never imported here: its worker process has it loaded already, so a
process without `ray.train` loaded is not one.
"""

from __future__ import annotations

import sys
import warnings
from types import ModuleType
from typing import Any

from tunecore.shell.trainable.checkpoint import Checkpoint


def ray_train_worker() -> ModuleType | None:
    """`ray.train` if the calling process is a Ray Train worker running its
    training function (module doc), else None."""
    train = sys.modules.get("ray.train")
    if train is None:
        return None
    try:
        context = train.get_context()
    except RuntimeError:  # V2, outside a worker
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # V1's "meant to be called inside a Trainer"
        world_size = context.get_world_size()
    return None if world_size is None else train


def to_ray_checkpoint(train: ModuleType, checkpoint: object) -> object:
    """Ray Train's `Checkpoint` of the same directory as a tunecore one;
    anything else (None, Ray's own) as it is."""
    if isinstance(checkpoint, Checkpoint):
        return train.Checkpoint(checkpoint.path, checkpoint.filesystem)
    return checkpoint


def from_ray_checkpoint(checkpoint: Any) -> Checkpoint | None:
    """tunecore's `Checkpoint` of the directory a Ray Train one names. Ray
    gives a local directory its `LocalFileSystem`, which tunecore spells as
    no filesystem (then it reads the directory in place)."""
    if checkpoint is None:
        return None
    import pyarrow.fs  # noqa: PLC0415 - Ray Train's, loaded wherever its checkpoints are

    filesystem = checkpoint.filesystem
    if isinstance(filesystem, pyarrow.fs.LocalFileSystem):
        filesystem = None
    return Checkpoint(checkpoint.path, filesystem)
