"""The JSON the dashboard's page asks for, built from an `ExperimentView`.

Every text here comes from the experiment's log (names, configs, metric
names, error texts) and is data to the page, never markup: the page sets
it as text. Numbers that JSON cannot hold (NaN, infinities) become null.
Long texts are cut (`MAX_TEXT`) so one hostile value cannot bloat every
answer.
"""

from __future__ import annotations

import math
from typing import Any

from tunecore.api.dashboard.curves import Curve
from tunecore.api.dashboard.view import ExperimentView, TrialView
from tunecore.core.results import TRAINING_ITERATION
from tunecore.core.schedulers.asha_brackets import ASHABrackets
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.model import JsonValue, Mode, Resources
from tunecore.model.numbers import is_number

MAX_TEXT = 20_000
MAX_CURVES = 200
"""The most trials one curves request draws."""
MAX_RUNG_POINTS = 5000
"""The most trials one rung shows (the first that reached it)."""

TIME_TOTAL = "time_total_s"
X_AXES = (TRAINING_ITERATION, TIME_TOTAL)


def overview(view: ExperimentView, location: str, problem: str | None) -> dict[str, Any]:
    """Settings, progress, the best trial and how it improved, and errors."""
    state = view.state
    best = view.best[-1] if view.best else None
    errors = [
        {"trial": t.trial_id, "name": _text(t.name), "error": _text(t.error or "")}
        for t in sorted((view.trials[t] for t in view.errored), key=lambda t: t.order)
    ]
    return {
        "name": _text(state.config.trainable_name),
        "location": _text(location),
        "metric": _text(view.metric) if view.metric else None,
        "mode": view.mode.value if view.mode else None,
        "scheduler": _text(type(state.scheduler).__name__),
        "scheduler_settings": _text(state.scheduler.debug_string()),
        "searcher": _text(type(state.searcher).__name__) if state.searcher else None,
        "settings": _settings(view),
        "counts": view.status_counts(),
        "trials": len(view.trials),
        "events": view.events,
        "started_at": view.started_at,
        "updated_at": view.updated_at,
        "done": state.done,
        "stopping": _text(state.stopping) if state.stopping else None,
        "best": None
        if best is None
        else {
            "trial": best[2],
            "value": _number(best[1]),
            "name": _text(view.trials[best[2]].name),
            "config": _values(view.trials[best[2]].config),
        },
        "best_over_time": [[at, _number(value), trial] for at, value, trial in view.best],
        "errors": errors[:200],
        "problem": _text(problem) if problem else None,
        "version": view.version,
    }


def _settings(view: ExperimentView) -> dict[str, JsonValue]:
    config = view.state.config
    return {
        "max_failures": config.max_failures,
        "fail_fast": config.fail_fast,
        "time_budget_s": config.time_budget_s,
        "max_trials": config.max_trials,
        "stopping_criterion": _values(dict(config.stopping_criterion)),
        "resources_per_trial": _resources(config.resources_per_trial),
    }


def _resources(resources: Resources) -> str:
    """What a trial asks for, as `cpu=1, gpu=0.5` (what it asks for only)."""
    asked = {"cpu": resources.cpu, "gpu": resources.gpu, "memory": resources.memory}
    asked.update(resources.custom)
    return ", ".join(f"{name}={amount:g}" for name, amount in asked.items() if amount) or "nothing"


def trials(view: ExperimentView) -> dict[str, Any]:
    """The table: a row per trial, a column per searched hyperparameter and
    per reported metric (its last value)."""
    params, metrics = list(view.params), list(view.metrics)
    rows = [
        [
            t.trial_id,
            _text(t.name),
            t.status,
            t.iteration,
            _number(t.last.get(view.metric)) if view.metric else None,
            _number(t.best),
            _number(t.recent_average),
            [_value(t.config.get(key)) for key in params],
            [_number(t.last.get(key)) for key in metrics],
        ]
        for t in sorted(view.trials.values(), key=lambda t: t.order)
    ]
    return {
        "metric": _text(view.metric) if view.metric else None,
        "mode": view.mode.value if view.mode else None,
        "params": [_text(key) for key in params],
        "metrics": [_text(key) for key in metrics],
        "rows": rows,
        "version": view.version,
    }


def curves(view: ExperimentView, trial_ids: list[str], y: str | None, x: str) -> dict[str, Any]:
    """`y` against `x` for the chosen trials (the best ones when none is
    chosen), and which trials are the best."""
    metric = y or view.metric or next(iter(view.metrics), None)
    ranked = _ranked(view)
    chosen = [t for t in trial_ids if t in view.trials] or ranked[:10]
    series = {}
    for trial_id in chosen[:MAX_CURVES]:
        curve: Curve = view.trials[trial_id].curve
        if metric is not None:
            series[trial_id] = [[a, b] for a, b in curve.series(x, metric)]
    return {
        "metric": _text(metric) if metric else None,
        "x": x,
        "metrics": [_text(key) for key in view.metrics],
        "best": ranked[:5],
        "series": series,
        "names": {t: _text(view.trials[t].name) for t in series},
        "version": view.version,
    }


