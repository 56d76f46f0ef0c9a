"""`ray.tune.schedulers.resource_changing_scheduler`'s names, for scripts
that import them from there."""

from tunecore.core.schedulers.distribute import DistributeResources, DistributeResourcesToTopJob
from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler

__all__ = ["DistributeResources", "DistributeResourcesToTopJob", "ResourceChangingScheduler"]
