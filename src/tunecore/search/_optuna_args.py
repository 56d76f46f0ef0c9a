"""Checks of `OptunaSearch`'s arguments that are not a space or a sampler.

Each returns the argument as the searcher keeps it (plain JSON) or raises
an `InvalidFieldError` naming the argument, the value and what it takes,
before any study exists: a bad `mode`, point or reward is the user's
mistake at construction, not a failure at the first suggestion.
"""

from __future__ import annotations

from typing import Any

from tunecore.core.search.domains import plain_json
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.model.numbers import is_number


def check_modes(mode: object) -> None:
    """'min' or 'max', or a list of them (one per metric)."""
    for index, each in enumerate(mode if isinstance(mode, list) else [mode]):
        if each is not None and each not in ("min", "max"):
            where = f"OptunaSearch.mode[{index}]" if isinstance(mode, list) else "OptunaSearch.mode"
            raise InvalidFieldError(where, each, "'min' or 'max'")


def checked_points(points: list[dict[str, Any]] | None) -> list[JsonDict]:
    """`points_to_evaluate` as plain JSON configs."""
    if points is None:
        return []
    checked = plain_json("OptunaSearch.points_to_evaluate", points)
    configs = [p for p in checked if isinstance(p, dict)] if isinstance(checked, list) else []
    if not isinstance(checked, list) or len(configs) != len(checked):
        raise InvalidFieldError("OptunaSearch.points_to_evaluate", points, "a list of dicts")
    return configs


def checked_rewards(rewards: list[Any] | None, points: int) -> list[JsonValue] | None:
    """`evaluated_rewards`: one reward (a number, or a list of one per
    metric) per point."""
    if rewards is None:
        return None
    checked = plain_json("OptunaSearch.evaluated_rewards", rewards)
    if not isinstance(checked, list) or len(checked) != points:
        raise InvalidFieldError(
            "OptunaSearch.evaluated_rewards",
            rewards,
            f"a list of {points} rewards, one per point of points_to_evaluate",
        )
    for index, reward in enumerate(checked):
        as_values(reward, f"OptunaSearch.evaluated_rewards[{index}]")
    return checked


def as_values(value: object, where: str) -> list[float]:
    """A reward as Optuna's values: a number, or a list of one per metric."""
    values = value if isinstance(value, list | tuple) else [value]
    numbers = [float(each) for each in values if is_number(each)]
    if not values or len(numbers) != len(values):
        raise InvalidFieldError(where, value, "a number (a list of numbers, one per metric)")
    return numbers


__all__ = ["as_values", "check_modes", "checked_points", "checked_rewards"]
