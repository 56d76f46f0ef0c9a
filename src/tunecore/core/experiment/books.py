"""The experiment's bookkeeping while it changes: the waiting queues, the
running count and the resources it holds, the finished count. One table
from a trial's status to where it is counted (`Books.enter`/`leave`), used
by the step as trials change status and by a snapshot's decoding, which
counts every trial afresh."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

import immutables

from tunecore.core import resources
from tunecore.core.experiment.state import ExperimentState
from tunecore.model import TrialState, TrialStatus


class Queue:
    """A waiting queue (trial ids in creation order) during one step.

    Removals only mark ids as gone and insertions copy the ids once per step,
    so starting k trials from a queue of p costs O(p + k), not O(p * k).
    `freeze` gives the tuple the new state keeps.
    """

    def __init__(self, ids: tuple[str, ...]) -> None:
        self._frozen = ids
        self._ids: list[str] | None = None
        self._gone: set[str] = set()

    def __bool__(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        ids = self._frozen if self._ids is None else self._ids
        return len(ids) - len(self._gone)

    def ids(self) -> Iterator[str]:
        ids = self._frozen if self._ids is None else self._ids
        gone = self._gone
        return (i for i in ids if i not in gone) if gone else iter(ids)

    def remove(self, trial_id: str) -> None:
        self._gone.add(trial_id)

    def insert(self, trial_id: str, order: immutables.Map[str, int]) -> None:
        if trial_id in self._gone:
            self._gone.discard(trial_id)
            return
        if self._ids is None:
            self._ids = list(self._frozen)
        bisect.insort(self._ids, trial_id, key=order.__getitem__)

    def freeze(self) -> tuple[str, ...]:
        if self._ids is None and not self._gone:
            return self._frozen
        return tuple(self.ids())


class Books:
    """The experiment's bookkeeping during one step: queues, counters,
    resources, the end. Built on first use: a result that lets its trial
    continue never needs it."""

    __slots__ = (
        "done",
        "error",
        "index",
        "paused",
        "pending",
        "running",
        "stopping",
        "total",
        "used",
    )

    def __init__(self, state: ExperimentState) -> None:
        self.index = state.index
        self.pending = Queue(state.pending)
        self.paused = Queue(state.paused)
        self.running = state.running
        self.total = state.total
        self.used = state.used
        self.stopping = state.stopping
        self.done = False
        self.error = state.error

    @classmethod
    def of(cls, state: ExperimentState, trials: Sequence[TrialState]) -> Books:
        """The books of `trials` (in creation order) counted from scratch,
        on `state`'s settings (a state decoded from a snapshot)."""
        books = cls(state)
        books.index = immutables.Map(
            (trial.spec.trial_id, number) for number, trial in enumerate(trials)
        )
        for trial in trials:
            books.enter(trial)
        return books

    def counts(self) -> dict[str, object]:
        """The state's fields these books keep count in, for
        `msgspec.structs.replace(state, **books.counts())`."""
        return {
            "index": self.index,
            "pending": self.pending.freeze(),
            "paused": self.paused.freeze(),
            "running": self.running,
            "used": self.used,
        }

    def settled(self) -> dict[str, object]:
        """Every state field these books keep, for a step's new state: the
        counts, and the cluster, the stop and the end."""
        return {
            **self.counts(),
            "total": self.total,
            "stopping": self.stopping,
            "done": self.done,
            "error": self.error,
        }

    @property
    def created(self) -> int:
        """How many trials exist (each has its place in `index`)."""
        return len(self.index)

    @property
    def finished(self) -> int:
        """How many trials ended (`ExperimentState.finished`)."""
        return self.created - len(self.pending) - len(self.paused) - self.running

    def enter(self, trial: TrialState) -> None:
        """Count `trial` where its status says: a queue, or the running
        trials and the resources they hold (an ended trial is counted by
        being in none of them: `finished`)."""
        status = trial.status
        if status is TrialStatus.PENDING:
            self.pending.insert(trial.trial_id, self.index)
        elif status is TrialStatus.PAUSED:
            self.paused.insert(trial.trial_id, self.index)
        elif status is TrialStatus.RUNNING:
            self.running += 1
            self.used = resources.add(self.used, trial.spec.resources)

    def leave(self, trial: TrialState) -> None:
        """Undo `enter` for `trial` as it was."""
        status = trial.status
        if status is TrialStatus.PENDING:
            self.pending.remove(trial.trial_id)
        elif status is TrialStatus.PAUSED:
            self.paused.remove(trial.trial_id)
        elif status is TrialStatus.RUNNING:
            self.running -= 1
            self.used = resources.subtract(self.used, trial.spec.resources)
