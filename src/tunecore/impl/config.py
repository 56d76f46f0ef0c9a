"""`ray.tune.impl.config`, where Ray 2.60 defines Tune's `RunConfig`,
`CheckpointConfig` and `FailureConfig` (`ray.tune.RunConfig` is this
module's), for scripts that import them from there."""

from tunecore.api.config import CheckpointConfig, FailureConfig, RunConfig

__all__ = ["CheckpointConfig", "FailureConfig", "RunConfig"]
