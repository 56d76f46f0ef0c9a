"""What-if: a recorded experiment's trials run again under another
scheduler, over the learning curves and step times they recorded, in
virtual time (`tunecore.simulate`).

Each recorded trial becomes a simulated one that reports, at iteration k,
the metrics it reported at its k-th result, taking the seconds that result
took as the log's times show it: from the moment the core started (or
resumed) the trial, or from its previous result, so the step, the
worker's start and the transport a real run adds all count. (Not from
`TrialStarted`: on Ray a reused worker reports that with its first
results.) A trial the run's stopping criterion or the user's stopper
ended ends at the same result in the what-if. Where the new policy wants
a trial to go on past its last recorded result, the curve ends there: the
trial ends with that result (nothing is invented), and the report names
it as *cut short*, so a reader knows the what-if could not follow that
trial as far as the policy wanted. The report compares the original run
and the what-if: trials stopped early, iterations and compute seconds
used, and the best result found. A trial that began again from its first
iteration when resumed (a function trainable with no checkpoint to resume
from, paused by HyperBand, say) does so in the what-if too: the
simulation saves nothing for it when it pauses (`fresh_on_resume`), and
each time it starts again it follows the next of its recorded runs (the
last one, when the policy restarts it more often). Each simulated result
carries the index of the recorded result it replays, so the account
(iterations, compute, best) is read from the what-if's own log. Given the
original's scheduler, a what-if reproduces the original's decisions
exactly, for simulated runs and for runs on Ray (tested: ASHA, and
HyperBand with trials that resume from checkpoints and with trials that
begin again); results that arrive
at the same instant from different trials are the one order the log's
times cannot tell apart.

Trials start in the recorded order on a cluster of the recorded size, one
trial's resources at a time; configs are not shown to the policy (each
simulated trial carries its recorded trial's number only), so a policy
that changes configs (PBT) cannot be asked what-if questions here.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tunecore.api.config import RunConfig, TuneConfig
from tunecore.api.simulate import simulate
from tunecore.api.spelling import setting
from tunecore.core.experiment import ExperimentState, trial_id_of, trials_in_order
from tunecore.core.experiment.snapshot import BUILTIN
from tunecore.core.results import (
    AUTOFILLED,
    DONE,
    flatten,
    is_end_marker,
    iteration_of,
)
from tunecore.core.schedulers.base import TrialScheduler, signed
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.core.search.domains import grid_search
from tunecore.core.stopping import check_stop
from tunecore.model import (
    ExperimentEvent,
    InvalidFieldError,
    JsonDict,
    Mode,
    Resources,
    ResultReported,
    TrialStatus,
)
from tunecore.model.numbers import is_finite_number, is_int, is_number
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import walk

RUNNING = TrialStatus.RUNNING
TRIAL_KEY = "recorded_trial"
"""The one config key of a what-if trial: its recorded trial's number."""


@dataclass(frozen=True)
class RecordedTrial:
    trial_id: str
    results: tuple[JsonDict, ...]  # the metrics of each result, automatic keys removed
    seconds: tuple[float, ...]  # what each result took, as the log's times show it
    ended_itself: bool  # not its policy's doing: see `recording`
    stopped_early: bool  # TERMINATED without ending itself: its policy stopped it
    iterations: tuple[int, ...] = ()  # each result's training_iteration

    @property
    def starts(self) -> list[int]:
        """Where each of its runs began in `results`: [0], and for a trial
        that began again when resumed (no checkpoint to resume from), each
        result whose iteration went back."""
        iterations = self.iterations
        return [0] + [i for i in range(1, len(iterations)) if iterations[i] <= iterations[i - 1]]

    @property
    def restarted(self) -> bool:
        return len(self.starts) > 1


@dataclass(frozen=True)
class Recording:
    """What a recorded experiment gives a what-if."""

    trials: list[RecordedTrial]  # in creation order
    cluster: Resources  # what it last saw
    per_trial: Resources  # one trial's resources
    metric: str | None
    mode: Mode | None


