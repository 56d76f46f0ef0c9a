"""`ray.tune.logger.wandb`: W&B's logger callback, which lives in
`tunecore.integrations.wandb` (`pip install 'tunecore[wandb]'`)."""

from tunecore.integrations.wandb import WandbLoggerCallback

__all__ = ["WandbLoggerCallback"]
