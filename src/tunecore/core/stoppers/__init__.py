"""Built-in stoppers (Ray Tune's `tune.stopper`) as pure policies; see
`tunecore.core.stoppers.base` for the protocol they share."""

from tunecore.core.stoppers.base import StopPolicy
from tunecore.core.stoppers.combined import (
    AnyOf,
    BuiltinStopper,
    SingleStopper,
    combine,
    times_out,
)
from tunecore.core.stoppers.iteration import MaximumIterationStopper
from tunecore.core.stoppers.noop import NoopStopper
from tunecore.core.stoppers.plateau import ExperimentPlateauStopper, TrialPlateauStopper
from tunecore.core.stoppers.timeout import TimeoutStopper

__all__ = [
    "AnyOf",
    "BuiltinStopper",
    "ExperimentPlateauStopper",
    "MaximumIterationStopper",
    "NoopStopper",
    "SingleStopper",
    "StopPolicy",
    "TimeoutStopper",
    "TrialPlateauStopper",
    "combine",
    "times_out",
]
