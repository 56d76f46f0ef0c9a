"""A scheduler object of the user's, written against Ray Tune's imperative
API, called where Ray calls it; its answers become logged events.

The core holds the object's place (`core.schedulers.imperative.
ImperativeScheduler`, whose docstring has the protocol). Here:

- `decide`: for a result the core wants judged, the object's
  `on_trial_result(tune_controller, trial, result)` is called before the
  result is logged, and its verdict goes on the event
  (`ResultReported.decision`).
- `answer`: for an `AskScheduler`, the object hears its notes in the
  core's order (`on_trial_add`, `on_trial_complete`, `on_trial_error`,
  `on_trial_remove`) and, when asked, picks a trial
  (`choose_trial_to_run(tune_controller)`); the answer is a logged
  `SchedulerAnswered`.

`tune_controller` is a `SchedulerController`: the experiment as it stands,
read-only (`get_trials()`, `get_live_trials()`, `get_trial(trial_id)`), plus
Ray's `stop_trial(trial)` and `pause_trial(trial)`, which become a
`StopRequested`/`PauseRequested` fed after the answer (for the reporting
trial inside `on_trial_result`, the verdict STOP or PAUSE). A `Trial` is
the callbacks' read-only view as the trial was when the hook was called
(Ray's is the live object): the trial being judged holds, as in Ray, the
result before this one as `last_result`.

An object that raises, or answers something that is no verdict, ends the
experiment through a `SchedulerFailed` (Ray raises out of the run): the
results recorded stay, the trials it cut short are left for a restore to
run again (as Ray leaves them), and the object is not called again.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from typing import Literal, cast

from tunecore.core.experiment import ExperimentState
from tunecore.core.results import flatten
from tunecore.core.schedulers.imperative import ImperativeScheduler, Note
from tunecore.model import (
    AskScheduler,
    ExperimentEvent,
    Mode,
    PauseRequested,
    ResultReported,
    SchedulerAnswered,
    SchedulerFailed,
    StopRequested,
    TrialState,
)
from tunecore.shell.allocations import ControllerView
from tunecore.shell.ray_schedulers import FIFOScheduler
from tunecore.shell.replay import HistoryWalk
from tunecore.shell.trial_view import Trial

View = Callable[[TrialState], Trial]

Decision = Literal["CONTINUE", "PAUSE", "STOP"]
VERDICTS = ("CONTINUE", "PAUSE", "STOP")


class SchedulerResumeWarning(UserWarning):
    """A scheduler object rebuilt on a resume answered otherwise than the
    log says (it is not deterministic, or another version of it)."""


class SchedulerController(ControllerView):
    """What Ray passes as `tune_controller` (module docstring)."""

    def __init__(self, state: ExperimentState, view: View) -> None:
        super().__init__(state, view)
        self.stops: list[str] = []
        self.pauses: list[str] = []

    def get_trial(self, trial_id: str) -> Trial | None:
        trial = self._state.trials.get(trial_id)
        return None if trial is None else self._view(trial)

    def stop_trial(self, trial: Trial) -> None:
        """Stop `trial` for good once the hook returned."""
        self.stops.append(_trial_id(trial, "tune_controller.stop_trial"))

    def pause_trial(self, trial: Trial, should_checkpoint: bool = True) -> None:
        """Pause a running `trial` once the hook returned (its state is
        saved to memory, as every pause in tunecore)."""
        self.pauses.append(_trial_id(trial, "tune_controller.pause_trial"))

    def requests(self, at: float, but: str | None = None) -> list[ExperimentEvent]:
        """The stops and pauses asked, as events, but for trial `but`'s."""
        events: list[ExperimentEvent] = [
            StopRequested(trial_id=t, at=at) for t in dict.fromkeys(self.stops) if t != but
        ]
        events += [
            PauseRequested(trial_id=t, at=at) for t in dict.fromkeys(self.pauses) if t != but
        ]
        return events


