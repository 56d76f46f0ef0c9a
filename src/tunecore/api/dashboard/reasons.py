"""Why each trial moved: the moments of a trial's timeline, read from one
step of the core (the state before, the event, the state after and the
commands the step gave).

The log records what happened to the experiment (events); the core's
decisions follow from them (commands). A transition's reason is what the
policy that made it knew at that step: ASHA's rung and its cutoff, the
median rule's median, PBT's donor and the values it changed, a stopper's
name, the stopping criterion met. Nothing here decides anything: every
number shown is read from the policies' own state, so what the page says
is what the core computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tunecore.core.checkpoints import holder_of
from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.state import trial_id_of
from tunecore.core.results import TRAINING_ITERATION, flatten, is_end_marker
from tunecore.core.schedulers.asha_brackets import ASHABrackets
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.core.schedulers.median import MedianStoppingRule, running_mean
from tunecore.core.stopping import check_stop
from tunecore.model import JsonValue, Mode, TrialState, TrialStatus
from tunecore.model.commands import PauseTrial, ResetTrial, StartTrial, StopTrial
from tunecore.model.events import (
    ExperimentEvent,
    ResultReported,
    StopRequested,
    TrialFailed,
)


@dataclass(frozen=True)
class Moment:
    """One transition of one trial, and why."""

    trial_id: str
    at: float
    kind: str  # created, started, resumed, paused, stopped, finished, failed, exploited
    why: str
    iteration: int | None = None
    details: dict[str, JsonValue] = field(default_factory=dict)


def moments(
    before: ExperimentState, event: ExperimentEvent, after: ExperimentState, commands: list[object]
) -> list[Moment]:
    """The transitions one step made, each with its reason."""
    found = [
        Moment(trial_id, event.at, "created", _created_by(after))
        for trial_id in new_trials(before, after)
    ]
    touched = dict.fromkeys(
        [getattr(event, "trial_id", None), *(getattr(c, "trial_id", None) for c in commands)]
    )
    for trial_id in touched:
        if trial_id is None or trial_id not in after.trials:
            continue
        found += _trial_moments(before, event, after, commands, trial_id)
    return found


def new_trials(before: ExperimentState, after: ExperimentState) -> list[str]:
    """The ids of the trials a step created, in order."""
    return [trial_id_of(after.config, n) for n in range(before.created, after.created)]


def _created_by(state: ExperimentState) -> str:
    searcher = state.searcher
    name = type(searcher).__name__
    if searcher is None or name == "BasicVariantGenerator":
        return "drawn from the search space (random and grid)"
    return f"suggested by {name}"


def _trial_moments(
    before: ExperimentState,
    event: ExperimentEvent,
    after: ExperimentState,
    commands: list[object],
    trial_id: str,
) -> list[Moment]:
    old, new = before.trials.get(trial_id), after.trials[trial_id]
    iteration = _iteration(new)
    found: list[Moment] = []

    def moment(kind: str, why: str, **details: JsonValue) -> None:
        found.append(Moment(trial_id, event.at, kind, why, iteration, details))

    for command in commands:
        if isinstance(command, ResetTrial) and command.trial_id == trial_id and old is not None:
            why, details = _exploit(before, old, command)
            moment("exploited", why, **details)
    was = old.status if old is not None else None
    if new.status is was:
        return found
    if new.status is TrialStatus.RUNNING:
        start = next(
            (c for c in commands if isinstance(c, StartTrial) and c.trial_id == trial_id), None
        )
        restored = start is not None and start.restore_from is not None
        if was is TrialStatus.PAUSED:
            moment("resumed", _resumed_by(before, restored))
        elif restored:
            moment("restored", "started again from its checkpoint (resumed or retried)")
        else:
            moment("started", "a worker was free")
    elif new.status is TrialStatus.PAUSED:
        paused = any(isinstance(c, PauseTrial) and c.trial_id == trial_id for c in commands)
        moment("paused", _paused_by(before) if paused else "paused")
    elif new.status is TrialStatus.ERROR:
        error = event.error if isinstance(event, TrialFailed) else new.error_message or ""
        moment("failed", _first_line(error), failures=new.num_failures)
    elif new.status is TrialStatus.PENDING and was is TrialStatus.RUNNING:
        error = event.error if isinstance(event, TrialFailed) else ""
        why = f"failed ({_first_line(error)}); retried, failure {new.num_failures}"
        moment("retried", why, failures=new.num_failures)
    elif new.status is TrialStatus.TERMINATED:
        kind, why, details = _ended(before, event, after, commands, new)
        moment(kind, why, **details)
    return found


def _iteration(trial: TrialState) -> int | None:
    value = trial.last_result.get(TRAINING_ITERATION)
    return value if isinstance(value, int) else None


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "an error"


def _ended(
    before: ExperimentState,
    event: ExperimentEvent,
    after: ExperimentState,
    commands: list[object],
    trial: TrialState,
) -> tuple[str, str, dict[str, JsonValue]]:
    """Why `trial` ended: itself, the run's stopping rules, or its policy."""
    if isinstance(event, StopRequested) and event.trial_id == trial.trial_id:
        return "stopped", "stopped on request (tunecore stop, or a callback)", {}
    if after.stopping is not None and before.stopping is None:
        return "stopped", f"the experiment stopped: {after.stopping}", {}
    if not isinstance(event, ResultReported) or event.trial_id != trial.trial_id:
        if any(isinstance(c, StopTrial) and c.trial_id == trial.trial_id for c in commands):
            return "stopped", f"stopped by {type(after.scheduler).__name__}", {}
        return "finished", "ended", {}
    result = event.result
    if is_end_marker(result) or result.get("done") is True:
        return "finished", "its trainable finished", {}
    if event.stopped_by is not None:
        return "stopped", f"stopped by your stopper {event.stopped_by}", {}
    criterion = trial.spec.stopping_criterion
    if criterion and check_stop(criterion, flatten(trial.last_result)) is True:
        shown = ", ".join(f"{key} >= {value}" for key, value in criterion.items())
        return "finished", f"met the stopping criterion ({shown})", {}
    if after.stopper is not None and after.stopper is not before.stopper:
        return "stopped", f"stopped by {type(after.stopper).__name__}", {}
    return "stopped", *_stopped_by_scheduler(before, trial)


