"""Stoppers, under the names Ray Tune users know (`tune.stopper`).

The built-in ones are pure policies kept in the experiment state (see
`tunecore.core.stoppers`); `Stopper` is the base class for your own, and
`FunctionStopper` wraps a function `(trial_id, result) -> bool`. Both of
those run in the driver and their verdicts are logged (see
`tunecore.shell.stoppers`). Pass any of them, or a list, as
`RunConfig(stop=...)`.
"""

from tunecore.core.stoppers import (
    ExperimentPlateauStopper,
    MaximumIterationStopper,
    NoopStopper,
    TimeoutStopper,
    TrialPlateauStopper,
)
from tunecore.shell.stoppers import CombinedStopper, FunctionStopper, Stopper

__all__ = [
    "CombinedStopper",
    "ExperimentPlateauStopper",
    "FunctionStopper",
    "MaximumIterationStopper",
    "NoopStopper",
    "Stopper",
    "TimeoutStopper",
    "TrialPlateauStopper",
]
