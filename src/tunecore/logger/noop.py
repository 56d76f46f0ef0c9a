"""`ray.tune.logger.noop`: a per-trial logger that writes nothing."""

from __future__ import annotations

from collections.abc import Mapping

from tunecore.logger.logger import Logger
from tunecore.model import JsonValue

__all__ = ["NoopLogger"]


class NoopLogger(Logger):
    """Takes every result and writes nothing (Ray's placeholder logger)."""

    def on_result(self, result: Mapping[str, JsonValue]) -> None:
        """Nothing to write."""
