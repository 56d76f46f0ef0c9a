"""The automatic result fields and the checks on reported values."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tunecore.model import JsonDict
from tunecore.shell.trainable.checkpoint_files import CheckpointMeta
from tunecore.shell.trainable.results import ResultClock, json_result, plain_json_dict


def test_plain_json_dict_copies_deeply() -> None:
    nested: dict[str, object] = {"a": {"b": [1, (2, 3)]}}
    copied = plain_json_dict("result", nested)
    assert copied == {"a": {"b": [1, [2, 3]]}}
    inner = copied["a"]
    assert isinstance(inner, dict)
    assert isinstance(inner["b"], list)
    inner["b"].append(4)
    assert nested == {"a": {"b": [1, (2, 3)]}}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1], "result must be a dict with string keys, got list"),
        ({1: 2}, "result: the key 1 is of type int; keys are strings"),
        ({"a": {"b": {1, 2}}}, "result['a']['b'] is of type set"),
        ({"a": [object()]}, "result['a'][0] is of type object"),
    ],
)
def test_plain_json_dict_names_what_is_wrong(value: object, message: str) -> None:
    with pytest.raises(TypeError) as refused:
        plain_json_dict("result", value)
    assert message in str(refused.value)


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


class Listish:
    def __init__(self, values: list[object]) -> None:
        self.values = values

    def tolist(self) -> list[object]:
        return self.values


def test_results_are_converted_as_rays_fallback_encoder_writes_them() -> None:
    converted = json_result(
        "result",
        {
            1: "int key",
            "tuple": (1, 2.5),
            "array": Listish([[1, 2], [3, 4]]),
            "set": {3},
            "complex": 1 + 2j,
            "broken": Unprintable(),
            "nan": float("nan"),
            "nested": {"path": Path("/a/b")},
        },
    )
    nan = converted.pop("nan")
    assert isinstance(nan, float)
    assert math.isnan(nan)
    assert converted == {
        "1": "int key",
        "tuple": [1, 2.5],
        "array": [[1, 2], [3, 4]],
        "set": "{3}",
        "complex": "(1+2j)",
        "broken": "Unprintable",
        "nested": {"path": "/a/b"},
    }


def test_a_result_must_be_a_dict() -> None:
    with pytest.raises(TypeError, match="result must be a dict with string keys, got list"):
        json_result("result", [1])


def test_the_clock_counts_and_continues_after_a_restore() -> None:
    clock = ResultClock()
    first = clock.fill({"x": 1}, 0.5)
    assert first["training_iteration"] == 1
    assert (first["time_this_iter_s"], first["time_total_s"]) == (0.5, 0.5)
    assert first["done"] is False

    clock.restored(CheckpointMeta(training_iteration=10, time_total_s=20.0))
    after: JsonDict = clock.fill({"done": True}, 1.0)
    assert after["training_iteration"] == 11
    assert after["time_total_s"] == 21.0
    assert (after["iterations_since_restore"], after["time_since_restore"]) == (1, 1.0)
    assert after["done"] is True

    clock.restored(None)  # a checkpoint of unknown iteration: the totals stay
    assert clock.fill({}, 1.0)["training_iteration"] == 12


@pytest.mark.parametrize("seconds", ["1", True, float("nan")])
def test_a_bad_time_this_iter_s_is_refused(seconds: object) -> None:
    with pytest.raises(TypeError, match=r"time_this_iter_s=.* must be a finite number"):
        ResultClock().fill({"time_this_iter_s": seconds}, 1.0)  # type: ignore[dict-item]


def test_reported_increments_are_summed_into_totals_as_ray_sums_them() -> None:
    clock = ResultClock()
    plain = clock.fill({"x": 1}, 0.1)
    # Nothing reported: no totals, no timesteps_since_restore (as on Ray).
    assert not {"timesteps_total", "episodes_total", "timesteps_since_restore"} & set(plain)

    first = clock.fill({"timesteps_this_iter": 100, "episodes_this_iter": 2}, 0.1)
    second = clock.fill({"timesteps_this_iter": 50}, 0.1)
    assert (first["timesteps_total"], first["episodes_total"]) == (100, 2)
    assert (second["timesteps_total"], second["episodes_total"]) == (150, 2)
    assert second["timesteps_since_restore"] == 150
    # A total the user reports is kept; the count goes on beneath it.
    own = clock.fill({"timesteps_this_iter": 10, "timesteps_total": 7}, 0.1)
    assert own["timesteps_total"] == 7
    assert clock.fill({}, 0.1)["timesteps_total"] == 160

    meta = clock.meta()
    assert (meta.timesteps_total, meta.episodes_total) == (160, 2)
    restored = ResultClock()
    restored.restored(meta)
    after = restored.fill({"timesteps_this_iter": 5}, 0.1)
    assert (after["timesteps_total"], after["episodes_total"]) == (165, 2)
    assert after["timesteps_since_restore"] == 5


def test_a_checkpoint_without_totals_restores_none() -> None:
    clock = ResultClock()
    clock.fill({"timesteps_this_iter": 3}, 0.1)
    clock.restored(CheckpointMeta(training_iteration=4, time_total_s=1.0))
    assert "timesteps_total" not in clock.fill({}, 0.1)


@pytest.mark.parametrize("count", ["1", True, float("inf")])
def test_a_bad_increment_is_refused(count: object) -> None:
    with pytest.raises(TypeError, match=r"timesteps_this_iter=.* must be a finite number"):
        ResultClock().fill({"timesteps_this_iter": count}, 1.0)  # type: ignore[dict-item]