@dataclass(frozen=True)
class Outcome:
    """One run of the trials: the original, or a what-if."""

    trials: int
    stopped_early: int  # stopped by the policy short of the run's longest trial
    iterations: int
    compute_s: float
    best: float | None
    best_trial: str | None
    cut_short: tuple[str, ...] = ()
    ran: tuple[int, ...] = ()  # iterations each trial got, in creation order


@dataclass(frozen=True)
class WhatIf:
    metric: str
    mode: Mode
    trial_ids: tuple[str, ...]  # in creation order
    original: Outcome
    what_if: Outcome
    restarted: tuple[str, ...] = ()
    """Trials that began again from their first iteration when resumed (a
    function trainable with no checkpoint to resume from); the what-if
    restarts them the same way, following their recorded runs in order."""

    def table(self) -> str:
        """Both runs side by side, as Markdown."""
        rows = [
            ("trials", self.original.trials, self.what_if.trials),
            ("stopped early", self.original.stopped_early, self.what_if.stopped_early),
            ("iterations", self.original.iterations, self.what_if.iterations),
            (
                "compute s",
                f"{self.original.compute_s:.1f}",
                f"{self.what_if.compute_s:.1f}",
            ),
            (f"best {self.metric} ({self.mode.value})", _best(self.original), _best(self.what_if)),
            ("curves cut short", "-", len(self.what_if.cut_short)),
        ]
        lines = ["| | original | what-if |", "|---|---:|---:|"]
        lines += [f"| {name} | {a} | {b} |" for name, a, b in rows]
        return "\n".join(lines)


def _best(outcome: Outcome) -> str:
    return "-" if outcome.best is None else f"{outcome.best:.6g} ({outcome.best_trial})"


def recording(path: str | Path) -> Recording:
    """The trials of the experiment at `path`, the cluster it saw (its last
    `ClusterResourcesChanged`), one trial's resources and its metric and
    mode. Walks the log: only results the core accepted count, and a
    trial *ended itself* when its end was not its policy's: its trainable
    said `done` (or returned), the run's stopping criterion was met, or the
    user's stopper stopped it. A criterion is a function of the result, and
    a stopper's verdict is in the log, so the what-if ends such a trial at
    the same result, if its policy lets it get that far."""
    contents = read_log(Path(path))
    results: dict[str, list[JsonDict]] = {}
    ended_itself: set[str] = set()
    final: list[ExperimentState] = []

    seconds: dict[str, list[float]] = {}
    since: dict[str, float] = {}  # when the core last started each trial, or it reported

    def collect(before: ExperimentState, event: ExperimentEvent, after: ExperimentState) -> None:
        final[:] = [after]
        for trial_id in _started(before, after):
            since[trial_id] = event.at
        if not isinstance(event, ResultReported):
            return
        criterion = after.trials[event.trial_id].spec.stopping_criterion
        if event.stopped_by is not None or check_stop(criterion, flatten(event.result)) is True:
            ended_itself.add(event.trial_id)
        if not is_end_marker(event.result):
            results.setdefault(event.trial_id, []).append(event.result)
            took = max(event.at - since.get(event.trial_id, event.at), 0.0)
            seconds.setdefault(event.trial_id, []).append(took)
        since[event.trial_id] = event.at

    walk(contents, BUILTIN, collect)
    if not final:
        raise ValueError(f"{path}: the experiment's log holds no event yet")
    state = final[0]
    trials = trials_in_order(state)
    recorded = [
        RecordedTrial(
            trial_id=trial.trial_id,
            results=tuple(_metrics(row) for row in results.get(trial.trial_id, [])),
            seconds=tuple(seconds.get(trial.trial_id, [])),
            ended_itself=trial.trial_id in ended_itself,
            stopped_early=trial.status is TrialStatus.TERMINATED
            and trial.trial_id not in ended_itself,
            iterations=tuple(iteration_of(row) for row in results.get(trial.trial_id, [])),
        )
        for trial in trials
    ]
    return Recording(
        trials=recorded,
        cluster=state.total if state.total is not None else Resources(cpu=1.0),
        per_trial=state.config.resources_per_trial,
        metric=state.config.metric,
        mode=state.config.mode,
    )


