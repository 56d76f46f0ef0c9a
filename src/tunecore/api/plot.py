"""`tunecore plot DIR`: an experiment's learning curves, with where each
trial was paused or stopped and why, and (under ASHA or HyperBand) its
rungs, drawn from the event log alone (finished or still running).

Everything is reconstructed by walking the log through the core
(`replay.walk`): a trial's curve is its accepted results; a pause or a stop
is marked at the result that led to it; under ASHA's stopping variant a
stop also shows the cutoff of the rung the trial was judged at, as it
stood at that moment (the scheduler's state right after that result), so
the reader sees the bar the trial missed. The best few trials (by the
metric's last value, as `ResultGrid.get_best_result` ranks them) are
named in colour, the rest thin grey. Needs the `plot` extra (matplotlib):
a PNG, or an interactive HTML page (`tunecore.api.plot_page`).

Whatever is written never follows a symbolic link in its place (the
experiment directory may be writable by others): it is written beside
and renamed over it (`own_files.write_atomic`).

Why one module of over 400 lines: collecting the drawing from the log and
drawing it are read together (every mark drawn is a fact collected above
it); the interactive page's own pieces already live in `plot_page`.
"""

from __future__ import annotations

import io
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tunecore.api import plot_page
from tunecore.api.spelling import setting
from tunecore.api.whatif import WhatIf
from tunecore.core.checkpoints import holder_of
from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import BUILTIN
from tunecore.core.naming import trial_name
from tunecore.core.results import DONE, TRAINING_ITERATION, flatten, is_end_marker
from tunecore.core.schedulers.asha_brackets import ASHABrackets
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.model import (
    ExperimentEvent,
    InvalidFieldError,
    JsonValue,
    Mode,
    ModeArg,
    ResultReported,
    TrialState,
    TrialStatus,
)
from tunecore.model.numbers import is_finite_number
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import walk
from tunecore.shell.storage.own_files import write_atomic
from tunecore.shell.trainable.errors import failure_reason

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

BEST = 5
"""How many of the best trials are named in colour."""

HIGHLIGHTS = ("#1f77b4", "#e377c2", "#8c564b", "#17becf", "#bcbd22")
"""The best trials' colours, best first (none of the markers' colours);
the HTML page's script uses the same."""


@dataclass
class TrialCurve:
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    paused_at: list[int] = field(default_factory=list)  # indexes into xs
    exploited_at: list[int] = field(default_factory=list)  # first index after each exploit
    stopped: bool = False  # by the policy (not by its own end or an error)
    cutoff: float | None = None  # the rung cutoff it missed, when known
    errored: bool = False
    name: str = ""  # as Ray names it (`train_0a1b2_00001`), or the custom name
    params: dict[str, str] = field(default_factory=dict)
    """Its key config values, shown: what the search chose (the evaluated
    params), else the config values that differ between trials."""
    error: str | None = None  # the line saying why it failed, when it did


@dataclass(frozen=True)
class Drawing:
    """What `plot` draws, for tests and for other renderers."""

    metric: str
    x_key: str
    curves: dict[str, TrialCurve]
    rungs: dict[str, list[tuple[float, int]]]
    """ASHA's and HyperBand's rungs, by bracket: (milestone, trials that
    reached it); empty under other schedulers."""
    exploits: list[tuple[float, str, str]] = field(default_factory=list)
    """PBT's exploits: (x, the trial that took over, the trial it took from)."""
    mode: Mode | None = None
    """Which way the metric is better; None (nothing ranked) for a metric
    other than the experiment's unless given."""

    def best(self, count: int = BEST) -> list[str]:
        """The `count` best trials, best first, by the last value of their
        curve (Ray's default scope, "last"); none without a mode."""
        if self.mode is None:
            return []
        drawn = [(curve.ys[-1], trial_id) for trial_id, curve in self.curves.items() if curve.ys]
        drawn.sort(key=lambda pair: pair[0], reverse=self.mode is Mode.MAX)
        return [trial_id for _, trial_id in drawn[:count]]

    @property
    def integer_x(self) -> bool:
        """Whether the x axis counts (iterations): every x a whole number."""
        return all(x.is_integer() for curve in self.curves.values() for x in curve.xs)


