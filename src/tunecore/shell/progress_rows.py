"""The trials of a progress status in the order they are shown, kept up to
date as the experiment runs, so that a redraw costs the rows it shows and
the trials that changed since the last one, not every trial ever created.

A finished trial (TERMINATED or ERROR) stays finished for the rest of a run
(`core.lifecycle`), and so do its tag and its last result. `TrialRows` keeps
those trials sorted by their tag's natural order (`natural_key`, then
creation order) and the best of them by the metric; each `update` looks at
the trials created since the last one and at the ones that were not
finished then, and no further. Trial ids are given in creation order
(`trial_id_of`), so the new ones are known from the count of trials.

The one move out of a finished status, an ERROR trial restarted by a
resume, shows as a count that no longer adds up (the state's finished
count against the trials kept here): the rows are then rebuilt from the
whole state, which is what a fresh `TrialRows.of` costs.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from tunecore.core.experiment import ExperimentState, trial_id_of
from tunecore.core.results import flatten
from tunecore.model import Mode, TrialState, TrialStatus
from tunecore.model.numbers import is_number

_DIGITS = re.compile(r"([0-9]+)")
_FINISHED = (TrialStatus.ERROR, TrialStatus.TERMINATED)

_INSERTED_ONE_BY_ONE = 64
"""Up to this many trials ended since the last update are each inserted in
place; more are appended and sorted at once."""

NaturalKey = tuple[tuple[int, str], ...]


def natural_key(tag: str) -> NaturalKey:
    """Sort key reading digit runs as numbers ("10_x" after "9_x"),
    case-insensitive elsewhere. `re.split` with a group alternates text and
    digits, so parts are tagged by position and never compare str with int.
    (Lowered whole first: no character lowers to or from an ASCII digit.
    The text and the digit parts are made apart, then interleaved: a
    status line sorts every one of 100,000 trials by this.)"""
    parts = _DIGITS.split(tag.lower())
    key: list[tuple[int, str]] = [(-1, "")] * len(parts)
    key[0::2] = [(-1, text) for text in parts[0::2]]
    key[1::2] = [(int(digits), "") for digits in parts[1::2]]
    return tuple(key)


def metric_value(trial: TrialState, metric: str) -> float | None:
    """The trial's last finite value of `metric`, or None."""
    stats = trial.metric_stats(metric)
    if stats is not None and math.isfinite(stats.last):
        return stats.last
    value = flatten(trial.last_result).get(metric)
    if is_number(value) and math.isfinite(float(value)):
        return float(value)
    return None


def by_status(trials: Iterable[TrialState]) -> dict[TrialStatus, list[TrialState]]:
    """The trials grouped by status (statuses in name order), each group in
    natural order of the tags; sorted() is stable, so the order the trials
    come in (creation order) breaks ties between equal tags."""
    groups: dict[TrialStatus, list[TrialState]] = {}
    for trial in trials:
        groups.setdefault(trial.status, []).append(trial)
    return {
        status: sorted(groups[status], key=lambda t: natural_key(t.spec.experiment_tag))
        for status in sorted(groups, key=lambda s: s.value)
    }


Ranked = tuple[float, int, str]
"""(the value to minimise, the creation number, the trial id): the best
trial is the least, the earliest created winning a tie."""


def ranked(trial: TrialState, number: int, metric: str, mode: Mode) -> Ranked | None:
    """Where trial number `number` ranks by its last `metric` (None without
    a finite value): the least ranked is the best."""
    value = metric_value(trial, metric)
    if value is None:
        return None
    return (-value if mode is Mode.MAX else value, number, trial.trial_id)


class _Looked(Sequence[TrialState]):
    """Trial ids in shown order, read as the trials of a state: slicing
    looks up only the trials it returns."""

    def __init__(self, keys: list[tuple[NaturalKey, int, str]], state: ExperimentState) -> None:
        self._keys = keys
        self._trials = state.trials

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, position: int) -> TrialState: ...

    @overload
    def __getitem__(self, position: slice) -> list[TrialState]: ...

    def __getitem__(self, position: int | slice) -> TrialState | list[TrialState]:
        if isinstance(position, slice):
            return [self._trials[key[2]] for key in self._keys[position]]
        return self._trials[self._keys[position][2]]

    def __iter__(self) -> Iterator[TrialState]:
        trials = self._trials
        return (trials[key[2]] for key in self._keys)