def _started(before: ExperimentState, after: ExperimentState) -> list[str]:
    """The trials the core started (or resumed) in one step: they left the
    pending or paused queue for RUNNING. An iteration's time counts from
    there, not from `TrialStarted`: a worker reports that when it has
    taken the trial, which on Ray comes with its first results, while the
    simulation starts a trial when the core says so."""
    created = range(before.created, after.created)  # ids are given in order
    candidates = [trial_id_of(after.config, number) for number in created]
    for queue, now in ((before.pending, after.pending), (before.paused, after.paused)):
        if queue is not now:
            kept = set(now)
            candidates += (t for t in queue if t not in kept)
    return [t for t in candidates if after.trials[t].status is RUNNING]


def _metrics(row: Mapping[str, object]) -> JsonDict:
    return {k: v for k, v in row.items() if k not in AUTOFILLED}  # type: ignore[misc]


WHAT_IF_OPTIONS: dict[str, tuple[Callable[[str], object], str]] = {
    "max_t": (float, "the most --time-attr a trial gets"),
    "grace_period": (float, "the --time-attr a trial gets before it can be stopped"),
    "reduction_factor": (float, "1/this of the trials go on at each rung"),
    "brackets": (int, "the number of brackets"),
    "min_samples_required": (int, "the trials that must report before any is stopped"),
    "time_attr": (str, "the result key progress is measured in"),
}
"""Each option's type and what it means (its help, with the schedulers it
applies to: the registry's `what_if` ones that have it `settable`)."""


def what_if_scheduler(name: str, options: Mapping[str, object]) -> TrialScheduler:
    """The scheduler `name` (one the registry offers to what-ifs) built
    with `options`: an unknown name, or an option it does not take, is an
    `InvalidFieldError` naming it and what is accepted."""
    offered = SCHEDULERS.choices(what_if=True)
    if name not in offered:
        raise InvalidFieldError("scheduler", name, f"one of {', '.join(offered)}")
    entry = SCHEDULERS.entry(name)
    for option in options:
        if option not in entry.settable:
            accepted = ", ".join(entry.settable) or "no options"
            raise InvalidFieldError(option, options[option], f"{name} takes {accepted}")
    scheduler: TrialScheduler = entry.resolve()(**options)
    return scheduler


