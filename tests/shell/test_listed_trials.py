"""The callbacks' `trials` list (`shell.listed_trials`) follows whole
experiments driven by random but legal event streams (the core's own
machine, `tests.core.experiment.test_step_stateful`), told only the trials
each step changed: whenever a callback reads it, it is the view of every
current trial in creation order, one list object all along, whatever the
callbacks did to it before."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from tests.core.experiment.test_step_stateful import ExperimentMachine
from tunecore.core.experiment import ExperimentState, trial_number, trials_in_order
from tunecore.model import ExperimentEvent, TrialStatus
from tunecore.shell.listed_trials import ListedTrials, TrialList
from tunecore.shell.trial_view import TrialViews, shown_as


def check_current(listed: ListedTrials, views: TrialViews, state: ExperimentState) -> None:
    trials = listed.current(state)
    assert trials is listed.trials
    assert [view.state for view in trials] == trials_in_order(state)
    assert all(a.state is b for a, b in zip(trials, trials_in_order(state), strict=True))
    assert all(view is views.of(view.state) for view in trials if not view.is_finished())
    assert not trials.changed_by_user


class ListedMachine(ExperimentMachine):
    """The core's machine, with a list told of each step's changes and
    read at random moments, as a callback's hook reads it."""

    def feed(self, event: ExperimentEvent) -> None:
        if not hasattr(self, "listed"):
            self.views = TrialViews()
            self.listed = ListedTrials(self.views.of)
            self.first = self.listed.trials
        super().feed(event)
        self.listed.changed(self.changed)

    @rule()
    def a_callback_reads_the_list(self) -> None:
        check_current(self.listed, self.views, self.state)
        assert self.listed.trials is self.first

    @rule(
        change=st.sampled_from(["reverse", "sort", "append", "pop", "insert", "clear", "set"]),
    )
    def a_callback_changes_the_list(self, change: str) -> None:
        trials = self.listed.current(self.state)
        if change == "reverse":
            trials.reverse()
        elif change == "sort":
            trials.sort(key=lambda view: view.status)
        elif change == "append":
            trials.append(trials[0] if trials else None)  # type: ignore[arg-type]
        elif change == "pop" and trials:
            trials.pop()
        elif change == "insert":
            trials.insert(0, "not a trial")  # type: ignore[arg-type]
        elif change == "clear":
            trials.clear()
        elif change == "set" and trials:
            trials[-1] = trials[0]
        check_current(self.listed, self.views, self.state)

    @precondition(lambda self: self.state.created > 0)
    @rule(data=st.data())
    def a_hook_is_shown_a_trial_in_another_status(self, data: st.DataObject) -> None:
        number = data.draw(st.integers(0, self.state.created - 1))
        trial = trials_in_order(self.state)[number]
        view = self.views.of(trial)
        trials = self.listed.current(self.state, view)  # as the loop does for the hook
        with shown_as(view, TrialStatus.PENDING):
            assert trials[number] is view
            assert trials[number].status == "PENDING"
            assert trials is self.first
            assert trial_number(self.state.config, trials[number].trial_id) == number
        assert trials[number].status == trial.status.value
        check_current(self.listed, self.views, self.state)


ListedMachine.TestCase.settings = settings(ExperimentMachine.TestCase.settings, max_examples=60)
test_the_list_is_every_current_trial_in_creation_order = ListedMachine.TestCase


READS: dict[str, tuple[Any, ...]] = {
    "__len__": (),
    "__iter__": (),
    "__reversed__": (),
    "copy": (),
    "__contains__": (0,),
    "index": (0,),
    "count": (0,),
    "__getitem__": (slice(None),),
    "__add__": ([1],),
}
CHANGES: dict[str, tuple[Any, ...]] = {
    "append": (1,),
    "extend": ([1],),
    "insert": (0, 1),
    "pop": (),
    "remove": (0,),
    "reverse": (),
    "sort": (),
    "clear": (),
    "__setitem__": (0, 1),
    "__delitem__": (0,),
    "__iadd__": ([1],),
    "__imul__": (2,),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_trial_list_notes_every_change_a_callback_makes(change: str) -> None:
    trials: Any = TrialList()
    list.extend(trials, [0, 0])
    for read, arguments in READS.items():
        getattr(trials, read)(*arguments)
    assert sorted(trials) == [0, 0]
    assert not trials.changed_by_user
    getattr(trials, change)(*CHANGES[change])
    assert trials.changed_by_user
    assert isinstance(trials, list)
