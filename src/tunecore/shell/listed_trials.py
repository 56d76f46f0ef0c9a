"""The callbacks' `trials`: one list of every trial's view, in creation
order, kept up to date by the trials each step changed.

Ray Tune's controller hands its own `_trials` list to every hook, so a
callback that keeps the list sees the trials made after. tunecore keeps one
list too, of read-only views (`trial_view`: one per trial state), and
brings it up to date before a hook that may read it by writing a new view
only where a trial changed: the core names the trials each step created or
changed (`step_with_changes`), the loop hands them to `changed`, and
`current` writes those and appends the new ones. So an update costs
O(trials changed since the last one), never O(trials): a callback reading
`len(trials)` on every result costs what one that never reads it does.

A callback may change the list it is given (Ray's is the controller's own,
so there a change would change the controller's order). The list notes any
change through its methods (`TrialList`), and the next update builds it
anew, in creation order: the views are never written into positions the
callback moved.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any

from tunecore.core.experiment import ExperimentState, trial_id_of, trial_number, trials_in_order
from tunecore.model import TrialState
from tunecore.shell.trial_view import Trial

ViewOf = Callable[[TrialState], Trial]


class TrialList(list[Trial]):
    """A plain list for the callbacks (`isinstance(trials, list)`, every
    list operation), which notes in `changed_by_user` that one of its
    changing methods was called: the loop writes through `list`'s own."""

    __slots__ = ("changed_by_user",)

    def __init__(self) -> None:
        super().__init__()
        self.changed_by_user = False


def _noting(change: Callable[..., Any]) -> Callable[..., Any]:
    def noted(self: TrialList, /, *args: Any, **kwargs: Any) -> Any:
        self.changed_by_user = True
        return change(self, *args, **kwargs)

    noted.__name__ = noted.__qualname__ = change.__name__
    noted.__doc__ = change.__doc__
    return noted


for _change in (
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "reverse",
    "sort",
    "clear",
):
    setattr(TrialList, _change, _noting(getattr(list, _change)))


class ListedTrials:
    """The list (`trials`) and what it lacks: the trials changed since its
    last update. `view` makes a trial's view (once per state, `TrialViews`)."""

    def __init__(self, view: ViewOf) -> None:
        self._view = view
        self.trials = TrialList()
        self._filled = False
        self._stale: set[str] = set()

    def changed(self, trial_ids: Set[str]) -> None:
        """A step created or changed these trials. Before the list is first
        filled nothing is kept: the fill reads every trial."""
        if self._filled:
            self._stale |= trial_ids

    def current(self, state: ExperimentState, shown: Trial | None = None) -> TrialList:
        """The list brought up to date with `state`: every trial's view in
        creation order, `state` being the state after the steps whose
        changes `changed` was told of. `shown`, the view a hook is given
        of a trial of `state`, stands in that trial's place: a finished
        trial's view is made anew at each read, and the hook must find in
        `trials` the one it is given (`trial_view.shown_as` shows it in the
        status Ray shows)."""
        trials = self._updated(state)
        if shown is not None:
            number = trial_number(state.config, shown.state.trial_id)
            if trials[number].state is shown.state:
                list.__setitem__(trials, number, shown)
        return trials

    def _updated(self, state: ExperimentState) -> TrialList:
        """`current` but for `shown`: O(trials changed since the last
        update), O(trials) after a callback changed the list."""
        trials = self.trials
        if not self._filled or trials.changed_by_user:
            list.__setitem__(trials, slice(None), [self._view(t) for t in trials_in_order(state)])
            trials.changed_by_user = False
            self._filled = True
            self._stale.clear()
            return trials
        config, states, listed = state.config, state.trials, len(trials)
        for trial_id in self._stale:
            number = trial_number(config, trial_id)
            if number < listed:  # else appended below
                list.__setitem__(trials, number, self._view(states[trial_id]))
        self._stale.clear()
        if listed < state.created:
            new = range(listed, state.created)
            list.extend(trials, [self._view(states[trial_id_of(config, n)]) for n in new])
        return trials
