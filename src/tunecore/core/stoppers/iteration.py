"""Ray Tune's `MaximumIterationStopper`."""

from __future__ import annotations

from typing import Self

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.model import JsonDict
from tunecore.model.errors import require_int


class MaximumIterationStopper(msgspec.Struct, frozen=True, tag=True):
    """Stops a trial at its `max_iter`-th result.

    As in Ray it counts the results it was shown, per trial, not the
    trial's `training_iteration`: a trial restored from a checkpoint keeps
    counting from where it was. `seen` holds the counts (a persistent map:
    a result copies a 256th of it, not all of it).
    """

    max_iter: int
    seen: ShardedMap[str, int] = ShardedMap()

    def __post_init__(self) -> None:
        require_int("MaximumIterationStopper.max_iter", self.max_iter, minimum=0)

    def on_result(self, trial_id: str, result: JsonDict) -> tuple[Self, bool]:
        del result
        count = (self.seen.get(trial_id) or 0) + 1
        stopper = msgspec.structs.replace(self, seen=self.seen.set(trial_id, count))
        return stopper, count >= self.max_iter

    def stop_all(self, elapsed: float) -> str | None:
        del elapsed
        return None