def collect(path: str | Path, metric: str | None = None, mode: ModeArg | None = None) -> Drawing:
    """Walk the log at `path` into curves (the experiment's metric unless
    `metric` names another, ranked by the experiment's mode unless `mode`
    is given: `Mode.MIN` or `"min"`, as Ray's scripts write it)."""
    if mode is not None and mode not in tuple(Mode):
        raise InvalidFieldError("collect.mode", mode, "'min' or 'max'")
    contents = read_log(Path(path))
    curves: dict[str, TrialCurve] = {}
    exploits: list[tuple[float, str, str]] = []
    last: list[ExperimentState] = []
    names: dict[str, str] = {}

    def visit(before: ExperimentState, event: ExperimentEvent, after: ExperimentState) -> None:
        last[:] = [after]
        if not names:  # the scheduler and the config never change in a run
            scheduler = after.scheduler
            names["x"] = (
                scheduler.time_attr if isinstance(scheduler, _RUNGED) else TRAINING_ITERATION
            )
            chosen = metric or after.config.metric
            if chosen is not None:
                names["metric"] = chosen
            if mode is None and chosen == after.config.metric and after.config.mode:
                names["mode"] = after.config.mode
        if not isinstance(event, ResultReported) or "metric" not in names:
            return
        trial_id = event.trial_id
        curve = curves.setdefault(trial_id, TrialCurve())
        if not is_end_marker(event.result):
            x, y = event.result.get(names["x"]), event.result.get(names["metric"])
            if is_finite_number(x) and is_finite_number(y):
                curve.xs.append(float(x))
                curve.ys.append(float(y))
        if curve.xs and before.trials[trial_id].spec != after.trials[trial_id].spec:
            taker = after.trials[trial_id]  # only for a changed spec: O(trials)
            donor = holder_of(before.trials.values(), taker.restoring_from, trial_id)
            if donor is not None:
                exploits.append((curve.xs[-1], trial_id, donor))
                curve.exploited_at.append(len(curve.xs))
        was, now = before.trials[trial_id].status, after.trials[trial_id].status
        if was is TrialStatus.RUNNING and now is TrialStatus.PAUSED and curve.xs:
            curve.paused_at.append(len(curve.xs) - 1)
        elif was is TrialStatus.RUNNING and now is TrialStatus.TERMINATED:
            ended_itself = event.result.get(DONE) is True or is_end_marker(event.result)
            scheduler = after.scheduler
            at_max_t = (
                isinstance(scheduler, _RUNGED)
                and bool(curve.xs)
                and curve.xs[-1] >= scheduler.max_t
            )
            curve.stopped = not ended_itself and not at_max_t
            judge = before.scheduler  # the bar as it stood when the result came
            if curve.stopped and curve.xs and isinstance(judge, ASHABrackets):
                reached = judge.cutoffs_reached(curve.xs[-1], after.config.mode)
                curve.cutoff = next((cut for _, cut in reached if cut is not None), None)

    walk(contents, BUILTIN, visit)
    if not last or "metric" not in names:
        raise ValueError(f"{path}: no metric to plot (pass one: {setting('collect', 'metric')})")
    state = last[0]
    _name_trials(curves, state)
    chosen_mode = Mode(mode) if mode else (Mode(names["mode"]) if "mode" in names else None)
    return Drawing(
        names["metric"], names["x"], curves, _rungs(state, curves), exploits, chosen_mode
    )


def _name_trials(curves: dict[str, TrialCurve], state: ExperimentState) -> None:
    """What the log's last state says of each drawn trial: its name, key
    config, and whether (and why) it failed."""
    shown = _key_params([state.trials[trial_id] for trial_id in curves])
    for trial_id, curve in curves.items():
        trial = state.trials[trial_id]
        curve.errored = trial.status is TrialStatus.ERROR
        curve.name = trial_name(trial.spec)
        curve.params = shown[trial_id]
        if trial.error_message:
            curve.error = failure_reason(trial.error_message)


MAX_PARAMS = 8
"""How many config values a trial shows at most."""


def _key_params(trials: list[TrialState]) -> dict[str, dict[str, str]]:
    """Each trial's key config values as text: the evaluated params when
    any trial has them (what the search chose), else the flattened config
    values that are not the same in every trial; at most `MAX_PARAMS`."""
    if any(trial.spec.evaluated_params for trial in trials):
        values = {t.trial_id: flatten(t.spec.evaluated_params) for t in trials}
    else:
        configs = {t.trial_id: flatten(t.spec.config) for t in trials}
        keys = dict.fromkeys(key for config in configs.values() for key in config)
        varying = [
            key for key in keys if len({_shown(config.get(key)) for config in configs.values()}) > 1
        ]
        values = {
            trial_id: {key: config[key] for key in varying if key in config}
            for trial_id, config in configs.items()
        }
    return {
        trial_id: {key: _shown(value) for key, value in list(params.items())[:MAX_PARAMS]}
        for trial_id, params in values.items()
    }