class SchedulerRuntime:
    """Calls the user's scheduler object for the core (module docstring)."""

    def __init__(self, scheduler: object) -> None:
        self._object = scheduler
        self.failure: str | None = None
        self._warned = False
        self._unlogged: tuple[Note, ...] = ()
        """Notes told in an experiment that was over (see `answer`)."""

    @property
    def name(self) -> str:
        return type(self._object).__qualname__

    def decide(
        self, before: ExperimentState, after: ExperimentState, trial_id: str, view: View, at: float
    ) -> tuple[Decision, list[ExperimentEvent]]:
        """The object's verdict on `trial_id`'s result (`after` holds it,
        `before` is the experiment before it), and the events to feed after
        the result (the controller's requests, or a `SchedulerFailed`)."""
        if self.failure is not None:
            return "CONTINUE", []
        controller = SchedulerController(before, view)
        result = dict(flatten(after.trials[trial_id].last_result))
        try:
            answer = self._object.on_trial_result(  # type: ignore[attr-defined]
                controller, view(before.trials[trial_id]), result
            )
            decision = _verdict(answer, trial_id, controller, self.name)
        except Exception as error:  # the user's code: any error ends the run, logged
            return "CONTINUE", [self._failed(error, at)]
        return decision, controller.requests(at, but=trial_id)

    def answer(
        self, state: ExperimentState, command: AskScheduler, view: View, at: float
    ) -> list[ExperimentEvent]:
        """Tell the notes and pick, as `command` says; the events to feed.
        In an experiment that is over (`state.done`) nothing more is
        logged: the notes are told all the same (the object hears the last
        completions, as in Ray), and remembered, so the ask a resume makes
        of the same notes does not tell them twice."""
        if self.failure is not None:
            return []
        scheduler = state.scheduler
        assert isinstance(scheduler, ImperativeScheduler)  # it asked
        controller = SchedulerController(state, view)
        chosen = None
        notes = scheduler.untold[: command.told]
        heard = len(self._unlogged) if notes[: len(self._unlogged)] == self._unlogged else 0
        self._unlogged = notes if state.done else ()
        try:
            for note in notes[heard:]:
                self._tell(note, state, controller, view)
            if command.choose:
                chosen = _picked(self._object.choose_trial_to_run(controller), self.name)  # type: ignore[attr-defined]
        except Exception as error:  # the user's code: any error ends the run, logged
            return [self._failed(error, at)]
        answered = SchedulerAnswered(at=at, told=command.told, chose=command.choose, chosen=chosen)
        return [answered, *controller.requests(at)]

    def replay(
        self, before: ExperimentState, event: ExperimentEvent, after: ExperimentState
    ) -> None:
        """Rebuild the object on a resume: call it for `event` as the run
        that logged it did (a walk's visitor, `shell.replay.HistoryWalk`),
        dropping what it asks of the controller (the log holds it). An
        answer other than the logged one is a `SchedulerResumeWarning`: the
        object then goes on from another state than the one that ran."""
        if self.failure is not None:
            return
        view = Trial
        try:
            if isinstance(event, ResultReported) and event.decision is not None:
                decision, _ = self.decide(before, after, event.trial_id, view, event.at)
                if not self.failed() and decision != event.decision:
                    self._differs(f"{event.decision} for trial {event.trial_id}'s result", decision)
            elif isinstance(event, SchedulerAnswered):
                scheduler = before.scheduler
                assert isinstance(scheduler, ImperativeScheduler)  # the core took the answer
                controller = SchedulerController(before, view)
                for note in scheduler.untold[: event.told]:
                    self._tell(note, before, controller, view)
                if event.chose:
                    chosen = _picked(self._object.choose_trial_to_run(controller), self.name)  # type: ignore[attr-defined]
                    if chosen != event.chosen:
                        self._differs(f"the pick {event.chosen!r}", repr(chosen))
        except Exception as error:  # the user's code
            self._failed(error, event.at)
        if self.failed():
            warnings.warn(
                f"{self.name} raised while it was rebuilt from the log; it is not called "
                f"again, so the resumed experiment stops at once: {self.failure}",
                SchedulerResumeWarning,
                stacklevel=2,
            )

    def failed(self) -> bool:
        """Whether the object raised (or answered no verdict): it is not
        called again."""
        return self.failure is not None

    def _differs(self, logged: str, now: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"{self.name}, rebuilt from the log, answers otherwise than the run that "
                f"logged it (logged {logged}; now {now}): it goes on from another state",
                SchedulerResumeWarning,
                stacklevel=2,
            )

    def _tell(
        self, note: Note, state: ExperimentState, controller: SchedulerController, view: View
    ) -> None:
        trial = view(state.trials[note.trial_id])
        hook = getattr(self._object, f"on_trial_{note.hook}")
        if note.hook == "complete":
            hook(controller, trial, dict(flatten(trial.state.last_result)))
        else:
            hook(controller, trial)

    def _failed(self, error: Exception, at: float) -> SchedulerFailed:
        text = "".join(traceback.format_exception(error)).rstrip()
        self.failure = text
        return SchedulerFailed(at=at, error=f"{self.name}: {text}", resumable=True)


