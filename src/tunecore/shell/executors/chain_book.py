"""Which trials are chained behind which, on the executor's side of
chained starts (`core.experiment.chains`, `Executor.start`'s `then`).

A trial's chain goes with each of its training calls until a call comes
back having run it, or the trial leaves its actor. `ChainBook` keeps the
chains and, for each chained trial, the trial it is behind, and keeps the
two in step: every way a chain ends (`take`, `cut`, `clear`) forgets its
trials' holders too, so no caller can leave a trial behind a chain that
no longer exists.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from tunecore.model import Horizon
from tunecore.shell.executors.base import ChainedStart
from tunecore.shell.executors.host import Batch, Chained


class ChainBook:
    """The chains of the trials an executor runs (see the module doc)."""

    def __init__(self) -> None:
        self._chains: dict[str, list[ChainedStart]] = {}
        self._holders: dict[str, str] = {}  # chained trial -> the trial it is behind

    def keep(self, trial_id: str, then: Sequence[ChainedStart]) -> None:
        """Chain `then` behind `trial_id` (nothing, for an empty `then`)."""
        if then:
            self._chains[trial_id] = list(then)
            self._holders.update((start.trial_id, trial_id) for start in then)

    def holder(self, chained_id: str) -> str | None:
        """The trial `chained_id` is chained behind, if any."""
        return self._holders.get(chained_id)

    def chained_behind(self, trial_id: str) -> list[str]:
        """The trials chained behind `trial_id`, in order."""
        return [start.trial_id for start in self._chains.get(trial_id, ())]

    def holds_any(self, trial_id: str, chained_ids: Collection[str]) -> bool:
        """Whether one of `chained_ids` is chained behind `trial_id`."""
        return any(self._holders.get(chained_id) == trial_id for chained_id in chained_ids)

    def as_sent(
        self, trial_id: str, batch_for: Callable[[Horizon | None], Batch]
    ) -> Chained | None:
        """The chain as `TrialHost.train_many` takes it: each trial's
        arguments (its batch from `batch_for`) with the rest of the chain
        as its `then`."""
        chained: Chained | None = None
        for start in reversed(self._chains.get(trial_id, ())):
            chained = (start.config, start.context, batch_for(start.context.until), chained)
        return chained

    def cut(self, trial_id: str, chained_id: str) -> None:
        """End `trial_id`'s chain before `chained_id` (the driver took that
        trial): it and the trials after it leave the chain."""
        chain = self._chains.get(trial_id, [])
        ids = [start.trial_id for start in chain]
        at = ids.index(chained_id)
        for dropped in ids[at:]:
            self._holders.pop(dropped, None)
        if at:
            self._chains[trial_id] = chain[:at]
        else:
            self._chains.pop(trial_id, None)

    def take(self, trial_id: str) -> list[ChainedStart]:
        """End `trial_id`'s chain: its trials, which are behind no trial now."""
        chain = self._chains.pop(trial_id, [])
        for start in chain:
            self._holders.pop(start.trial_id, None)
        return chain

    def clear(self) -> None:
        self._chains.clear()
        self._holders.clear()
