"""`ray.tune.tune_config`'s names, for scripts that import them from there."""

from tunecore.api.config import ResumeConfig, TuneConfig

__all__ = ["ResumeConfig", "TuneConfig"]
