"""`ray.tune.experiment`'s names, for scripts that import them from there
(`from ray.tune.experiment import Trial` in a callback)."""

from tunecore.shell.trial_view import Trial

__all__ = ["Trial"]