def _trial_id(trial: object, where: str) -> str:
    trial_id = getattr(trial, "trial_id", None)
    if not isinstance(trial_id, str):
        raise TypeError(f"{where}(trial) takes a Trial; got {type(trial).__name__}")
    return trial_id


def _verdict(answer: object, trial_id: str, controller: SchedulerController, name: str) -> Decision:
    """The verdict for the reporting trial: a stop or pause the hook asked
    of the controller for it wins (Ray's NOOP, after acting itself)."""
    if trial_id in controller.stops:
        return "STOP"
    if trial_id in controller.pauses:
        return "PAUSE"
    if answer == "NOOP":
        return "CONTINUE"
    if not isinstance(answer, str) or answer not in VERDICTS:
        raise TypeError(
            f"{name}.on_trial_result returned {answer!r}: it must return "
            "TrialScheduler.CONTINUE, PAUSE, STOP or NOOP"
        )
    return cast(Decision, answer)


def _picked(trial: object, name: str) -> str | None:
    if trial is None:
        return None
    trial_id = getattr(trial, "trial_id", None)
    if not isinstance(trial_id, str):
        raise TypeError(
            f"{name}.choose_trial_to_run returned {trial!r}: it must return one of "
            "tune_controller.get_trials() or None"
        )
    return trial_id


def chooses(scheduler: object) -> bool:
    """Whether `scheduler`'s class picks trials otherwise than Ray's FIFO."""
    return (
        getattr(type(scheduler), "choose_trial_to_run", None)
        is not FIFOScheduler.choose_trial_to_run
    )


def imperative_policy(
    scheduler: object, metric: str | None, mode: Mode | None
) -> ImperativeScheduler:
    """The core's place for `scheduler`, after it took the experiment's
    `metric` and `mode` (Ray's `set_search_properties`, as Ray's Tuner
    calls it; a False answer, its own metric kept, is no error here)."""
    set_properties = getattr(scheduler, "set_search_properties", None)
    if callable(set_properties):
        set_properties(metric, None if mode is None else mode.value)
    own = getattr(scheduler, "metric", None)
    return ImperativeScheduler(
        name=type(scheduler).__qualname__,
        chooses=chooses(scheduler),
        metric=own if isinstance(own, str) else None,
    )


class SchedulerNotGivenError(ValueError):
    """A restore of an experiment run under a scheduler object of the
    user's was not given the object again (the log holds no code)."""


def runtime_for(
    state_scheduler: object, built: object, again: object | None
) -> SchedulerRuntime | None:
    """What calls the user's scheduler object for an experiment whose
    scheduler (as the log holds it) is an `ImperativeScheduler`: the
    object given again on a restore (`again`), else the one the user
    `built`. None when the experiment has no such scheduler; a clear error
    when it has and none is given, or one of another class."""
    if not isinstance(state_scheduler, ImperativeScheduler):
        return None
    given = again if again is not None else built
    if given is None:
        raise SchedulerNotGivenError(
            f"the experiment's scheduler is your {state_scheduler.name} (Ray's imperative "
            "API): it is code, which the log does not hold; pass it again as "
            "Tuner.restore(path, trainable, scheduler=...)"
        )
    if type(given).__qualname__ != state_scheduler.name:
        raise ValueError(
            f"the experiment ran under your {state_scheduler.name}; "
            f"Tuner.restore(scheduler=...) got a {type(given).__qualname__}"
        )
    return SchedulerRuntime(given)


def restored_scheduler(
    history: HistoryWalk, state: ExperimentState, given: object
) -> SchedulerRuntime | None:
    """The scheduler object of a restored experiment (`state`, rebuilt
    from the log), rebuilt by calling its hooks over the whole log
    (`SchedulerRuntime.replay`) as `history` walks it. None when the
    experiment's scheduler is not such an object; a clear error when it is
    and `given` is not one of its class."""
    runtime = runtime_for(state.scheduler, None, given)
    if runtime is None:
        return None
    config = state.config
    imperative_policy(given, config.metric, config.mode)  # set_search_properties, as at first
    history.register(runtime.replay)
    return runtime
