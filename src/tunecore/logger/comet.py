"""`ray.tune.logger.comet`: Comet's logger callback, which lives in
`tunecore.integrations.comet` (`pip install 'tunecore[comet]'`)."""

from tunecore.integrations.comet import CometLoggerCallback

__all__ = ["CometLoggerCallback"]
