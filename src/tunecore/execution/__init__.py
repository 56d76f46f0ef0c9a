"""`ray.tune.execution`: only the module scripts import names from
(`placement_groups`, also reached as `tune.execution.placement_groups` once
`tune` is imported, as on Ray); the rest of Ray's package is its trial
runner, refused naming what to use."""

from tunecore._not_provided import not_provided_getattr
from tunecore.execution import placement_groups as placement_groups

__getattr__ = not_provided_getattr(__name__)
