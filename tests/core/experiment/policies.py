"""Small policies for driving the experiment step in tests.

They are real implementations of the protocols (frozen structs returning
new instances), just simple enough that a test can say exactly what they
will do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Self

import msgspec

from tunecore.core.schedulers.base import CONTINUE, Fits, Verdict, first_fitting
from tunecore.core.search.base import Suggestion
from tunecore.model import JsonDict, Mode, TrialState


class ListSearcher(msgspec.Struct, frozen=True, tag=True):
    """Suggests the given configs in order, and records what it was told."""

    configs: tuple[JsonDict, ...]
    handed_out: int = 0
    results: tuple[str, ...] = ()
    completed: tuple[tuple[str, bool, bool], ...] = ()  # (trial id, had result, error)

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        return self

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        if self.handed_out >= len(self.configs):
            return self, None
        config = self.configs[self.handed_out]
        moved = msgspec.structs.replace(self, handed_out=self.handed_out + 1)
        return moved, Suggestion(config=config, evaluated_params=config)

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self:
        return msgspec.structs.replace(self, results=(*self.results, trial_id))

    def on_trial_complete(self, trial_id: str, result: JsonDict | None, *, error: bool) -> Self:
        entry = (trial_id, result is not None, error)
        return msgspec.structs.replace(self, completed=(*self.completed, entry))

    @property
    def is_finished(self) -> bool:
        return self.handed_out >= len(self.configs)


class ScriptedScheduler(msgspec.Struct, frozen=True, tag=True):
    """Returns `verdicts[trial_id][n]` for the n-th result of a trial
    (CONTINUE past the script), records every hook call, and resumes paused
    trials only when `resume_paused` is set."""

    verdicts: dict[str, list[Verdict]] = {}
    resume_paused: bool = True
    seen: dict[str, int] = {}
    calls: tuple[str, ...] = ()

    def _called(self, call: str) -> Self:
        return msgspec.structs.replace(self, calls=(*self.calls, call))

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        return self

    def on_trial_add(self, trial: TrialState) -> Self:
        return self._called(f"add {trial.trial_id}")

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        count = self.seen.get(trial.trial_id, 0)
        script = self.verdicts.get(trial.trial_id, [])
        verdict = script[count] if count < len(script) else CONTINUE
        seen = {**self.seen, trial.trial_id: count + 1}
        updated = msgspec.structs.replace(self, seen=seen)._called(f"result {trial.trial_id}")
        return updated, verdict

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        return self._called(f"complete {trial.trial_id}")

    def on_trial_error(self, trial: TrialState) -> Self:
        return self._called(f"error {trial.trial_id}")

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self._called(f"remove {trial.trial_id}")

    def trials_to_stop(self) -> tuple[str, ...]:
        """Stops only the trial that reports."""
        return ()

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        return first_fitting(pending, paused if self.resume_paused else (), fits)

    def debug_string(self) -> str:
        return "scripted"
