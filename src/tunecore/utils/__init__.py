"""Ray Tune's `ray.tune.utils` helpers that Ray's own examples import, so
those scripts run after only their imports are rewritten."""

from tunecore.utils.dicts import deep_update, flatten_dict, merge_dicts, unflatten_dict
from tunecore.utils.validate import validate_save_restore

__all__ = ["deep_update", "flatten_dict", "merge_dicts", "unflatten_dict", "validate_save_restore"]
