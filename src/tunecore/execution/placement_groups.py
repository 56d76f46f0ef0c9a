"""`ray.tune.execution.placement_groups`'s name, for scripts that import it
from there (`from ray.tune.execution.placement_groups import
PlacementGroupFactory`, as Ray's docs do)."""

from tunecore.shell.trainable.placement_group import PlacementGroupFactory

__all__ = ["PlacementGroupFactory"]
