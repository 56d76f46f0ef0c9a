"""Trial schedulers, under the names Ray Tune users know.

Each is a pure policy (a frozen struct whose hooks return a new one); see
`tunecore.core.schedulers` for the protocol they share. `TrialScheduler`
and `FIFOScheduler` are Ray's classes too, to subclass in Ray's style
(`tunecore.shell.ray_schedulers`); `FIFOScheduler()` is the pure FIFO
policy, and type checkers see that class under the name. The submodules
(`tunecore.schedulers.hb_bohb`, `.async_hyperband`, `.hyperband`,
`.median_stopping_rule`, `.pbt`, `.pb2`, `.resource_changing_scheduler`,
`.trial_scheduler`) hold the same names
where Ray Tune's scripts import them from (`ray.tune.schedulers.hb_bohb`).
"""

from typing import TYPE_CHECKING

from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.asha_promotion import ASHAPromotionScheduler
from tunecore.core.schedulers.hb_bohb import HyperBandForBOHB
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.core.schedulers.median import MedianStoppingRule
from tunecore.core.schedulers.pb2 import PB2
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler
from tunecore.schedulers.async_hyperband import AsyncHyperBandScheduler
from tunecore.schedulers.create import create_scheduler
from tunecore.schedulers.pbt_replay import PopulationBasedTrainingReplay
from tunecore.shell.ray_schedulers import TrialScheduler

if TYPE_CHECKING:  # what `FIFOScheduler()` builds
    from tunecore.core.schedulers.fifo import FIFOScheduler
else:  # Ray's class too, to subclass in Ray's style
    from tunecore.shell.ray_schedulers import FIFOScheduler


def _pb2_importer() -> type[PB2]:
    """PB2, through a function as in Ray's table (Ray imports it lazily)."""
    return PB2


SCHEDULER_IMPORT: dict[str, object] = {
    "fifo": FIFOScheduler,
    "async_hyperband": AsyncHyperBandScheduler,
    "asynchyperband": AsyncHyperBandScheduler,
    "median_stopping_rule": MedianStoppingRule,
    "medianstopping": MedianStoppingRule,
    "hyperband": HyperBandScheduler,
    "hb_bohb": HyperBandForBOHB,
    "pbt": PopulationBasedTraining,
    "pbt_replay": PopulationBasedTrainingReplay,
    "pb2": _pb2_importer,
    "resource_changing": ResourceChangingScheduler,
}
"""Ray Tune's table behind `create_scheduler`, as Ray 2.60 writes it: each
name to the scheduler class, but PB2's to a function returning it.
Libraries built on Ray Tune register the schedulers through it (siatune's
`build_scheduler` keeps the values that are classes)."""

__all__ = [
    "PB2",
    "SCHEDULER_IMPORT",
    "ASHAPromotionScheduler",
    "ASHAScheduler",
    "AsyncHyperBandScheduler",
    "FIFOScheduler",
    "HyperBandForBOHB",
    "HyperBandScheduler",
    "MedianStoppingRule",
    "PopulationBasedTraining",
    "PopulationBasedTrainingReplay",
    "ResourceChangingScheduler",
    "TrialScheduler",
    "create_scheduler",
]
