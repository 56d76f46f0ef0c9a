"""Trainables importable by path ("tests.shell.trainable.targets:..."), for
the registry tests."""

from __future__ import annotations

from collections.abc import Mapping

from tunecore.model import JsonDict
from tunecore.shell.trainable import Trainable, report


def train_fn(config: JsonDict) -> None:
    report({"value": config["x"]})


class Counter(Trainable):
    def step(self) -> Mapping[str, object]:
        return {"count": self.iteration + 1}


class Holder:
    """A trainable nested in a class: its qualname has a dot."""

    @staticmethod
    def nested(config: JsonDict) -> None:
        report({"nested": True})


not_a_trainable = 42
