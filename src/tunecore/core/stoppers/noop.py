"""Ray Tune's `NoopStopper`: never stops anything."""

from __future__ import annotations

from typing import Self

import msgspec

from tunecore.model import JsonDict


class NoopStopper(msgspec.Struct, frozen=True, tag=True):
    """Stops no trial and never the experiment."""

    def on_result(self, trial_id: str, result: JsonDict) -> tuple[Self, bool]:
        del trial_id, result
        return self, False

    def stop_all(self, elapsed: float) -> str | None:
        del elapsed
        return None
