"""Ray Tune's `create_scheduler`: a scheduler chosen by name, as from a
command-line option (`tune.create_scheduler("asha", metric=..., mode=...)`)."""

from __future__ import annotations

from typing import Any

from tunecore._by_name import create_by_name

SCHEDULERS = {
    "fifo": "tunecore.core.schedulers.fifo:FIFOScheduler",
    "async_hyperband": "tunecore.schedulers.async_hyperband:AsyncHyperBandScheduler",
    "asynchyperband": "tunecore.schedulers.async_hyperband:AsyncHyperBandScheduler",
    "median_stopping_rule": "tunecore.core.schedulers.median:MedianStoppingRule",
    "medianstopping": "tunecore.core.schedulers.median:MedianStoppingRule",
    "hyperband": "tunecore.core.schedulers.hyperband:HyperBandScheduler",
    "hb_bohb": "tunecore.core.schedulers.hb_bohb:HyperBandForBOHB",
    "pbt": "tunecore.core.schedulers.pbt:PopulationBasedTraining",
    "pb2": "tunecore.core.schedulers.pb2:PB2",
    "pbt_replay": "tunecore.schedulers.pbt_replay:PopulationBasedTrainingReplay",
}
"""Ray Tune's names for its schedulers, each by import path."""


def create_scheduler(scheduler: str, **kwargs: Any) -> Any:
    """The scheduler named `scheduler` (any case), built with those of
    `kwargs` its class takes; the rest are dropped, as in Ray Tune. An
    unknown name is a `ValueError` listing the known ones."""
    return create_by_name(
        "create_scheduler: scheduler",
        SCHEDULERS,
        scheduler,
        kwargs,
        "Ray Tune's resource_changing is not built in tunecore",
    )
