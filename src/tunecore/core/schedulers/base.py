"""The protocol every trial scheduler follows.

The verdicts a scheduler returns (`Verdict`, `Exploit`, `CONTINUE`,
`PAUSE`, `STOP`) and its run-ahead `Horizon` are defined in
`tunecore.model.decision`, below the lifecycle and the shell that read
them too; they are re-exported here so a scheduler module takes its whole
vocabulary from one place.

A scheduler is a frozen msgspec struct holding both its configuration and
its progress (rungs, brackets, recorded results, its `Rng`). Every hook
returns a new scheduler instead of mutating, so the experiment state that
holds it can be logged, snapshotted and replayed; on resume a scheduler
continues exactly where it was.

Hooks receive `TrialState`s and plain (flattened) results, never the
experiment, so a scheduler can be tested alone: build trials with
`tunecore.core.new_trial`, feed results, assert verdicts.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Protocol, Self, TypeVar

import msgspec

from tunecore.core.policies import policy_metric
from tunecore.core.results import DEFAULT_METRIC
from tunecore.model import InvalidFieldError, JsonDict, Mode, ModeArg, TrialState
from tunecore.model.decision import CONTINUE, PAUSE, STOP, Exploit, Horizon, Verdict
from tunecore.model.errors import coerce_enum, require_name

__all__ = [
    "CONTINUE",
    "PAUSE",
    "STOP",
    "DecidesAt",
    "Exploit",
    "ExploitsWaiting",
    "FirstComeFirstServed",
    "Fits",
    "Horizon",
    "Objective",
    "TrialScheduler",
    "Verdict",
    "adopt_objective",
    "check_objective_fields",
    "declared_horizon",
    "evolve",
    "first_fitting",
    "known_objective",
    "policy_metric",
    "require_objective",
    "resolve_objective",
    "signed",
]

_S = TypeVar("_S", bound=msgspec.Struct)


Fits = Callable[[TrialState], bool]
"""Whether a trial's resources fit what the cluster has free right now."""


def first_fitting(
    pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
) -> str | None:
    """The first pending trial that fits, else the first paused one: the
    FIFO order most schedulers use to fill free slots."""
    for trial in pending:
        if fits(trial):
            return trial.trial_id
    for trial in paused:
        if fits(trial):
            return trial.trial_id
    return None


class FirstComeFirstServed:
    """For a policy that stops only the trial that reports (it names none
    to stop on its own) and fills free slots in FIFO order (`first_fitting`):
    FIFO itself, the median rule and PBT (which chooses otherwise when it
    takes turns). Mix it into the policy's frozen msgspec struct; it adds
    no field."""

    __slots__ = ()

    def trials_to_stop(self) -> tuple[str, ...]:
        """None: a trial is stopped only by the verdict on its own result."""
        return ()

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """New trials before paused ones, each in the order added."""
        return first_fitting(pending, paused, fits)


class ExploitsWaiting(Protocol):
    """A scheduler that also exploits trials that wait (synchronous PBT at
    its barrier; an exploit waiting for the user's `custom_explore_fn`).
    After every event the experiment asks `waiting_exploits(trials)` for
    the exploits it can carry out now, each on a PAUSED or PENDING trial
    with no save in flight (`lifecycle.exploit_waiting`), or None for one
    the scheduler gives up (its donor has no checkpoint); then tells the
    scheduler with `on_waiting_exploit` that each was done. The scheduler
    must not start such a trial (`choose_trial_to_run`) before then."""

    def waiting_exploits(
        self, trials: Mapping[str, TrialState]
    ) -> tuple[tuple[str, Exploit | None], ...]: ...

    def on_waiting_exploit(self, trial_id: str, exploit: Exploit | None) -> Self: ...


def waiting_exploits(
    scheduler: object, trials: Mapping[str, TrialState]
) -> tuple[tuple[str, Exploit | None], ...]:
    """What an `ExploitsWaiting` scheduler can exploit now; () for others.
    Looked up on the class: it runs after every event."""
    method = getattr(type(scheduler), "waiting_exploits", None)
    if method is None:
        return ()
    found: tuple[tuple[str, Exploit | None], ...] = method(scheduler, trials)
    return found


