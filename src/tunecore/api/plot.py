"""`tunecore plot DIR`: an experiment's learning curves, with where each
trial was paused or stopped and why, and (under ASHA or HyperBand) its
rungs, drawn from the event log alone (finished or still running).

Everything is reconstructed by walking the log through the core
(`replay.walk`): a trial's curve is its accepted results; a pause or a stop
is marked at the result that led to it; under ASHA's stopping variant a
stop also shows the cutoff of the rung the trial was judged at, as it
stood at that moment (the scheduler's state right after that result), so
the reader sees the bar the trial missed. Needs the `plot` extra
(matplotlib); PNG, or HTML with the PNG inside.
"""

from __future__ import annotations

import base64
import io
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tunecore.api.spelling import setting
from tunecore.api.whatif import WhatIf
from tunecore.core.experiment import ExperimentState
from tunecore.core.results import DONE, TRAINING_ITERATION, is_end_marker
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.base import signed
from tunecore.core.schedulers.hyperband import HyperBandScheduler, band_plan
from tunecore.model import (
    ExperimentEvent,
    Mode,
    ResultReported,
    TrialState,
    TrialStatus,
)
from tunecore.model.numbers import is_finite_number
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import BUILTIN, walk

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@dataclass
class TrialCurve:
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    paused_at: list[int] = field(default_factory=list)  # indexes into xs
    exploited_at: list[int] = field(default_factory=list)  # first index after each exploit
    stopped: bool = False  # by the policy (not by its own end or an error)
    cutoff: float | None = None  # the rung cutoff it missed, when known
    errored: bool = False


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


def collect(path: str | Path, metric: str | None = None) -> Drawing:
    """Walk the log at `path` into curves (the experiment's metric unless
    `metric` names another)."""
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
            donor = _donor(before, after.trials[trial_id])  # only for a changed spec: O(trials)
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
            if curve.stopped and curve.xs and isinstance(judge, ASHAScheduler):
                curve.cutoff = _cutoff_at(judge, curve.xs[-1], after.config.mode)

    walk(contents, BUILTIN, visit)
    if not last or "metric" not in names:
        raise ValueError(f"{path}: no metric to plot (pass one: {setting('collect', 'metric')})")
    state = last[0]
    for trial_id, curve in curves.items():
        curve.errored = state.trials[trial_id].status is TrialStatus.ERROR
    return Drawing(names["metric"], names["x"], curves, _rungs(state, curves), exploits)


_RUNGED = (ASHAScheduler, HyperBandScheduler)


Rungs = dict[str, list[tuple[float, int]]]
"""By bracket: (milestone, trials that reached it)."""


def _rungs(state: ExperimentState, curves: dict[str, TrialCurve]) -> Rungs:
    """Each bracket's rungs and how many trials reached each: ASHA counts
    the results each rung recorded; HyperBand's brackets keep their
    members, whose curves say how far each got against its bracket's
    plan."""
    scheduler = state.scheduler
    if isinstance(scheduler, ASHAScheduler):
        return {
            f"bracket {index}": sorted((float(rung.milestone), rung.recorded) for rung in rungs)
            for index, rungs in enumerate(scheduler.rungs)
        }
    if isinstance(scheduler, HyperBandScheduler):
        plans = {plan.s: plan for plan in band_plan(scheduler.max_t, scheduler.reduction_factor)}
        drawn: Rungs = {}
        for number, bracket in sorted(scheduler.brackets.items()):
            reached = [max(curves[t].xs, default=0.0) for t in bracket.members if t in curves]
            drawn[f"bracket {number} (s={bracket.s})"] = [
                (float(m), sum(1 for x in reached if x >= m)) for m in plans[bracket.s].milestones
            ]
        return drawn
    return {}


def _donor(before: ExperimentState, trial: TrialState) -> str | None:
    """The trial whose checkpoint `trial` now restores from (PBT's donor)."""
    restoring = trial.restoring_from
    if restoring is None:
        return None
    for other in before.trials.values():
        held = (*other.checkpoints.persistent, other.checkpoints.memory)
        if other.trial_id != trial.trial_id and any(
            ref is not None and ref.path == restoring.path for ref in held
        ):
            return other.trial_id
    return None


