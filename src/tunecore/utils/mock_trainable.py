"""`MyTrainableClass`: the stand-in model of Ray Tune's examples
(`from ray.tune.utils.mock_trainable import MyTrainableClass`).

Its learning curve is known in advance: at step `t` it reports
`episode_reward_mean = height * tanh(t / width)`, so `width` sets how slowly
it rises and `height` where it levels off. Config keys, as in Ray: `width`
and `height` (default 1), `sleep` (seconds per step), `mock_error` (raise
from the second step on, until restored from a checkpoint) and
`persistent_error` (raise even after a restore). A checkpoint is the step
count, as JSON.
"""

from __future__ import annotations

import json
import math
import os
import time

from tunecore.model import JsonDict
from tunecore.model.numbers import is_number
from tunecore.shell.trainable import Trainable, register_trainable

MOCK_TRAINABLE_NAME = "mock_trainable"
MOCK_ERROR_KEY = "mock_error"
_CHECKPOINT_FILE = "checkpoint"


class MyTrainableClass(Trainable):
    """See the module docstring."""

    def setup(self, config: JsonDict) -> None:
        self.timestep = 0
        self.restored = False

    def step(self) -> dict[str, float]:
        config = self.config
        failing = bool(config.get(MOCK_ERROR_KEY, False))
        if failing and self.timestep > 0 and (config.get("persistent_error") or not self.restored):
            raise RuntimeError(f"Failing on purpose at step {self.timestep}")
        pause = _number(config, "sleep", 0.0)
        if pause > 0:
            time.sleep(pause)
        self.timestep += 1
        width, height = _number(config, "width", 1.0), _number(config, "height", 1.0)
        return {"episode_reward_mean": height * math.tanh(self.timestep / width)}

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        with open(os.path.join(checkpoint_dir, _CHECKPOINT_FILE), "w") as file:
            json.dump({"timestep": self.timestep}, file)

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        if not isinstance(checkpoint, str):
            raise TypeError(f"{type(self).__name__} restores from a directory, got {checkpoint!r}")
        with open(os.path.join(checkpoint, _CHECKPOINT_FILE)) as file:
            self.timestep = int(json.load(file)["timestep"])
        self.restored = True


def _number(config: JsonDict, key: str, default: float) -> float:
    """`config[key]` as a float (`default` when missing); not a number: an
    error naming the key."""
    value = config.get(key, default)
    if not is_number(value):
        raise TypeError(f"MyTrainableClass: config[{key!r}]={value!r} must be a number")
    return float(value)


def register_mock_trainable() -> None:
    """Register `MyTrainableClass` as `"mock_trainable"`."""
    register_trainable(MOCK_TRAINABLE_NAME, MyTrainableClass)
