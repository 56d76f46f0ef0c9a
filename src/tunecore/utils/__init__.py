"""Ray Tune's `ray.tune.utils` helpers that Ray's own examples and API
reference import, so those scripts run after only their imports are
rewritten."""

from tunecore.utils.diagnose import diagnose_serialization
from tunecore.utils.dicts import (
    deep_update,
    flatten_dict,
    merge_dicts,
    unflatten_dict,
    unflattened_lookup,
)
from tunecore.utils.gpu import wait_for_gpu
from tunecore.utils.util import date_str
from tunecore.utils.validate import validate_save_restore

__all__ = [
    "date_str",
    "deep_update",
    "diagnose_serialization",
    "flatten_dict",
    "merge_dicts",
    "unflatten_dict",
    "unflattened_lookup",
    "validate_save_restore",
    "wait_for_gpu",
]
