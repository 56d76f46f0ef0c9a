"""`ray.tune.schedulers.resource_changing_scheduler`'s names, for scripts
that import them from there."""

from tunecore._not_provided import not_provided_getattr
from tunecore.core.schedulers.distribute import DistributeResources, DistributeResourcesToTopJob
from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler
from tunecore.shell.trainable.placement_group import PlacementGroupFactory

__all__ = [
    "DistributeResources",
    "DistributeResourcesToTopJob",
    "PlacementGroupFactory",
    "ResourceChangingScheduler",
]

__getattr__ = not_provided_getattr(__name__)