def _shown(value: JsonValue) -> str:
    """A config value as a reader wants it: a float to 4 significant
    digits, lists and dicts as JSON, anything else as Python prints it."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


_RUNGED = (ASHABrackets, HyperBandScheduler)


Rungs = dict[str, list[tuple[float, int]]]
"""By bracket: (milestone, trials that reached it)."""


def _rungs(state: ExperimentState, curves: dict[str, TrialCurve]) -> Rungs:
    """Each bracket's rungs and how many trials reached each: ASHA counts
    the results each rung recorded; HyperBand's brackets keep their
    members, whose curves say how far each got against its bracket's
    plan."""
    scheduler = state.scheduler
    if isinstance(scheduler, ASHABrackets):
        return {
            f"bracket {index}": sorted((float(rung.milestone), rung.recorded) for rung in rungs)
            for index, rungs in enumerate(scheduler.rungs)
        }
    if isinstance(scheduler, HyperBandScheduler):
        plans = scheduler.plans()
        drawn: Rungs = {}
        for number, bracket in sorted(scheduler.brackets.items()):
            reached = [max(curves[t].xs, default=0.0) for t in bracket.members if t in curves]
            drawn[f"bracket {number} (s={bracket.s})"] = [
                (float(m), sum(1 for x in reached if x >= m)) for m in plans[bracket.s].milestones
            ]
        return drawn
    return {}


def _pyplot() -> Any:
    try:
        import matplotlib  # noqa: PLC0415 - the optional `plot` extra

        matplotlib.use("Agg")
        from matplotlib import pyplot  # noqa: PLC0415
    except ImportError as error:
        raise ImportError('tunecore plot needs matplotlib: pip install "tunecore[plot]"') from error
    return pyplot


PICTURE_SUFFIXES = (".png", ".html")


def _picture(out: str | Path) -> Path:
    """`out` as a path to draw into; a ValueError unless it ends in one of
    `PICTURE_SUFFIXES`, before anything is drawn."""
    target = Path(out)
    if target.suffix.lower() not in PICTURE_SUFFIXES:
        raise ValueError(f"{str(target)!r} must end in .png or .html")
    return target


def render(drawing: Drawing, out: str | Path) -> Path:
    """Draw `drawing` into `out`: a PNG, or (.html) an interactive page
    with the PNG below it."""
    target = _picture(out)
    png = _png(figure_of(drawing))
    if target.suffix.lower() == ".html":
        title = f"{drawing.metric} per {drawing.x_key}: {len(drawing.curves)} trials"
        write_atomic(target, plot_page.interactive(title, page_data(drawing), png), shared=True)
    else:
        write_atomic(target, png, shared=True)
    return target


def page_data(drawing: Drawing) -> dict[str, Any]:
    """What the HTML page draws (`plot_page.js` reads it): every trial's
    curve, name, key config, how it ended, and its rank among the best;
    the trials best first (in the log's order without a mode)."""
    rank = {trial_id: n for n, trial_id in enumerate(drawing.best())}
    ranked = drawing.best(len(drawing.curves))
    placed = set(ranked)
    order = [*ranked, *(trial_id for trial_id in drawing.curves if trial_id not in placed)]
    return {
        "metric": drawing.metric,
        "x_key": drawing.x_key,
        "integer_x": drawing.integer_x,
        "colours": HIGHLIGHTS,
        "trials": [_trial_data(t, drawing.curves[t], rank.get(t)) for t in order],
    }


def _trial_data(trial_id: str, curve: TrialCurve, rank: int | None) -> dict[str, Any]:
    return {
        "id": trial_id,
        "name": curve.name,
        "params": curve.params,
        "xs": curve.xs,
        "ys": curve.ys,
        "paused": curve.paused_at,
        "exploited": curve.exploited_at,
        "end": "error" if curve.errored else "stopped" if curve.stopped else "ended",
        "error": curve.error,
        "rank": rank,
    }


def figure_of(drawing: Drawing) -> Figure:
    """The curves, and beside them ASHA's or HyperBand's rungs and PBT's
    lineage when there are any."""
    pyplot = _pyplot()
    extras = [
        draw
        for draw, wanted in ((_draw_rungs, drawing.rungs), (_draw_lineage, drawing.exploits))
        if wanted
    ]
    panels = 1 + len(extras)
    figure: Figure
    figure, axes = pyplot.subplots(
        1,
        panels,
        figsize=(8 + 3.5 * len(extras), 5.5),
        squeeze=False,
        layout="constrained",
        gridspec_kw={"width_ratios": [3] + [1.3] * len(extras)},
    )
    _draw_curves(axes[0][0], drawing)
    for index, draw in enumerate(extras, start=1):
        draw(axes[0][index], drawing)
    return figure


def render_what_if(result: WhatIf, out: str | Path) -> Path:
    """The what-if against the original, trial by trial: the iterations
    each got under each policy, the curves cut short marked (.png, or
    .html holding the PNG)."""
    target = _picture(out)
    png = _png(what_if_figure(result))
    if target.suffix.lower() == ".html":
        write_atomic(target, plot_page.picture(f"what-if: {result.metric}", png), shared=True)
    else:
        write_atomic(target, png, shared=True)
    return target


def what_if_figure(result: WhatIf) -> Figure:
    """The bars of `render_what_if`."""
    pyplot = _pyplot()
    figure: Figure
    figure, ax = pyplot.subplots(
        figsize=(max(8.0, 0.25 * len(result.trial_ids) + 3), 4.5), layout="constrained"
    )
    positions = list(range(len(result.trial_ids)))
    ax.bar(
        [p - 0.2 for p in positions],
        result.original.ran,
        width=0.4,
        color="0.6",
        label=f"original: {result.original.iterations} iterations",
    )
    ax.bar(
        [p + 0.2 for p in positions],
        result.what_if.ran,
        width=0.4,
        color="tab:blue",
        label=f"what-if: {result.what_if.iterations} iterations",
    )
    cut = set(result.what_if.cut_short)
    for position, trial_id in enumerate(result.trial_ids):
        if trial_id in cut:
            ax.plot(
                position + 0.2,
                result.what_if.ran[position],
                "v",
                color="tab:red",
                label="curve cut short" if trial_id == result.what_if.cut_short[0] else None,
            )
    ax.set_xticks(positions, [t[-5:] for t in result.trial_ids], rotation=90, fontsize=7)
    ax.set_ylabel("iterations")
    _count_on(ax.yaxis)
    ax.set_title(
        f"compute {result.original.compute_s:.0f} s -> {result.what_if.compute_s:.0f} s; "
        f"best {result.metric}: {result.original.best:.4g} -> {result.what_if.best:.4g}"
        if result.original.best is not None and result.what_if.best is not None
        else f"compute {result.original.compute_s:.0f} s -> {result.what_if.compute_s:.0f} s"
    )
    ax.legend(loc="best", fontsize=8)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    _pyplot().close(figure)
    return buffer.getvalue()


def _count_on(axis: Any) -> None:
    """Ticks at whole numbers only: the axis counts (trials, iterations)."""
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415 - the optional `plot` extra

    axis.set_major_locator(MaxNLocator(integer=True))


LABEL_CHARS = 60
"""How much of a best trial's name and config its legend entry shows."""


def best_label(drawing: Drawing, trial_id: str) -> str:
    """A best trial's legend entry: its name, last value and key config."""
    curve = drawing.curves[trial_id]
    params = ", ".join(f"{key}={value}" for key, value in list(curve.params.items())[:3])
    text = f"{curve.name} ({drawing.metric} {curve.ys[-1]:.4g})"
    text = f"{text}: {params}" if params else text
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _draw_curves(ax: Axes, drawing: Drawing) -> None:
    """Each trial's curve, thin grey but for the best few in colour (named
    in the legend); its end marked by how it ended."""
    labelled: set[str] = set()

    def once(label: str) -> str | None:
        if label in labelled:
            return None
        labelled.add(label)
        return label

    best = drawing.best()
    colours = dict(zip(best, HIGHLIGHTS, strict=False))
    others = [trial_id for trial_id in drawing.curves if trial_id not in colours]
    for trial_id in [*others, *reversed(best)]:  # the best drawn last, on top
        curve = drawing.curves[trial_id]
        if not curve.xs:
            continue
        colour = colours.get(trial_id)
        style: dict[str, Any] = (
            {"color": colour, "linewidth": 2.0, "zorder": 3}
            if colour
            else {"color": "0.6", "linewidth": 0.8, "alpha": 0.7, "zorder": 2}
        )
        bounds = [0, *curve.exploited_at, len(curve.xs)]
        for piece, (start, end) in enumerate(itertools.pairwise(bounds)):
            label = best_label(drawing, trial_id) if colour and piece == 0 else None
            ax.plot(curve.xs[start:end], curve.ys[start:end], label=label, **style)
        _mark(ax, curve, once)
    ax.set_xlabel(drawing.x_key)
    ax.set_ylabel(drawing.metric)
    if drawing.integer_x:
        _count_on(ax.xaxis)
    lowest = "lowest" if drawing.mode is Mode.MIN else "highest"
    ranked = f"; in colour the {len(best)} with the {lowest} last value" if best else ""
    ax.set_title(
        f"{len(drawing.curves)} trials: {drawing.metric} per {drawing.x_key}{ranked}", fontsize=10
    )
    handles, labels = ax.get_legend_handles_labels()
    if handles:  # the best first, best at the top, then what the markers mean
        first = {best_label(drawing, trial_id): n for n, trial_id in enumerate(best)}
        order = sorted(range(len(labels)), key=lambda i: first.get(labels[i], len(first)))
        ax.legend(
            [handles[i] for i in order],
            [labels[i] for i in order],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.12),
            ncol=2,
            fontsize=7,
        )