class DecidesAt(Protocol):
    """A scheduler that can say, for a running trial, up to where its
    verdict on every result is CONTINUE whatever the result's metric and
    whatever the other trials do, so the trial's worker may train on
    without waiting for the driver's answers (the Ray executor's run-ahead).
    Only a class that defines `decides_next_at` itself is believed: a
    subclass may decide on other results (`core.experiment.horizons.run_ahead_until`
    looks the method up on the class)."""

    def decides_next_at(self, trial_id: str) -> Horizon | None:
        """The trial's horizon; None when every result may matter."""
        ...


def declared_horizon(scheduler: object, trial_id: str) -> Horizon | None:
    """The trial's horizon as the scheduler's own class declares it
    (`DecidesAt`), None when it declares none. The method is looked up on
    the class directly: a subclass that does not define it may decide on
    more results than its parent said, and an isinstance check against the
    runtime protocol cost more than the rest of a result. (`step` asks on
    every result, so the lookup is kept per class.)"""
    kind = type(scheduler)
    try:
        decides_next_at = _DECLARED[kind]
    except KeyError:
        decides_next_at = _DECLARED[kind] = kind.__dict__.get("decides_next_at")
    if decides_next_at is None:
        return None
    horizon: Horizon | None = decides_next_at(scheduler, trial_id)
    return horizon


_DECLARED: dict[type, Callable[..., Horizon | None] | None] = {}
"""Each scheduler class's own `decides_next_at`, or None (`declared_horizon`)."""