def what_if(
    path: str | Path,
    scheduler: TrialScheduler,
    *,
    metric: str | None = None,
    mode: Mode | str | None = None,
) -> WhatIf:
    """Run the trials recorded at `path` again under `scheduler` and compare.
    `metric` and `mode` default to the recorded experiment's."""
    if isinstance(scheduler, PopulationBasedTraining):
        raise ValueError(
            f"what-if cannot run {type(scheduler).__name__}: it changes configs, and a "
            "recorded learning curve belongs to the config it ran with"
        )
    found = recording(path)
    metric = metric or found.metric
    chosen = mode or found.mode
    if metric is None or chosen is None:
        raise ValueError(
            f"{path}: the experiment names no metric and mode; pass "
            f"{setting('what_if', 'metric')} and {setting('what_if', 'mode')}"
        )
    mode = Mode(chosen)
    recorded = found.trials
    reported = (row.get(metric) for trial in recorded for row in trial.results)
    if any(trial.results for trial in recorded) and not any(map(is_finite_number, reported)):
        # A misspelt key would compare two columns of dashes and look like success.
        raise ValueError(
            f"{path}: {setting('what_if', 'metric', repr(metric))}: no trial reported "
            f"{metric!r} as a number"
        )
    per_trial = found.per_trial
    slots = max(1, int(found.cluster.cpu // per_trial.cpu)) if per_trial.cpu > 0 else 1

    starts = [t.starts for t in recorded]  # where each run of a trial began
    segment = [-1] * len(recorded)  # which of them the simulation follows now

    def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        number = _number(config)
        trial = recorded[number]
        if iteration == 1:  # a start, or a restart of a trial that saved nothing
            segment[number] += 1
        first = starts[number][min(segment[number], len(starts[number]) - 1)]
        end = next((s for s in starts[number] if s > first), len(trial.results))
        index = first + iteration - 1
        if index >= end:
            # The policy let it go on past its recorded curve: it ends here,
            # with a result of no metrics (nothing is invented), and is named.
            return {DONE: True}, 0.0
        metrics = dict(trial.results[index])
        metrics[_INDEX_KEY] = index
        if index == len(trial.results) - 1 and trial.ended_itself:
            metrics[DONE] = True
        return metrics, trial.seconds[index]

    with tempfile.TemporaryDirectory(prefix="tunecore-what-if-") as scratch:
        simulate(
            trainable,
            param_space={TRIAL_KEY: grid_search(list(range(len(recorded))))},
            tune_config=TuneConfig(scheduler=scheduler, metric=metric, mode=mode.value),
            run_config=RunConfig(verbose=0, name="what_if", storage_path=scratch),
            cluster=Resources(cpu=float(slots)),
            fresh_on_resume=lambda config: recorded[_number(config)].restarted,
        )
        simulated = recording(Path(scratch) / "what_if").trials  # grid order: by number
    original = _outcome(
        recorded,
        [range(len(t.results)) for t in recorded],
        [t.stopped_early for t in recorded],
        metric=metric,
        mode=mode,
    )
    replayed = [[_recorded_index(row) for row in trial.results] for trial in simulated]
    used = [[i for i in indices if i >= 0] for indices in replayed]
    cut = tuple(t.trial_id for t, r in zip(recorded, replayed, strict=True) if -1 in r)
    stopped = [  # by the policy: neither its own end nor its curve's
        -1 not in r and not (u and u[-1] == len(t.results) - 1 and t.ended_itself)
        for t, r, u in zip(recorded, replayed, used, strict=True)
    ]
    return WhatIf(
        metric=metric,
        mode=mode,
        trial_ids=tuple(t.trial_id for t in recorded),
        original=original,
        what_if=_outcome(recorded, used, stopped, metric=metric, mode=mode, cut_short=cut),
        restarted=tuple(t.trial_id for t in recorded if t.restarted),
    )


_INDEX_KEY = "recorded_result"
"""Where a simulated result says which recorded result it is."""


def _recorded_index(row: JsonDict) -> int:
    """The recorded result a simulated one replays; -1 for the end of a
    curve the policy wanted to go past."""
    index = row.get(_INDEX_KEY)
    return index if is_int(index) else -1


def _number(config: JsonDict) -> int:
    number = config[TRIAL_KEY]
    assert isinstance(number, int)
    return number


def _outcome(
    recorded: Sequence[RecordedTrial],
    used: Sequence[Sequence[int]],
    stopped: Sequence[bool],
    *,
    metric: str,
    mode: Mode,
    cut_short: tuple[str, ...] = (),
) -> Outcome:
    """One run's account: `used` holds, per trial, the recorded results it
    went through (their indices), in order."""
    best: float | None = None
    best_trial = None
    for trial, indices in zip(recorded, used, strict=True):
        for index in indices:
            value = trial.results[index].get(metric)
            if not is_number(value):
                continue
            score = float(value)
            if math.isnan(score):
                continue
            if best is None or signed(score, mode) > signed(best, mode):
                best, best_trial = score, trial.trial_id
    ran = [len(indices) for indices in used]
    longest = max(ran, default=0)
    return Outcome(
        trials=len(recorded),
        stopped_early=sum(1 for s, n in zip(stopped, ran, strict=True) if s and n < longest),
        iterations=sum(ran),
        compute_s=sum(
            sum(t.seconds[i] for i in indices) for t, indices in zip(recorded, used, strict=True)
        ),
        best=best,
        best_trial=best_trial,
        cut_short=cut_short,
        ran=tuple(ran),
    )