def _mark(ax: Axes, curve: TrialCurve, once: Any) -> None:
    """Where `curve` was exploited or paused, and how it ended."""
    for start in curve.exploited_at:
        if 0 < start < len(curve.xs):
            ax.plot(
                curve.xs[start - 1 : start + 1],
                curve.ys[start - 1 : start + 1],
                ":",
                color="tab:purple",
                label=once("PBT exploit (took a better trial's checkpoint)"),
            )
    end_x, end_y = curve.xs[-1], curve.ys[-1]
    if curve.errored:
        ax.plot(end_x, end_y, "k^", label=once("error"), zorder=4)
    elif curve.stopped:
        ax.plot(end_x, end_y, "x", color="tab:red", label=once("stopped by the policy"), zorder=4)
        if curve.cutoff is not None:
            ax.plot(
                [end_x - 0.3, end_x + 0.3],
                [curve.cutoff] * 2,
                color="tab:red",
                linewidth=2,
                alpha=0.6,
                label=once("rung cutoff it missed"),
            )
    else:
        ax.plot(
            end_x,
            end_y,
            "o",
            color="tab:green",
            markersize=4,
            label=once("ran to its end (or max_t)"),
            zorder=4,
        )
    for index in curve.paused_at:
        ax.plot(
            curve.xs[index],
            curve.ys[index],
            "s",
            color="tab:orange",
            markersize=4,
            label=once("paused"),
            zorder=4,
        )


