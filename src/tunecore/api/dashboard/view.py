"""What the dashboard shows of one experiment, kept up to date event by
event: each event is stepped through the core (as replay does), and what
the step changed is folded into per-trial rows, curves and timelines.

Following a live log costs each new event one step, not a re-read of the
whole log. Memory: the core's state, plus per trial its row, a bounded
curve (`curves.Curve`), its last `RECENT` objective values and its
timeline (one entry per transition); the best-so-far series keeps one
point per improvement. The user's code is never imported: the policies
are rebuilt from the log as `replay` rebuilds them (`SnapshotKind`).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass, field

from tunecore.api.dashboard.curves import Curve
from tunecore.api.dashboard.reasons import Moment, moments, new_trials
from tunecore.core.experiment import ExperimentState, step
from tunecore.core.naming import trial_name
from tunecore.core.results import (
    AUTOFILLED,
    TIME_TOTAL_S,
    TRAINING_ITERATION,
    flatten,
    is_end_marker,
)
from tunecore.model import ExperimentEvent, JsonValue, Mode, TrialSpec, TrialState
from tunecore.model.events import ResultReported
from tunecore.model.numbers import is_number
from tunecore.model.outcome import Rejection

RECENT = 5
"""The window of the table's last-N average (Ray's `last-5-avg` scope)."""

AUTOMATIC = (AUTOFILLED - {TRAINING_ITERATION, TIME_TOTAL_S}) | {"checkpoint_dir_name"}
"""Result keys the engine fills in, not metrics a user reported (the
iteration and total time stay: they are the curves' x axes)."""


@dataclass
class TrialView:
    """One trial as the table and its page show it."""

    trial_id: str
    order: int
    name: str = ""
    status: str = "PENDING"
    config: dict[str, JsonValue] = field(default_factory=dict)
    iteration: int = 0
    last: dict[str, float] = field(default_factory=dict)
    best: float | None = None
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT))
    curve: Curve = field(default_factory=Curve)
    timeline: list[Moment] = field(default_factory=list)
    error: str | None = None
    started_at: float | None = None
    spec: TrialSpec | None = None

    @property
    def recent_average(self) -> float | None:
        return math.fsum(self.recent) / len(self.recent) if self.recent else None


@dataclass
class Exploit:
    """A PBT exploit, an edge of the lineage graph."""

    trial_id: str
    donor: str | None
    iteration: int | None
    at: float


