"""`ray.air.config`'s configuration classes, for scripts that import them
from there (`from ray.air.config import RunConfig`)."""

from tunecore.api.config import CheckpointConfig, FailureConfig, RunConfig, SyncConfig
from tunecore.shell.trainable.scaling_config import ScalingConfig

__all__ = ["CheckpointConfig", "FailureConfig", "RunConfig", "ScalingConfig", "SyncConfig"]