class TrialRows:
    """The trials of the states it is `update`d with, per status in shown
    order, and the best by `metric` and `mode`; see the module docstring."""

    def __init__(self, metric: str | None, mode: Mode | None) -> None:
        self._metric = metric
        self._mode = mode
        self._state: ExperimentState | None = None
        self._reset()

    @classmethod
    def of(cls, state: ExperimentState, metric: str | None, mode: Mode | None) -> TrialRows:
        rows = cls(metric, mode)
        rows.update(state)
        return rows

    def _reset(self) -> None:
        self._created = 0
        self._finished: dict[TrialStatus, list[tuple[NaturalKey, int, str]]] = {
            status: [] for status in _FINISHED
        }
        self._unfinished: dict[str, int] = {}  # id -> creation number
        self._best_finished: Ranked | None = None

    def update(self, state: ExperimentState) -> None:
        """Catch up with `state`, a later state of the same run (any other
        state is read whole)."""
        last = self._state
        if last is None or last.config is not state.config or state.created < self._created:
            self._reset()
        self._state = state
        trials = state.trials
        for number in range(self._created, state.created):
            self._unfinished[trial_id_of(state.config, number)] = number
        self._created = state.created
        ended = [
            (trial_id, number)
            for trial_id, number in self._unfinished.items()
            if trials[trial_id].status.is_finished
        ]
        for trial_id, _ in ended:
            del self._unfinished[trial_id]
        if ended:  # a dict keeps the slots of deleted keys: walking it would cost them
            self._unfinished = dict(self._unfinished)
        self._finish([(trials[trial_id], number) for trial_id, number in ended])
        if sum(map(len, self._finished.values())) != state.finished:
            self._state = None  # a finished trial left its status: read the whole state
            self.update(state)

    def _finish(self, ended: list[tuple[TrialState, int]]) -> None:
        """Keep the trials that `ended`: each put in its place, or, many at
        once (a whole state read), appended and sorted (timsort merges the
        sorted rows kept and the new run instead of moving the rows once
        per trial)."""
        many = len(ended) > _INSERTED_ONE_BY_ONE
        for trial, number in ended:
            key = (natural_key(trial.spec.experiment_tag), number, trial.trial_id)
            rows = self._finished[trial.status]
            if many:
                rows.append(key)
            else:
                bisect.insort(rows, key)
            rank = self._rank(trial, number)
            if rank is not None and (self._best_finished is None or rank < self._best_finished):
                self._best_finished = rank
        if many:
            for rows in self._finished.values():
                rows.sort()

    def _rank(self, trial: TrialState, number: int) -> Ranked | None:
        if self._metric is None or self._mode is None:
            return None
        return ranked(trial, number, self._metric, self._mode)

    @property
    def state(self) -> ExperimentState | None:
        """The state last `update`d with."""
        return self._state

    def _state_now(self) -> ExperimentState:
        if self._state is None:
            raise RuntimeError("TrialRows: update() with a state first")
        return self._state

    def groups(self) -> dict[TrialStatus, Sequence[TrialState]]:
        """Per status (in name order) its trials in shown order: the
        unfinished ones sorted now, the finished ones as kept."""
        state = self._state_now()
        live = by_status(state.trials[trial_id] for trial_id in self._unfinished)
        groups: dict[TrialStatus, Sequence[TrialState]] = dict(live)
        for status, keys in self._finished.items():
            if keys:
                groups[status] = _Looked(keys, state)
        return {status: groups[status] for status in sorted(groups, key=lambda s: s.value)}

    def counts(self) -> dict[TrialStatus, int]:
        """How many trials have each status (only the statuses some have)."""
        state = self._state_now()
        counts = {status: len(keys) for status, keys in self._finished.items() if keys}
        for trial_id in self._unfinished:
            status = state.trials[trial_id].status
            counts[status] = counts.get(status, 0) + 1
        return counts

    def best(self) -> TrialState | None:
        """The trial whose last `metric` is best (`progress.best_trial`)."""
        state = self._state_now()
        best = self._best_finished
        for trial_id, number in self._unfinished.items():
            rank = self._rank(state.trials[trial_id], number)
            if rank is not None and (best is None or rank < best):
                best = rank
        return None if best is None else state.trials[best[2]]
