"""The checkpointed trainable the PBT and PB2 resume tests share."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tunecore


def climb(config: Mapping[str, Any], iterations: int, *, report_lr: bool = False) -> None:
    """Gains more per step the closer `lr` is to 0.3, for `iterations`
    steps; the step and the score live in its checkpoint, so a restore
    continues exactly. `report_lr`: each result holds `lr` too."""
    step, score = 0, 0.0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            step_text, score_text = Path(directory, "state").read_text().split()
            step, score = int(step_text), float(score_text)
    for step in range(step + 1, iterations + 1):  # noqa: B020 - continues from the checkpoint
        score += 1.0 - abs(config["lr"] - 0.3)
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state").write_text(f"{step} {score!r}")
            saved = tunecore.Checkpoint.from_directory(directory)
            metrics = {"score": score, "lr": config["lr"]} if report_lr else {"score": score}
            tunecore.report(metrics, checkpoint=saved)
