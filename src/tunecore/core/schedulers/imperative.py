"""The core's place for a scheduler object of the user's written against
Ray Tune's imperative API (`on_trial_result(tune_controller, trial,
result)` returning "CONTINUE", "PAUSE" or "STOP").

Such an object is code with hidden state, which the core cannot hold and a
log cannot replay, so it lives in the shell (`tunecore.shell.imperative`)
and this struct stands for it here, as `ExternalSearcher` does for a
searcher object:

- A result: the shell asks the object before the result is logged and
  puts its answer on the event (`ResultReported.decision`); the step hands
  it over (`take_decision`) just before `on_trial_result`, which returns
  it. A result the core judges without an answer in hand (the shell's
  preview) marks the trial as wanting one (`decision_wanted`) and
  continues; the shell then asks and steps the result again.
- Notifications (`on_trial_add`, `on_trial_complete`, `on_trial_error`,
  `on_trial_remove`) are kept as `untold` notes, in the order the core
  made them; the step asks the shell to tell them (`AskScheduler`, made by
  `requests.after_step`) and the logged `SchedulerAnswered` drops them.
  The answer must be the next event fed, before the answers of other
  policies to the same step: any step between asks again for the notes
  still owed, and the object would hear them twice.
- Starts: as in Ray, where every PENDING trial is started in order and
  `choose_trial_to_run` picks the trial staged first (the only way a
  PAUSED one runs again). The object's latest pick (`chosen`, logged on
  `SchedulerAnswered`) goes first when it waits and fits, then the first
  pending trial that fits. Every hook makes the pick stale (`stale`), and
  while trials wait a stale pick is asked again (`choice_wanted`); the
  experiment does not call a wait a dead end until it is answered. An
  object that keeps Ray's FIFO choice (`chooses=False`) is never asked:
  pending, then paused trials, in the order added.

Replay, `tunecore status` and a resume's walk run only this struct, whose
every input is in the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Self

import msgspec

from tunecore.core.schedulers.base import (
    CONTINUE,
    PAUSE,
    STOP,
    Fits,
    Verdict,
    evolve,
    first_fitting,
)
from tunecore.model import JsonDict, Mode, TrialState

Hook = Literal["add", "complete", "error", "remove"]

_VERDICTS: dict[str, Verdict] = {"CONTINUE": CONTINUE, "PAUSE": PAUSE, "STOP": STOP}


class Note(msgspec.Struct, frozen=True, array_like=True):
    """One notification the object is owed: `on_trial_<hook>(trial_id)`."""

    hook: Hook
    trial_id: str


class ImperativeScheduler(msgspec.Struct, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """See the module docstring. `name` is the object's class, for what the
    user reads (`debug_string`, a restore's check); `metric` the object's
    own metric (Ray's strict checking asks every result for it), None when
    it has none or takes the experiment's."""

    name: str
    chooses: bool = False
    metric: str | None = None
    decision: tuple[str, str] | None = None
    """The answer in hand for the result being judged: (trial id, verdict)."""
    wanted: str | None = None
    """The trial whose result was judged without an answer (the preview)."""
    untold: tuple[Note, ...] = ()
    chosen: str | None = None
    stale: bool = False

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """The object took the experiment's metric and mode in the shell
        (Ray's `set_search_properties`): nothing to settle here."""
        return self

    def on_trial_add(self, trial: TrialState) -> Self:
        return self._noted("add", trial.trial_id)

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        decision = self.decision
        if decision is None or decision[0] != trial.trial_id:
            return evolve(self, wanted=trial.trial_id), CONTINUE
        return evolve(self, decision=None, wanted=None, chosen=None, stale=self.chooses), _VERDICTS[
            decision[1]
        ]

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        return self._noted("complete", trial.trial_id)

    def on_trial_error(self, trial: TrialState) -> Self:
        return self._noted("error", trial.trial_id)

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self._noted("remove", trial.trial_id)

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        if not self.chooses:
            return first_fitting(pending, paused, fits)
        chosen = self.chosen
        if chosen is not None and not self.stale:
            for trial in (*pending, *paused):
                if trial.trial_id == chosen and fits(trial):
                    return chosen
        return first_fitting(pending, (), fits)

    def trials_to_stop(self) -> tuple[str, ...]:
        return ()

    def debug_string(self) -> str:
        return f"Using {self.name} (a Ray-style scheduler of your own)."

    def _noted(self, hook: Hook, trial_id: str) -> Self:
        return evolve(
            self, untold=(*self.untold, Note(hook, trial_id)), chosen=None, stale=self.chooses
        )

    def answered(self, told: int, chose: bool, chosen: str | None) -> Self | None:
        """After the shell told the first `told` notes and, when `chose`,
        asked for a pick; None when that is not what this one waits for."""
        if not 0 <= told <= len(self.untold) or (chose and not self.chooses):
            return None
        if chose:
            return evolve(self, untold=self.untold[told:], chosen=chosen, stale=False)
        return evolve(self, untold=self.untold[told:])


def take_decision(scheduler: object, trial_id: str, decision: str) -> object:
    """`scheduler` holding the logged `decision` for `trial_id`'s result,
    for its `on_trial_result`; any other scheduler as it is."""
    if type(scheduler) is not ImperativeScheduler:
        return scheduler
    return evolve(scheduler, decision=(trial_id, decision))


def decision_wanted(scheduler: object) -> str | None:
    """The trial whose result the object must judge (see the module docstring)."""
    if type(scheduler) is not ImperativeScheduler:
        return None
    return scheduler.wanted


def choice_wanted(scheduler: object, waiting: bool) -> bool:
    """Whether the object's pick is stale while trials wait (`waiting`)."""
    return type(scheduler) is ImperativeScheduler and scheduler.stale and waiting