def _stopped_by_scheduler(
    before: ExperimentState, trial: TrialState
) -> tuple[str, dict[str, JsonValue]]:
    scheduler = before.scheduler
    result = flatten(trial.last_result)
    if isinstance(scheduler, ASHABrackets):
        return _asha_stop(scheduler, result, before.config.mode)
    if isinstance(scheduler, MedianStoppingRule):
        return _median_stop(scheduler, trial.trial_id, result)
    if isinstance(scheduler, HyperBandScheduler):
        return (
            f"HyperBand halved its bracket: it was not among the best "
            f"1/{scheduler.reduction_factor:g} at its milestone",
            {},
        )
    return f"stopped by {type(scheduler).__name__}", {}


def _asha_stop(
    scheduler: ASHABrackets, result: dict[str, JsonValue], mode: Mode | None
) -> tuple[str, dict[str, JsonValue]]:
    time, value = result.get(scheduler.time_attr), result.get(scheduler.metric or "")
    if not isinstance(time, int | float) or not isinstance(value, int | float):
        return "stopped by ASHA", {}
    if time >= scheduler.max_t:
        return f"ASHA: reached max_t ({scheduler.time_attr} = {scheduler.max_t:g})", {}
    reached = scheduler.cutoffs_reached(time, mode)
    if not reached:
        return "stopped by ASHA", {}
    rung, shown = reached[0]
    if shown is None:
        return f"ASHA: stopped at its rung {scheduler.time_attr} = {rung.milestone:g}", {}
    worse = "above" if (scheduler.mode or mode or Mode.MIN) is Mode.MIN else "below"
    why = (
        f"ASHA rung {scheduler.time_attr} = {rung.milestone:g}: {scheduler.metric} "
        f"{value:.6g} is {worse} the rung's cutoff {shown:.6g} (the best "
        f"1/{scheduler.reduction_factor:g} go on; {_trials(rung.recorded)} reached it before)"
    )
    return why, {"rung": float(rung.milestone), "cutoff": shown, "value": float(value)}


def _trials(count: int) -> str:
    return f"{count} trial" if count == 1 else f"{count} trials"


def _median_stop(
    scheduler: MedianStoppingRule, trial_id: str, result: dict[str, JsonValue]
) -> tuple[str, dict[str, JsonValue]]:
    now = result.get(scheduler.time_attr)
    if not isinstance(now, int | float):
        return "stopped by the median stopping rule", {}
    others = scheduler.reference_means(trial_id, float(now))
    own = running_mean(scheduler.samples.get(trial_id) or (), scheduler.grace_period, float(now))
    if not others or own is None:
        return "stopped by the median stopping rule", {}
    ordered = sorted(others)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    why = (
        f"median stopping rule at {scheduler.time_attr} = {now:g}: its best running mean "
        f"of {scheduler.metric} {own:.6g} is worse than the median {median:.6g} of the "
        f"running means of {_trials(len(ordered))} before it"
    )
    return why, {"median": median, "value": own}


def _resumed_by(before: ExperimentState, restored: bool) -> str:
    scheduler = type(before.scheduler).__name__
    how = " from its checkpoint" if restored else ""
    return f"{scheduler} chose it to run next{how}"


def _paused_by(before: ExperimentState) -> str:
    scheduler = before.scheduler
    name = type(scheduler).__name__
    if isinstance(scheduler, ASHABrackets):
        return "ASHA: waits at its rung for a promotion"
    if isinstance(scheduler, HyperBandScheduler):
        return "HyperBand: waits for the rest of its bracket to reach the milestone"
    if name in {"PopulationBasedTraining", "PB2"}:
        return f"{name}: paused at a perturbation so a waiting trial takes its turn"
    return f"paused by {name}"


def _exploit(
    before: ExperimentState, old: TrialState, reset: ResetTrial
) -> tuple[str, dict[str, JsonValue]]:
    """PBT's exploit: the donor, and the values explore changed."""
    donor = holder_of(before.trials.values(), reset.restore_from, reset.trial_id)
    was, now = flatten(old.spec.config), flatten(reset.config)
    changed = {
        key: [was.get(key), value]
        for key, value in now.items()
        if was.get(key) != value and not isinstance(value, dict)
    }
    shown = ", ".join(f"{key} {a} -> {b}" for key, (a, b) in changed.items())
    who = f"trial {donor}" if donor else "a better trial"
    scheduler = type(before.scheduler).__name__
    fraction = getattr(before.scheduler, "quantile_fraction", None)
    quantile = (
        f" (it was in the bottom {fraction:.0%}, the donor in the top {fraction:.0%})"
        if isinstance(fraction, float)
        else ""
    )
    why = (
        f"{scheduler} exploit: took the checkpoint and config of {who}{quantile}; "
        f"explored: {shown or 'no change'}"
    )
    details: dict[str, JsonValue] = {"donor": donor, "changed": changed}  # type: ignore[dict-item]
    return why, details