class ExperimentView:
    """The state the log rebuilds, and what the dashboard derives from it."""

    def __init__(self, state: ExperimentState) -> None:
        self.state = state
        self.events = 0
        self.rejected = 0
        self.started_at: float | None = None
        self.updated_at: float | None = None
        self.trials: dict[str, TrialView] = {}
        self.metrics: dict[str, None] = {}  # every numeric key reported, in order
        self.best: list[tuple[float, float, str]] = []  # (time, value, trial) per improvement
        self.exploits: list[Exploit] = []
        self.params: dict[str, None] = {}  # the searched keys, in order
        self.version = 0
        self.counts: dict[str, int] = {}  # trials per status
        self.errored: dict[str, None] = {}  # the trials with an error, as they got one
        # Per status, (position in `trials`, trial id) of the trials that
        # entered it, a heap; entries of trials that left it are dropped
        # when they reach its top (`status_counts`).
        self._entered: dict[str, list[tuple[int, str]]] = {}
        self._position: dict[str, int] = {}
        for trial in state.trials.values():
            self._add(trial, state.index[trial.trial_id])

    @property
    def metric(self) -> str | None:
        return self.state.config.metric

    @property
    def mode(self) -> Mode | None:
        return self.state.config.mode

    def status_counts(self) -> dict[str, int]:
        """Trials per status, the statuses in the order of the first trial
        (in `trials`) that has each: what counting every trial gives,
        without walking every trial."""
        firsts = []
        for status, heap in self._entered.items():
            while heap and self.trials[heap[0][1]].status != status:
                heapq.heappop(heap)
            if heap:
                firsts.append((heap[0][0], status))
        return {status: self.counts[status] for _, status in sorted(firsts)}

    def feed(self, events: list[ExperimentEvent]) -> None:
        """Step `events` (the log's next ones) and fold in what they did."""
        for event in events:
            self.events += 1
            outcome = step(self.state, event)
            if isinstance(outcome, Rejection):
                self.rejected += 1
                continue
            before, (after, commands) = self.state, outcome
            self.state = after
            self.started_at = self.started_at if self.started_at is not None else event.at
            self.updated_at = event.at
            for trial_id in new_trials(before, after):
                self._add(after.trials[trial_id], after.index[trial_id])
            for moment in moments(before, event, after, list(commands)):
                self._note(moment)
            if isinstance(event, ResultReported) and not is_end_marker(event.result):
                self._result(after.trials[event.trial_id], event.at)
            touched: list[object] = [getattr(event, "trial_id", None)]
            touched += [getattr(command, "trial_id", None) for command in commands]
            for name in touched:
                if isinstance(name, str) and name in self.trials:
                    self._refresh(after.trials[name])
        if events:
            self.version += 1

    def _add(self, trial: TrialState, order: int) -> None:
        self._position[trial.trial_id] = len(self.trials)
        self.trials[trial.trial_id] = TrialView(trial.trial_id, order, status="")
        self._refresh(trial)

    def _refresh(self, trial: TrialState) -> None:
        view = self.trials[trial.trial_id]
        status = trial.status.value
        if status != view.status:
            self._count(view.status, -1)
            self._count(status, 1)
            view.status = status
            heapq.heappush(
                self._entered.setdefault(status, []),
                (self._position[trial.trial_id], view.trial_id),
            )
        if trial.spec is not view.spec:  # created, or given another config (PBT)
            view.spec = trial.spec
            view.name = trial_name(trial.spec)
            view.config = _shown_config(trial.spec)
            self.params.update(dict.fromkeys(view.config))
        if trial.error_message:
            view.error = trial.error_message
            self.errored[view.trial_id] = None
        if view.started_at is None and trial.start_time is not None:
            view.started_at = trial.start_time

    def _count(self, status: str, change: int) -> None:
        if status:
            self.counts[status] = self.counts.get(status, 0) + change
            if not self.counts[status]:
                del self.counts[status]

    def _note(self, moment: Moment) -> None:
        view = self.trials.get(moment.trial_id)
        if view is None:
            return
        view.timeline.append(moment)
        if moment.kind == "exploited":
            donor = moment.details.get("donor")
            self.exploits.append(
                Exploit(
                    moment.trial_id,
                    donor if isinstance(donor, str) else None,
                    moment.iteration,
                    moment.at,
                )
            )

    def _result(self, trial: TrialState, at: float) -> None:
        view = self.trials[trial.trial_id]
        self._refresh(trial)
        flat = flatten(trial.last_result)
        numbers = {
            key: float(value)
            for key, value in flat.items()
            if is_number(value) and key not in AUTOMATIC
        }
        view.last = numbers
        iteration = flat.get(TRAINING_ITERATION)
        view.iteration = iteration if isinstance(iteration, int) else view.iteration + 1
        view.curve.add(numbers)
        self.metrics.update(dict.fromkeys(numbers))
        metric, mode = self.metric, self.mode
        value = numbers.get(metric) if metric is not None else None
        if value is None or math.isnan(value) or mode is None:
            return
        view.recent.append(value)
        if view.best is None or _better(value, view.best, mode):
            view.best = value
        if not self.best or _better(value, self.best[-1][1], mode):
            self.best.append((at, value, trial.trial_id))


def _shown_config(spec: TrialSpec) -> dict[str, JsonValue]:
    """The values the search chose (as the config now holds them: PBT
    changes them), or, for a config with none searched, its plain values."""
    searched = flatten(spec.evaluated_params)
    config = flatten(spec.config)
    return {key: config.get(key, value) for key, value in searched.items()} or {
        key: value for key, value in config.items() if not isinstance(value, list)
    }


def _better(value: float, than: float, mode: Mode) -> bool:
    return value < than if mode is Mode.MIN else value > than
