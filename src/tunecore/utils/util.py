"""`ray.tune.utils.util`'s documented helper for searchers of one's own:
`validate_warmstart` (Ray's "Tune Trainable Debugging Utilities")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
