"""Develop a trial scheduler offline: drive it by hand (`PolicyDriver`),
or let Hypothesis drive it (`check_policy`, in `tunecore.testing.check`,
which needs the `testing` extra: `pip install "tunecore[testing]"`)."""

from tunecore.testing.driver import PolicyDriver, RejectedCallError

__all__ = ["PolicyDriver", "RejectedCallError"]
