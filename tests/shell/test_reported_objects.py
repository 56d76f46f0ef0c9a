"""The driver keeps the objects of each trial's latest result and shows
them where the recorded result is still that result (`reported_objects`)."""

from __future__ import annotations

import argparse
from typing import Any

from tunecore.model import JsonDict
from tunecore.shell.reported_objects import ObjectsByTrial, split
from tunecore.shell.trainable.result_objects import ReportedResult

ARGS = argparse.Namespace(lr=0.1)


def _arrived(iteration: int) -> ReportedResult:
    plain: JsonDict = {"training_iteration": iteration, "args": str(ARGS), "pair": [1, 2]}
    plain["loss"] = 0.5
    return ReportedResult(plain, {"args": ARGS, "pair": (1, 2)})


def test_a_result_with_objects_splits_into_a_plain_dict_and_its_objects() -> None:
    plain, objects = split(_arrived(1))
    assert type(plain) is dict
    assert plain == {"training_iteration": 1, "args": str(ARGS), "pair": [1, 2], "loss": 0.5}
    assert objects is not None
    shown: dict[str, Any] = objects.merged(plain)
    assert shown == {"training_iteration": 1, "args": ARGS, "pair": (1, 2), "loss": 0.5}
    assert shown["args"] is ARGS
    assert plain["args"] == str(ARGS)  # the recorded result is not changed


def test_objects_show_only_on_their_own_result() -> None:
    _, objects = split(_arrived(1))
    assert objects is not None
    later: JsonDict = {"training_iteration": 2, "args": str(ARGS), "pair": [1, 2]}
    assert objects.merged(later) is later
    # Same iteration, but a value recorded otherwise (a restored checkpoint's result).
    other: JsonDict = {
        "training_iteration": 1,
        "args": "Namespace(lr=0.5)",
        "pair": [1, 2],
        "done": True,
    }
    assert objects.merged(other) == {**other, "pair": (1, 2)}


def test_each_trial_keeps_the_objects_of_its_latest_result() -> None:
    kept = ObjectsByTrial()
    _, first = split(_arrived(1))
    assert first is not None
    kept.record("a", first)
    kept.forget("b")
    assert kept.of("a") is first
    assert kept.of("b") is None
    assert len(kept) == 1
    kept.forget("a")  # a later result without objects
    assert kept.of("a") is None
    assert len(kept) == 0
