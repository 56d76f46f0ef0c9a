"""A trial's own stopping rule, as the seed's `Trial.should_stop`."""

from __future__ import annotations

import pytest

from tunecore.core.results import flatten
from tunecore.core.stopping import StopCriterionError, check_stop
from tunecore.model import JsonDict


def test_the_done_flag_stops_without_criteria() -> None:
    assert check_stop({}, {"done": True}) is True


def test_the_done_flag_stops_even_when_a_criterion_metric_is_missing() -> None:
    assert check_stop({"accuracy": 0.9}, {"done": True}) is True


def test_no_criteria_and_no_done_flag_continue() -> None:
    assert check_stop({}, {"done": False, "loss": 1.0}) is False
    assert check_stop({}, {}) is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.89, False), (0.9, True), (0.95, True)],
)
def test_a_criterion_stops_once_the_metric_reaches_its_threshold(
    value: float, expected: bool
) -> None:
    assert check_stop({"accuracy": 0.9}, {"accuracy": value}) is expected


def test_any_reached_criterion_stops() -> None:
    criteria = {"accuracy": 0.9, "training_iteration": 10}
    assert check_stop(criteria, {"accuracy": 0.5, "training_iteration": 10}) is True
    assert check_stop(criteria, {"accuracy": 0.5, "training_iteration": 9}) is False


def test_integer_metrics_compare_with_float_thresholds() -> None:
    assert check_stop({"training_iteration": 3.0}, {"training_iteration": 3}) is True


def test_a_missing_metric_is_an_error_naming_it_and_the_keys_present() -> None:
    verdict = check_stop({"accuracy": 0.9}, {"loss": 0.3, "training_iteration": 2})
    assert isinstance(verdict, StopCriterionError)
    assert "'accuracy'" in verdict.message
    assert "loss" in verdict.message
    assert "training_iteration" in verdict.message


def test_a_missing_metric_in_an_empty_result_is_an_error() -> None:
    verdict = check_stop({"accuracy": 0.9}, {})
    assert isinstance(verdict, StopCriterionError)
    assert "'accuracy'" in verdict.message


@pytest.mark.parametrize(
    ("criteria", "result", "expected"),
    [
        ({"done": True}, {"done": False}, False),
        ({"converged": True}, {"converged": False}, False),
        ({"converged": True}, {"converged": True}, True),
        ({"converged": False}, {"converged": False}, True),
        ({"accuracy": True}, {"accuracy": 0.5}, False),
        ({"accuracy": True}, {"accuracy": 1}, True),
        ({"accuracy": 0.5}, {"accuracy": True}, True),
        ({"accuracy": 2.0}, {"accuracy": True}, False),
    ],
    ids=repr,
)
def test_booleans_compare_as_ray_compares_them(
    criteria: dict[str, float | bool], result: JsonDict, expected: bool
) -> None:
    """Ray Tune evaluates `result[metric] >= threshold` in Python, where a
    boolean is 0 or 1."""
    assert check_stop(criteria, result) is expected


@pytest.mark.parametrize("value", ["high", None, [1.0]], ids=repr)
def test_a_non_numeric_value_is_an_error(value: object) -> None:
    result: JsonDict = {"accuracy": value}  # type: ignore[dict-item]
    verdict = check_stop({"accuracy": 0.9}, result)
    assert isinstance(verdict, StopCriterionError)
    assert "'accuracy'" in verdict.message
    assert repr(value) in verdict.message


def test_a_nested_metric_is_reached_through_its_flattened_key() -> None:
    criteria = {"validation/accuracy": 0.9}
    assert check_stop(criteria, flatten({"validation": {"accuracy": 0.95}})) is True
    assert check_stop(criteria, flatten({"validation": {"accuracy": 0.5}})) is False


def test_a_nested_metric_is_missing_from_an_unflattened_result() -> None:
    verdict = check_stop({"validation/accuracy": 0.9}, {"validation": {"accuracy": 0.95}})
    assert isinstance(verdict, StopCriterionError)
    assert "'validation/accuracy'" in verdict.message
