"""Ray Tune's `tune.search.repeater` module: `Repeater` and `TRIAL_INDEX`,
the config key that tells each repeat its index (to seed a noisy trainable)."""

from tunecore.core.search import TRIAL_INDEX, Repeater

__all__ = ["TRIAL_INDEX", "Repeater"]
