"""The protocol every searcher follows.

A searcher suggests configs for new trials and learns from their results.
Like a scheduler it is a frozen msgspec struct holding its configuration and
its progress (including an `Rng`); every hook returns a new searcher. An
external optimiser can implement the protocol as long as its state is data
(for example the list of observations it has seen plus a seed), which is
what lets an experiment resume its search exactly.
"""

from __future__ import annotations

from typing import Protocol, Self

import msgspec

from tunecore.model import JsonDict, Mode


class Suggestion(msgspec.Struct, frozen=True, kw_only=True):
    """The config for one new trial. `evaluated_params` are the '/'-joined
    paths of the values the search chose; `experiment_tag` names the trial in
    the status output (e.g. `3_lr=0.01,momentum=0.9`)."""

    config: JsonDict
    evaluated_params: JsonDict = {}
    experiment_tag: str = ""


class Searcher(Protocol):
    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Take the experiment's metric and mode where this searcher has none."""
        ...

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        """A config for the trial `trial_id`, or None when there is none right
        now (check `is_finished` to tell "later" from "never")."""
        ...

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self: ...

    def on_trial_complete(self, trial_id: str, result: JsonDict | None, *, error: bool) -> Self:
        """The trial ended: normally with its last result, early (stopped by
        a scheduler or a user: result None), or in error."""
        ...

    @property
    def is_finished(self) -> bool:
        """Nothing more will ever be suggested."""
        ...
