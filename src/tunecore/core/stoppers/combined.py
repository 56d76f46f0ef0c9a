"""Built-in stoppers combined with OR: what Ray Tune's `CombinedStopper` of
built-in stoppers is in the core (`tunecore.shell.stoppers` splits a
combination holding a user's own stopper into this and a shell part)."""

from __future__ import annotations

from typing import Self, TypeAlias

import msgspec

from tunecore.core.stoppers.iteration import MaximumIterationStopper
from tunecore.core.stoppers.noop import NoopStopper
from tunecore.core.stoppers.plateau import ExperimentPlateauStopper, TrialPlateauStopper
from tunecore.core.stoppers.timeout import TimeoutStopper
from tunecore.model import JsonDict

SingleStopper: TypeAlias = (
    MaximumIterationStopper
    | TrialPlateauStopper
    | ExperimentPlateauStopper
    | TimeoutStopper
    | NoopStopper
)


class AnyOf(msgspec.Struct, frozen=True, tag=True):
    """Stops a trial, or the experiment, when any of `stoppers` does. As in
    Ray, the stoppers are asked in order and the first that stops a trial
    ends the round: the ones after it do not see that result."""

    stoppers: tuple[SingleStopper, ...]

    def on_result(self, trial_id: str, result: JsonDict) -> tuple[Self, bool]:
        stoppers = list(self.stoppers)
        for number, stopper in enumerate(stoppers):
            stoppers[number], stop = stopper.on_result(trial_id, result)
            if stop:
                return msgspec.structs.replace(self, stoppers=tuple(stoppers)), True
        return msgspec.structs.replace(self, stoppers=tuple(stoppers)), False

    def stop_all(self, elapsed: float) -> str | None:
        for stopper in self.stoppers:
            reason = stopper.stop_all(elapsed)
            if reason is not None:
                return reason
        return None


BuiltinStopper: TypeAlias = SingleStopper | AnyOf
"""Every stopper the core runs, and an experiment snapshot decodes."""


def combine(stoppers: tuple[BuiltinStopper, ...]) -> BuiltinStopper | None:
    """One stopper doing what all of `stoppers` do, nested combinations
    flattened; None for none."""
    flat: list[SingleStopper] = []
    for stopper in stoppers:
        flat.extend(stopper.stoppers if isinstance(stopper, AnyOf) else (stopper,))
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else AnyOf(tuple(flat))


def times_out(stopper: BuiltinStopper | None) -> bool:
    """Whether `stopper.stop_all` reads the time the experiment has run
    (a `TimeoutStopper`, alone or combined): the others answer alike at
    any time, so time passing alone never changes what they say."""
    parts = stopper.stoppers if isinstance(stopper, AnyOf) else (stopper,)
    return any(isinstance(part, TimeoutStopper) for part in parts)
