"""Exporting a trained model at the end of a trial (`export_formats`)."""

from __future__ import annotations

import os
from typing import Protocol

from tunecore.model import ExportFormat


class _Saves(Protocol):
    def save(self, checkpoint_dir: str) -> str: ...


def export_checkpoint(trainable: _Saves, formats: list[str], export_dir: str) -> dict[str, str]:
    """The `checkpoint` format, which every trainable supports: a checkpoint
    saved into `export_dir/checkpoint`."""
    if ExportFormat.CHECKPOINT not in formats:
        return {}
    target = os.path.join(export_dir, ExportFormat.CHECKPOINT.value)
    os.makedirs(target, exist_ok=True)
    return {ExportFormat.CHECKPOINT.value: trainable.save(target)}