class TrialScheduler(Protocol):
    """Decides, for each result, whether a trial continues, pauses or stops,
    and which waiting trial runs next.

    A scheduler (or searcher) that reads a metric names it in a `metric`
    attribute (a str, or None before `with_objective`): the experiment then
    checks that every result reports it (`policy_metric`), so a misspelled
    metric fails the trial instead of silently disabling the policy. Ray's
    anonymous `_metric` (a mode given without a metric) is not checked,
    as in Ray, and the policy must then pass over results without it,
    unless an optional `metric_required` attribute is true: results are
    then checked for it too (`core.policies.checked_metric`). An optional
    `result_problem(result)` method is asked before each `on_trial_result`
    (once the stoppers let the trial go on): text it returns fails the
    trial with it, and the scheduler is not asked (`core.policies.result_problem`).

    What the experiment (`core.experiment.step`) promises every scheduler,
    so a scheduler needs no bookkeeping of statuses of its own
    (`tunecore.testing.PolicyDriver` drives one through these same rules):

    - `on_trial_add` once per trial, before anything else about it; the
      trial is PENDING until `choose_trial_to_run` picks it.
    - `on_trial_result` only for a RUNNING trial, never for one that has
      ended or waits: results that race with a stop are dropped before
      they reach the scheduler. A scheduler driven by other code must
      still ignore a result for a trial it does not hold (never added, or
      ended): CONTINUE and no change, never an error.
    - After a STOP verdict, `on_trial_complete` for that trial (so is every
      RUNNING trial stopped from elsewhere: a stopper, the user); after a
      PAUSE, the trial is PAUSED, holds no resources, and runs again only
      if `choose_trial_to_run` returns it.
    - `on_trial_remove` for a trial stopped while PENDING or PAUSED (one
      `trials_to_stop` named, too); `on_trial_error` for one that failed
      for good. After any of these three, nothing more about the trial.
    - `choose_trial_to_run` after every event that may have freed room,
      until it returns None; it must return a trial from `pending` or
      `paused` (another is ignored, and the experiment stops asking).
    - Hooks are called in event order, from one thread, and the scheduler
      they return replaces this one: a scheduler is a value, and equal
      events give equal schedulers (replay and resume rely on it).
    """

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Take the experiment's metric and mode where this scheduler has
        none. Raise `InvalidFieldError` if it needs them and neither has.

        The experiment calls it once, when it is created (`new_experiment`),
        and never on a policy decoded from a log or a snapshot: a policy may
        settle there what only new experiments do (PBT's `take_turns`).
        Other callers only check the answer and drop it (the CLI)."""
        ...

    def on_trial_add(self, trial: TrialState) -> Self: ...

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """`result` is flattened ('/'-joined keys). `trials` is every trial
        in the experiment by id (a persistent map: passing it costs nothing;
        iterating it costs O(n), so only schedulers that need the whole
        population, such as PBT and the median rule, should)."""
        ...

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        """The trial terminated normally; `result` is its last (flattened)."""
        ...

    def on_trial_error(self, trial: TrialState) -> Self: ...

    def on_trial_remove(self, trial: TrialState) -> Self:
        """The trial was stopped while PENDING or PAUSED."""
        ...

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """The id of the trial to start or resume next, or None. `pending`
        and `paused` are in the order the trials were added."""
        ...

    def trials_to_stop(self) -> tuple[str, ...]:
        """Trials other than the reporting one that this scheduler wants
        stopped now (HyperBand's halving drops paused trials), in the order
        they were added. The experiment asks after every event it handled,
        stops each (PAUSED or PENDING ones at once, without resuming them)
        and then calls `on_trial_remove` (or `on_trial_complete` for a
        running one), which must take the trial off this list."""
        ...

    def debug_string(self) -> str: ...


class Objective(NamedTuple):
    """A policy's metric and mode, both known."""

    metric: str
    mode: Mode


def known_objective(metric: str | None, mode: ModeArg | None) -> Objective:
    """The objective of a policy that holds trials: `require_objective`
    checked it when the first was added, so a missing one here is a bug."""
    if metric is None or mode is None:
        raise AssertionError("a policy holds trials without a metric and mode")
    return Objective(metric, Mode(mode))


def require_objective(owner: str, metric: str | None, mode: ModeArg | None) -> Objective:
    """The metric and mode a scheduler or searcher cannot work without."""
    if metric is None:
        raise InvalidFieldError(
            f"{owner}.metric", metric, "a metric name (set it here or in TuneConfig)"
        )
    if mode is None:
        raise InvalidFieldError(f"{owner}.mode", mode, "'min' or 'max' (here or in TuneConfig)")
    return Objective(metric, Mode(mode))


def resolve_objective(
    owner: str,
    own: tuple[str | None, ModeArg | None],
    experiment: tuple[str | None, ModeArg | None],
) -> tuple[str, Mode]:
    """A policy's metric and mode: its own where set, else the experiment's;
    a clear error if either is still missing. A mode with no metric
    anywhere takes Ray's anonymous metric `_metric` (`DEFAULT_METRIC`, where
    a function trainable's returned number is reported), as Ray's
    schedulers do: a policy then acts only on results that carry it, and
    strict metric checking passes it over (`core.experiment.step`)."""
    own_metric, own_mode = own
    metric, mode = experiment
    resolved_mode = own_mode if own_mode is not None else mode
    resolved_metric = own_metric if own_metric is not None else metric
    if resolved_metric is None and resolved_mode is not None:
        resolved_metric = DEFAULT_METRIC
    return require_objective(owner, resolved_metric, resolved_mode)


def check_objective_fields(
    policy: msgspec.Struct, time_attr: str, metric: str | None, mode: ModeArg | None
) -> None:
    """The checks a policy with a `time_attr`, `metric` and `mode` (its
    own values, passed in) starts its `__post_init__` with: the time
    attribute a name, the metric a name or None, and the mode stored on
    `policy` as a `Mode` member (its plain value accepted) or None. Errors
    name the field as `TypeName.field`."""
    owner = type(policy).__name__
    require_name(f"{owner}.time_attr", time_attr)
    if metric is not None:
        require_name(f"{owner}.metric", metric)
    if mode is not None:
        coerce_enum(policy, "mode", Mode)


def adopt_objective(
    policy: _S, own: tuple[str | None, ModeArg | None], metric: str | None, mode: Mode | None
) -> _S:
    """A policy's `with_objective`: `policy` with its `own` metric and mode
    where set, else the experiment's `metric` and `mode` (a clear error if
    either is still missing); `policy` itself when that changes nothing."""
    resolved_metric, resolved_mode = resolve_objective(type(policy).__name__, own, (metric, mode))
    own_metric, own_mode = own
    if resolved_metric == own_metric and resolved_mode is own_mode:
        return policy
    return msgspec.structs.replace(policy, metric=resolved_metric, mode=resolved_mode)


def signed(value: float, mode: Mode) -> float:
    """A score where greater is always better."""
    return value if mode is Mode.MAX else -value


def evolve(scheduler: _S, **changes: object) -> _S:
    """`scheduler` with `changes`: `msgspec.structs.replace` minus its second
    run of `__post_init__`, whose checks concern the configuration alone,
    which hooks never change (it was checked when the scheduler was built
    or decoded). The fields are set on a fresh copy nobody else holds yet,
    so the struct stays immutable to everyone else; this keeps a result
    from paying for a dozen validations."""
    evolved = copy.copy(scheduler)
    for name, value in changes.items():
        msgspec.structs.force_setattr(evolved, name, value)
    return evolved
