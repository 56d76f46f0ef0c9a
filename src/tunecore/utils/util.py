"""`ray.tune.utils.util`: `validate_warmstart`, the documented check for
searchers of one's own (Ray's "Tune Trainable Debugging Utilities"), and
the helpers Ray's `ray.tune.utils` re-exports from here, under this path
too, since scripts import them from either."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from tunecore.utils.diagnose import diagnose_serialization
from tunecore.utils.dicts import (
    deep_update,
    flatten_dict,
    merge_dicts,
    unflatten_dict,
    unflattened_lookup,
)
from tunecore.utils.gpu import wait_for_gpu
from tunecore.utils.json_encoder import SafeFallbackEncoder, is_nan, is_nan_or_inf
from tunecore.utils.validate import validate_save_restore

__all__ = [
    "SafeFallbackEncoder",
    "date_str",
    "deep_update",
    "diagnose_serialization",
    "flatten_dict",
    "is_nan",
    "is_nan_or_inf",
    "merge_dicts",
    "unflatten_dict",
    "unflattened_lookup",
    "validate_save_restore",
    "validate_warmstart",
    "wait_for_gpu",
]


def date_str() -> str:
    """Now, local time, as Ray names dated directories: `2024-05-01_13-45-07`."""
    return datetime.datetime.today().strftime("%Y-%m-%d_%H-%M-%S")


def validate_warmstart(
    parameter_names: Sequence[str],
    points_to_evaluate: list[list[Any] | dict[str, Any]] | None,
    evaluated_rewards: list[Any] | None,
    validate_point_name_lengths: bool = True,
) -> None:
    """Check a searcher's warm start as Ray does: `points_to_evaluate` a
    list of lists or dicts, each with one value per parameter (unless
    `validate_point_name_lengths` is False), and `evaluated_rewards`, when
    given with points, a list of one reward per point. A wrong type is a
    `TypeError`, a wrong length a `ValueError`, each naming the value."""
    if points_to_evaluate:
        if not isinstance(points_to_evaluate, list):
            raise TypeError(
                f"points_to_evaluate={points_to_evaluate!r} must be a list, "
                f"not {type(points_to_evaluate).__name__}"
            )
        for point in points_to_evaluate:
            if not isinstance(point, dict | list):
                raise TypeError(
                    f"points_to_evaluate holds {point!r}: each point must be a list or a dict"
                )
            if validate_point_name_lengths and len(point) != len(parameter_names):
                raise ValueError(
                    f"points_to_evaluate holds {point!r} with {len(point)} values; "
                    f"parameter_names {list(parameter_names)!r} has {len(parameter_names)}"
                )
    if points_to_evaluate and evaluated_rewards:
        if not isinstance(evaluated_rewards, list):
            raise TypeError(
                f"evaluated_rewards={evaluated_rewards!r} must be a list, "
                f"not {type(evaluated_rewards).__name__}"
            )
        if len(evaluated_rewards) != len(points_to_evaluate):
            raise ValueError(
                f"evaluated_rewards has {len(evaluated_rewards)} values for "
                f"{len(points_to_evaluate)} points_to_evaluate: give one reward per point"
            )
