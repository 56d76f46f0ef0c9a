"""The toy problem of Ray Tune's PBT examples, as a function trainable.

Accuracy grows each step by an amount that is largest when the learning
rate `config["lr"]` is close to an optimal rate, and the optimal rate
itself moves with the accuracy: it rises from 0.001 to 0.01 while accuracy
goes from 0 to 100, then falls back to 0.001 at 200 (a triangle). A fixed
lr therefore stalls; only a schedule of lrs, which PBT or PB2 discovers by
copying and perturbing the best trials, reaches `done` (accuracy above 200).

Ray's `pbt_function` reports `mean_accuracy`, `cur_lr`, `optimal_lr`,
`q_err` and `done`, and saves `{"acc", "step"}` in checkpoint.json every
`config.get("checkpoint_interval", 1)` steps, resuming from it; this one
does the same, so `from ray.tune.examples.pbt_function import pbt_function`
rewritten to `tunecore.examples.pbt_function` runs a script unchanged.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from typing import Any

import numpy as np

from tunecore.shell.trainable import Checkpoint, get_checkpoint, report

__all__ = ["pbt_function"]

_PEAK_AT = 100.0  # accuracy where the optimal lr stops rising and starts falling
_LOW_LR, _HIGH_LR = 0.001, 0.01
_TOLERANCE = 3.0  # an lr more than this factor off the optimum makes no progress
_NOISE = 2.0  # standard deviation of the noise added to each step's accuracy


def optimal_lr(accuracy: float) -> float:
    """The triangle: the lr that makes the most progress at `accuracy`."""
    if accuracy < _PEAK_AT:
        rate = _HIGH_LR * accuracy / _PEAK_AT
    else:
        rate = _HIGH_LR - _HIGH_LR * (accuracy - _PEAK_AT) / _PEAK_AT
    return min(_HIGH_LR, max(_LOW_LR, rate))


def pbt_function(config: dict[str, Any]) -> None:
    """Train the toy model with `config["lr"]` until stopped (`done` turns
    True once accuracy exceeds 200); checkpoint every
    `config.get("checkpoint_interval", 1)` steps."""
    lr = float(config["lr"])
    interval = int(config.get("checkpoint_interval", 1))
    accuracy = 0.0
    step = 1  # steps count from 1, so checkpoints fall on training_iteration multiples
    checkpoint = get_checkpoint()
    if checkpoint is not None:
        with (
            checkpoint.as_directory() as directory,
            open(os.path.join(directory, "checkpoint.json"), encoding="utf-8") as file,
        ):
            saved = json.load(file)
        accuracy = float(saved["acc"])
        step = int(saved["step"]) + 1

    while True:
        best = optimal_lr(accuracy)
        q_err = max(lr, best) / min(lr, best)
        if q_err < _TOLERANCE:
            accuracy += random.random() / q_err
        elif lr > best:
            accuracy -= (q_err - _TOLERANCE) * random.random()
        accuracy = max(0.0, accuracy + _NOISE * float(np.random.normal()))
        metrics = {
            "mean_accuracy": accuracy,
            "cur_lr": lr,
            "optimal_lr": best,
            "q_err": q_err,
            "done": accuracy > 2 * _PEAK_AT,
        }
        if step % interval == 0:
            with tempfile.TemporaryDirectory() as directory:
                with open(os.path.join(directory, "checkpoint.json"), "w", encoding="utf-8") as f:
                    json.dump({"acc": accuracy, "step": step}, f)
                report(metrics, checkpoint=Checkpoint.from_directory(directory))
        else:
            report(metrics)
        step += 1
