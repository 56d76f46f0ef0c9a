"""Ray Train's top-level names under a script's rewritten imports.

`from ray.train import get_dataset_shard, DataConfig, UserCallback` becomes
`from tunecore import ...`. Where tunecore has a name of its own
(`Checkpoint`, `RunConfig`, `ScalingConfig`, `report`, `get_context`,
`get_checkpoint`, `Result`, ...) it stays tunecore's: Ray Train's trainers
take those converted (tunecore.api.ray_train_configs) and the calls go to
Ray Train in its workers (tunecore.shell.trainable.train_worker). Every
other name of Ray 2.60's `ray.train.__all__` (and `ray.air`'s
`DataBatchType`) belongs to Ray Train's trainers, their workers or their
callbacks, never to a tunecore trial, so it is Ray's object itself:
`tunecore.get_dataset_shard` is `ray.train.get_dataset_shard` (a Ray Train
worker's call, which raises Ray's own error elsewhere), `tunecore.DataConfig`
is `ray.train.DataConfig` (a trainer's `dataset_config`),
`tunecore.TrainingFailedError` is the error `trainer.fit()` raises.

`ray.train` is imported when such a name is first read, never with `import
tunecore`; where Ray Train is missing, or is V1 (`RAY_TRAIN_V2_ENABLED=0`)
and lacks one of V2's names, reading it is an ImportError saying so.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

_V1_AND_V2 = (
    "BackendConfig",
    "DataConfig",
    "TRAIN_DATASET_KEY",
    "TrainingFailedError",
    "get_dataset_shard",
)
_V2_ONLY = (
    "CheckpointConsistencyMode",
    "CheckpointUploadMode",
    "ControllerError",
    "LoggingConfig",
    "NCCLHangError",
    "PreemptionError",
    "PreemptionInfo",
    "ReportedCheckpoint",
    "ReportedCheckpointStatus",
    "UserCallback",
    "ValidationConfig",
    "ValidationFn",
    "ValidationTaskConfig",
    "WorkerGroupError",
    "get_all_reported_checkpoints",
    "get_preemption_info",
)

PASSED_THROUGH: dict[str, str] = {
    **dict.fromkeys(_V1_AND_V2 + _V2_ONLY, "ray.train"),
    "DataBatchType": "ray.air",
}
"""The names `tunecore.<name>` passes through, and Ray's module holding each."""


def ray_attribute(name: str) -> object:
    """Ray's object that `tunecore.<name>` passes through to (`name` in
    `PASSED_THROUGH`)."""
    module_name = PASSED_THROUGH[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(
            f"tunecore.{name} is Ray Train's {module_name}.{name}, which cannot be imported here "
            f"({error}): pip install 'ray[train]'",
            name="tunecore",
        ) from error
    try:
        return getattr(module, name)
    except AttributeError:
        raise ImportError(
            f"tunecore.{name} is Ray Train V2's {module_name}.{name}, which this process's Ray "
            "Train does not have: it runs Ray Train V1 (RAY_TRAIN_V2_ENABLED=0); unset "
            "RAY_TRAIN_V2_ENABLED to use it",
            name="tunecore",
        ) from None


def passing_through(missing: Callable[[str], object]) -> Callable[[str], object]:
    """tunecore's module `__getattr__` for the names it does not have:
    Ray Train's object for one it passes through, else what `missing`
    says."""

    def __getattr__(name: str) -> object:
        if name in PASSED_THROUGH:
            return ray_attribute(name)
        return missing(name)

    return __getattr__