def trial(view: ExperimentView, trial_id: str) -> dict[str, Any] | None:
    """One trial's page: its config, its timeline of transitions with the
    reason for each, and its error."""
    found = view.trials.get(trial_id)
    if found is None:
        return None
    return {
        "trial": trial_id,
        "name": _text(found.name),
        "status": found.status,
        "iteration": found.iteration,
        "config": _values(found.config),
        "best": _number(found.best),
        "error": _text(found.error) if found.error else None,
        "timeline": [
            {
                "at": moment.at,
                "kind": moment.kind,
                "why": _text(moment.why),
                "iteration": moment.iteration,
            }
            for moment in found.timeline
        ],
        "version": view.version,
    }


def decisions(view: ExperimentView) -> dict[str, Any]:
    """What the policies decided across the experiment: how many of each
    transition, the rungs (ASHA, HyperBand) with their cutoffs and each
    trial's value there, and PBT's lineage."""
    kinds: dict[str, int] = {}
    for t in view.trials.values():
        for moment in t.timeline:
            kinds[moment.kind] = kinds.get(moment.kind, 0) + 1
    scheduler = view.state.scheduler
    return {
        "kinds": kinds,
        "metric": _text(view.metric) if view.metric else None,
        "time_attr": _text(getattr(scheduler, "time_attr", TRAINING_ITERATION)),
        "rungs": _rungs(view),
        "lineage": [
            {"trial": e.trial_id, "donor": e.donor, "iteration": e.iteration, "at": e.at}
            for e in view.exploits
        ],
        "names": {t.trial_id: _text(t.name) for t in view.trials.values()},
        "version": view.version,
    }


def _rungs(view: ExperimentView) -> list[dict[str, Any]]:
    """Each rung: its milestone, its cutoff (ASHA), and the value each trial
    that reached it had there, with whether it went on past it."""
    scheduler: object = view.state.scheduler
    metric = view.metric
    milestones: list[tuple[str, float, float | None]] = []
    if isinstance(scheduler, HyperBandScheduler):
        time_attr = scheduler.time_attr
        for number, band in sorted(scheduler.brackets.items()):
            for milestone in _hyperband_milestones(scheduler, band.s):
                milestones.append((f"bracket {number}", milestone, None))
    elif isinstance(scheduler, ASHABrackets):
        time_attr = scheduler.time_attr
        sign = -1.0 if (scheduler.mode or view.mode) is Mode.MIN else 1.0
        for index, bracket in enumerate(scheduler.rungs):
            for rung in bracket:
                cut = rung.cutoff(scheduler.reduction_factor) if rung.recorded else None
                shown = None if cut is None or math.isnan(cut) else cut * sign
                milestones.append((f"bracket {index}", float(rung.milestone), shown))
    if metric is None or not milestones:
        return []
    out = []
    for bracket_name, milestone, cutoff in sorted(milestones, key=lambda m: (m[0], m[1])):
        points = []
        for t in view.trials.values():
            at = _value_at(t, time_attr, metric, milestone)
            if at is not None:
                points.append([t.trial_id, _number(at[0]), at[1]])
                if len(points) == MAX_RUNG_POINTS:
                    break
        out.append(
            {
                "bracket": bracket_name,
                "milestone": milestone,
                "cutoff": _number(cutoff),
                "points": points,
            }
        )
    return out


def _hyperband_milestones(scheduler: HyperBandScheduler, s: int) -> list[float]:
    plans = scheduler.plans()
    return [float(m) for m in plans[s].milestones] if s in plans else []


def _value_at(
    trial: TrialView, time_attr: str, metric: str, milestone: float
) -> tuple[float, bool] | None:
    """The trial's value at its first result at or past `milestone`, and
    whether it reported past that result."""
    series = trial.curve.series(time_attr, metric)
    for index, (x, y) in enumerate(series):
        if x >= milestone:
            return y, index + 1 < len(series)
    return None


def _ranked(view: ExperimentView) -> list[str]:
    """Trial ids, best first (by best value of the objective)."""
    if view.mode is None:
        return [t.trial_id for t in sorted(view.trials.values(), key=lambda t: t.order)]
    sign = 1.0 if view.mode is Mode.MIN else -1.0
    scored = [t for t in view.trials.values() if t.best is not None]
    scored.sort(key=lambda t: (sign * (t.best or 0.0), t.order))
    return [t.trial_id for t in scored]


def _number(value: float | None) -> float | None:
    if value is None or math.isnan(value) or math.isinf(value):
        return None
    return value


def _text(value: str | None) -> str:
    text = value or ""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " [cut]"


def _value(value: JsonValue) -> JsonValue:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, float):
        return _number(value)
    if value is None or isinstance(value, bool | int) or is_number(value):
        return value
    return _text(str(value))


def _values(values: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {_text(key): _value(value) for key, value in values.items()}