def _cutoff_at(scheduler: ASHAScheduler, x: float, mode: Mode | None) -> float | None:
    """The cutoff of the rung at milestone `x` (the highest one reached at or
    below it), as a metric value: ASHA keeps scores signed, greater better."""
    best: tuple[float, float] | None = None
    for bracket in scheduler.rungs:
        for rung in bracket:
            if rung.milestone <= x and rung.recorded and (best is None or rung.milestone > best[0]):
                cut = rung.cutoff(scheduler.reduction_factor)
                if cut is not None and not math.isnan(cut):
                    best = (float(rung.milestone), cut)
    if best is None:
        return None
    return signed(best[1], scheduler.mode or mode or Mode.MIN)  # signed is its own inverse


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
    """Draw `drawing` into `out` (.png, or .html with the PNG inside)."""
    target = _picture(out)
    pyplot = _pyplot()
    extras = [
        draw
        for draw, wanted in ((_draw_rungs, drawing.rungs), (_draw_lineage, drawing.exploits))
        if wanted
    ]
    panels = 1 + len(extras)
    figure, axes = pyplot.subplots(
        1,
        panels,
        figsize=(8 + 3.5 * len(extras), 5),
        squeeze=False,
        gridspec_kw={"width_ratios": [3] + [1.3] * len(extras)},
    )
    _draw_curves(axes[0][0], drawing)
    for index, draw in enumerate(extras, start=1):
        draw(axes[0][index], drawing)
    return _save(pyplot, figure, target, drawing.metric)


def render_what_if(result: WhatIf, out: str | Path) -> Path:
    """The what-if against the original, trial by trial: the iterations
    each got under each policy, the curves cut short marked."""
    target = _picture(out)
    pyplot = _pyplot()
    figure, ax = pyplot.subplots(figsize=(max(8.0, 0.25 * len(result.trial_ids) + 3), 4.5))
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
    ax.set_title(
        f"compute {result.original.compute_s:.0f} s -> {result.what_if.compute_s:.0f} s; "
        f"best {result.metric}: {result.original.best:.4g} -> {result.what_if.best:.4g}"
        if result.original.best is not None and result.what_if.best is not None
        else f"compute {result.original.compute_s:.0f} s -> {result.what_if.compute_s:.0f} s"
    )
    ax.legend(loc="best", fontsize=8)
    return _save(pyplot, figure, target, f"what-if: {result.metric}")


def _save(pyplot: Any, figure: Any, target: Path, title: str) -> Path:
    """Write the figure as PNG, or as an HTML page holding the PNG."""
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    pyplot.close(figure)
    if target.suffix.lower() == ".html":
        encoded = base64.b64encode(buffer.getvalue()).decode()
        image = f'<img alt="{title}" src="data:image/png;base64,{encoded}">'
        target.write_text(f"<!doctype html><title>{title}</title>{image}\n")
    else:
        target.write_bytes(buffer.getvalue())
    return target


def _draw_curves(ax: Axes, drawing: Drawing) -> None:
    """Each trial's curve in grey, its end marked by how it ended."""
    labelled: set[str] = set()

    def once(label: str) -> str | None:
        if label in labelled:
            return None
        labelled.add(label)
        return label

    for curve in drawing.curves.values():
        if not curve.xs:
            continue
        bounds = [0, *curve.exploited_at, len(curve.xs)]
        for start, end in itertools.pairwise(bounds):
            ax.plot(curve.xs[start:end], curve.ys[start:end], color="0.55", linewidth=0.9)
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
            ax.plot(end_x, end_y, "k^", label=once("error"))
        elif curve.stopped:
            ax.plot(end_x, end_y, "x", color="tab:red", label=once("stopped by the policy"))
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
            )
        for index in curve.paused_at:
            ax.plot(
                curve.xs[index],
                curve.ys[index],
                "s",
                color="tab:orange",
                markersize=4,
                label=once("paused"),
            )
    ax.set_xlabel(drawing.x_key)
    ax.set_ylabel(drawing.metric)
    ax.set_title(f"{len(drawing.curves)} trials: {drawing.metric} per {drawing.x_key}")
    if labelled:
        ax.legend(loc="best", fontsize=8)


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
    ax.set_title(f"PBT lineage: {len(drawing.exploits)} exploits")
