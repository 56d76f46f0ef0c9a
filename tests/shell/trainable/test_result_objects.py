"""What leaves the worker of a result whose values JSON cannot hold: its
JSON form, and the objects reported (`result_objects`)."""

from __future__ import annotations

import argparse
import pickle
import threading
from dataclasses import dataclass

import msgspec
import pytest

from tunecore.shell.trainable.result_objects import ReportedResult
from tunecore.shell.trainable.results import ResultClock, json_result

numpy = pytest.importorskip("numpy")


@dataclass
class Settings:
    lr: float


def test_a_result_of_plain_json_stays_a_plain_dict() -> None:
    result = json_result("r", {"loss": 0.5, "tags": ["a", 1], "nested": {"b": [None, True]}})
    assert type(result) is dict


def test_the_values_json_cannot_hold_travel_as_the_objects_reported() -> None:
    args = argparse.Namespace(lr=0.1)
    array = numpy.arange(3)
    reported = {"loss": 0.5, "args": args, "array": array, "pair": (1, 2), "ok": [1, {"x": 2}]}
    result = json_result("r", reported)
    assert isinstance(result, ReportedResult)
    assert dict(result) == {
        "loss": 0.5,
        "args": "Namespace(lr=0.1)",
        "array": [0, 1, 2],
        "pair": [1, 2],
        "ok": [1, {"x": 2}],
    }
    assert result.objects == {"args": args, "array": array, "pair": (1, 2)}
    assert result.objects["array"] is array
    # What the log encodes is the JSON form, byte for byte.
    assert msgspec.msgpack.encode(result) == msgspec.msgpack.encode(dict(result))


def test_a_numpy_scalar_or_a_nested_object_counts_as_an_object() -> None:
    result = json_result("r", {"score": numpy.float64(1.5), "nested": {"t": (3,)}})
    assert isinstance(result, ReportedResult)
    assert type(result.objects["score"]) is numpy.float64
    assert result.objects["nested"] == {"t": (3,)}


def test_the_fields_the_user_sets_keep_their_objects_and_the_filled_in_ones_have_none() -> None:
    reported = {"training_iteration": numpy.int64(7), "time_this_iter_s": numpy.float64(0.5)}
    result = ResultClock().fill(json_result("r", reported), 1.0)
    assert isinstance(result, ReportedResult)
    # training_iteration and time_this_iter_s are the user's when given, as
    # in Ray (`setdefault`): their objects stay; what tunecore fills in is plain.
    assert result["training_iteration"] == 7
    assert list(result.objects) == ["training_iteration", "time_this_iter_s"]
    assert "time_total_s" in result
    assert "time_total_s" not in result.objects


def test_the_objects_cross_a_pickle() -> None:
    result = json_result("r", {"args": argparse.Namespace(lr=0.1), "settings": Settings(0.2)})
    arrived = pickle.loads(pickle.dumps(result))
    assert isinstance(arrived, ReportedResult)
    assert dict(arrived) == dict(result)
    assert arrived.objects == {"args": argparse.Namespace(lr=0.1), "settings": Settings(0.2)}


def test_an_object_that_cannot_be_pickled_arrives_as_its_json_form() -> None:
    result = json_result("r", {"lock": threading.Lock(), "args": argparse.Namespace(lr=0.1)})
    arrived = pickle.loads(pickle.dumps(result))
    assert type(arrived) is dict
    assert arrived == dict(result)
    assert arrived["lock"].startswith("<unlocked _thread.lock")