def _draw_rungs(ax: Axes, drawing: Drawing) -> None:
    """How many trials reached each rung: a bar per bracket at each
    milestone, the brackets side by side."""
    milestones = sorted({m for rungs in drawing.rungs.values() for m, _ in rungs})
    position = {m: i for i, m in enumerate(milestones)}
    width = 0.8 / len(drawing.rungs)
    for index, (label, rungs) in enumerate(drawing.rungs.items()):
        offset = (index - (len(drawing.rungs) - 1) / 2) * width
        xs = [position[m] + offset for m, _ in rungs]
        ax.bar(xs, [count for _, count in rungs], width=width, label=label)
    ax.set_xticks(range(len(milestones)), [f"{m:g}" for m in milestones])
    ax.set_xlabel(f"rung ({drawing.x_key})")
    ax.set_ylabel("trials that reached it")
    _count_on(ax.yaxis)
    ax.set_title("rungs")
    if len(drawing.rungs) > 1:
        ax.legend(loc="best", fontsize=8)


def _draw_lineage(ax: Axes, drawing: Drawing) -> None:
    """PBT's lineage: a row per trial over time, an arrow from the donor's
    row to the trial that took its checkpoint, at the time it did."""
    order = list(drawing.curves)
    row = {trial_id: n for n, trial_id in enumerate(order)}
    for trial_id, curve in drawing.curves.items():
        if curve.xs:
            ax.plot([curve.xs[0], curve.xs[-1]], [row[trial_id]] * 2, color="0.7", linewidth=3)
    for x, taker, donor in drawing.exploits:
        ax.annotate(
            "",
            xy=(x, row[taker]),
            xytext=(x, row[donor]),
            arrowprops={"arrowstyle": "->", "color": "tab:purple", "linewidth": 1.2},
        )
    ax.set_yticks(range(len(order)), [t[-5:] for t in order], fontsize=7)
    ax.set_xlabel(drawing.x_key)
    if drawing.integer_x:
        _count_on(ax.xaxis)
    ax.set_title(f"PBT lineage: {len(drawing.exploits)} exploits")
