"""What the policies wait for from the shell, as commands.

A searcher or scheduler in the core is data: where it needs the user's
code (a `sample_from` in the param space, PBT's mutation functions, a
searcher object's `suggest`), it holds the place and says what it waits
for (`ValuesWanted`, `AskWanted`). `step` turns a wait into a command at
the end of the step that began it (`after_step`), after the step's other
commands (before `ExperimentDone`, which stays last); the shell answers
with an event (`ValuesDrawn`, `Asked`), which it feeds before the answers
to the step's other commands. A shell taking
over a state (a fresh run, a resume) starts from `outstanding`, the
waits no command has asked yet in this process.

When a policy is asked again. `DrawValues`: whenever the policy changed
(policies are immutable: a new object) and waits; an answer is fed next,
so a changed policy that still waits had no answer it could take (PBT's
functions are missing after a restore) and is asked again. `AskSearcher`:
once per ask key, and never while the experiment stops; a resume lifts
the stop and asks again. `AskScheduler`: after every step that leaves a
scheduler object of the user's owed notes or a pick (`ImperativeScheduler`).
"""

from __future__ import annotations

from typing import Literal

from tunecore.core.experiment.state import ExperimentState
from tunecore.core.schedulers.imperative import ImperativeScheduler, choice_wanted
from tunecore.core.search.base import AskWanted, ValuesWanted, ask_wanted_by, wants_values
from tunecore.model import AskScheduler, AskSearcher, Command, DrawValues


def after_step(before: ExperimentState, after: ExperimentState) -> list[Command]:
    """The requests the step from `before` to `after` began. An ask can
    begin only where the searcher or the stop changed: most results leave
    both as they were, and cost two identity tests."""
    requests: list[Command] = []
    searcher_changed = after.searcher is not before.searcher
    if searcher_changed:
        _draw("searcher", after.searcher, requests)
    if after.scheduler is not before.scheduler:
        _draw("scheduler", after.scheduler, requests)
    if after.stopping is None and (searcher_changed or before.stopping is not None):
        wanted = ask_wanted_by(after.searcher)
        if wanted is not None:
            asked = None if before.stopping is not None else ask_wanted_by(before.searcher)
            if asked is None or asked.key != wanted.key:
                requests.append(_ask(wanted))
    if type(after.scheduler) is ImperativeScheduler:
        _ask_scheduler(after, requests)
    return requests


def outstanding(state: ExperimentState) -> list[Command]:
    """Every request `state` waits on, for a shell that takes it over."""
    requests: list[Command] = []
    _draw("searcher", state.searcher, requests)
    _draw("scheduler", state.scheduler, requests)
    wanted = ask_wanted_by(state.searcher)
    if wanted is not None and state.stopping is None:
        requests.append(_ask(wanted))
    _ask_scheduler(state, requests)
    return requests


def _ask_scheduler(state: ExperimentState, requests: list[Command]) -> None:
    """An `AskScheduler` when a scheduler object of the user's is owed
    notes or, while trials wait and the experiment goes on, a fresh pick
    (`ImperativeScheduler`). Asked after every step that leaves it so:
    its answer is the next event fed, which clears both."""
    scheduler = state.scheduler
    if not isinstance(scheduler, ImperativeScheduler):
        return
    waiting = state.stopping is None and bool(state.pending or state.paused)
    choose = choice_wanted(scheduler, waiting)
    if scheduler.untold or choose:
        requests.append(AskScheduler(told=len(scheduler.untold), choose=choose))


def _draw(owner: Literal["searcher", "scheduler"], policy: object, requests: list[Command]) -> None:
    """A `DrawValues` for what `policy` waits for, if anything."""
    wanted: ValuesWanted | None = policy.wanted() if wants_values(policy) else None
    if wanted is not None:
        requests.append(
            DrawValues(owner=owner, key=wanted.key, paths=wanted.paths, config=wanted.config)
        )


def _ask(wanted: AskWanted) -> AskSearcher:
    return AskSearcher(key=wanted.key, trial_id=wanted.trial_id, told=wanted.told)
