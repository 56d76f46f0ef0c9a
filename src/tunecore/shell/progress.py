"""What the user sees while an experiment runs, and after it.

Three renderings of one `ExperimentState`, all pure functions of it (no
clock, no I/O), so tests compare them to hand-computed text:

- `status_lines`: the seed's `debug_string` as lines (the plain-text form,
  for logs and CI);
- `render_table`: the same information as a `rich.table.Table`;
- `final_summary`: counts, the best trial and the errored ones, at the end.

`ProgressReporter` prints them: a live table in a terminal, plain text
otherwise, nothing when quiet. It reads time only from the `now` it is given
(or the clock it was built with), so tests never sleep.

Which rows are shown. At most `max_rows` trials are listed, shared fairly
between statuses the way the seed does it: one row per status in turn
(statuses in name order) while any status still has trials without a row.
Within a status trials are in natural order of their experiment tag ("2_x"
before "10_x"), then creation order. A status with more trials than rows
shows the first and the last ones with "... N not shown" between. The seed
shows `rows // 2` at each end, which wastes a row when `rows` is odd and,
for `rows == 1`, prints every trial (its `trials[-0:]` is the whole list);
here the head gets the odd row, so exactly `rows` trials are shown.

Why one module of over 400 lines: the three renderings of one state share
their row selection and cell formatting, and each is a pure function tested
against hand-computed text.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.table import Table
from rich.text import Text

from tunecore.core.experiment import ExperimentState, trials_in_order
from tunecore.core.naming import trial_name
from tunecore.core.results import TIME_TOTAL_S, TRAINING_ITERATION, flatten
from tunecore.core.search.base import declining_by
from tunecore.core.search.declines import GIVE_UP_AFTER
from tunecore.model import JsonValue, Mode, Resources, TrialState, TrialStatus
from tunecore.model.numbers import is_number
from tunecore.shell.interrupts import INTERRUPTED
from tunecore.shell.progress_rows import Ranked, TrialRows, by_status, metric_value, ranked
from tunecore.shell.resume_hint import resume_command_line
from tunecore.shell.storage.layout import to_json_value
from tunecore.shell.trainable.errors import failure_reason

MAX_CONFIG_CHARS = 300
"""A config longer than this is cut in the status header (the final summary
shows it whole)."""

MAX_CONFIG_COLUMNS = 5
"""Config keys shown as parameters when no trial has searched parameters
(every searched parameter is shown, as in Ray)."""

MAX_PARAM_CHARS = 20
"""A parameter value longer than this is cut in the status (Ray's
`max_column_length`)."""

# -- selecting and ordering rows ---------------------------------------------


NameOf = Callable[[TrialState], str]
"""How a trial is named on screen: `TuneConfig.trial_name_creator`, or
`spec_name` (the spec's own name) by default."""


@dataclasses.dataclass(frozen=True)
class Columns:
    """What the status shows besides the experiment's metric (Ray's
    `CLIReporter` columns): more metrics, and the parameters to show
    instead of the ones chosen by default, each result key mapped to its
    header."""

    metrics: Mapping[str, str] = dataclasses.field(default_factory=dict)
    parameters: Mapping[str, str] | None = None
    sort_by_metric: bool = False
    """Each status's trials best first by the experiment's metric (those
    without it last), instead of by name: Ray's `sort_by_metric`. A redraw
    then sorts the trials it draws, so it costs their number."""
    max_column_length: int = MAX_PARAM_CHARS
    max_error_rows: int | None = None
    """Errored trials listed in the final summary (None: all)."""

    def ordered(
        self,
        groups: Mapping[TrialStatus, Sequence[TrialState]],
        metric: str | None,
        mode: Mode | None,
    ) -> Mapping[TrialStatus, Sequence[TrialState]]:
        """`groups` in the order the rows are shown (see `sort_by_metric`)."""
        if not self.sort_by_metric or metric is None or mode is None:
            return groups

        def rank(numbered: tuple[int, TrialState]) -> tuple[bool, Ranked]:
            number, trial = numbered
            found = ranked(trial, number, metric, mode)
            return (False, found) if found is not None else (True, (0.0, number, ""))

        return {
            status: [trial for _, trial in sorted(enumerate(trials), key=rank)]
            for status, trials in groups.items()
        }

    def parameter_keys(self, shown: Iterable[TrialState]) -> list[str]:
        """The parameter columns: the ones chosen, else the searched
        parameters of the trials `shown` (`parameter_keys`)."""
        if self.parameters is not None:
            return list(self.parameters)
        return parameter_keys(shown)

    def metric_keys(self, metric: str | None) -> dict[str, str]:
        """The metric columns, the experiment's first."""
        shown = {} if metric is None else {metric: metric}
        shown.update({k: v for k, v in self.metrics.items() if k != metric})
        return shown


def spec_name(trial: TrialState) -> str:
    return trial_name(trial.spec)


def fair_limits(counts: dict[TrialStatus, int], max_rows: int) -> dict[TrialStatus, int]:
    """Rows per status: one each in turn (in `counts`' order) while the
    budget lasts and a status still has trials without a row (the seed's
    loop)."""
    limits = dict.fromkeys(counts, 0)
    budget = max(max_rows, 0)
    while budget > 0:
        before = budget
        for status, count in counts.items():
            if budget > 0 and limits[status] < count:
                limits[status] += 1
                budget -= 1
        if budget == before:
            break
    return limits


class _Shown:
    """The rows of one status: the trials shown, and where the gap goes."""

    def __init__(self, trials: Sequence[TrialState], limit: int) -> None:
        if len(trials) <= limit:
            self.head, self.hidden, self.tail = list(trials), 0, []
        else:
            head = (limit + 1) // 2
            tail = limit - head
            self.head = list(trials[:head])
            self.tail = list(trials[len(trials) - tail :]) if tail else []
            self.hidden = len(trials) - limit

    @property
    def trials(self) -> list[TrialState]:
        return [*self.head, *self.tail]


def _select(
    groups: Mapping[TrialStatus, Sequence[TrialState]], max_rows: int
) -> dict[TrialStatus, _Shown]:
    """The rows of each status, from its trials in shown order (`by_status`,
    or `TrialRows.groups`)."""
    limits = fair_limits({s: len(t) for s, t in groups.items()}, max_rows)
    return {status: _Shown(trials, limits[status]) for status, trials in groups.items()}


# -- formatting ------------------------------------------------------------------


def _number(value: JsonValue) -> str:
    if isinstance(value, float):
        return f"{value:.5g}"
    return str(value)


def _cell(value: JsonValue) -> str:
    return "" if value is None else _number(value)


def _flat_value(trial: TrialState, key: str) -> JsonValue:
    return flatten(trial.last_result).get(key)


def _json_text(value: object, limit: int | None = None) -> str:
    text = json.dumps(to_json_value(value), sort_keys=True, allow_nan=False)
    if limit is not None and len(text) > limit:
        return text[: limit - 3] + "..."
    return text


def best_trial(state: ExperimentState, metric: str | None, mode: Mode | None) -> TrialState | None:
    """The trial whose last reported `metric` is best (finite numbers only;
    the earliest created wins a tie), or None without metric and mode."""
    if metric is None or mode is None:
        return None
    ranks = (ranked(trial, n, metric, mode) for n, trial in enumerate(trials_in_order(state)))
    best = min((rank for rank in ranks if rank is not None), default=None)
    return None if best is None else state.trials[best[2]]


def _counts(state: ExperimentState) -> dict[TrialStatus, int]:
    counts: dict[TrialStatus, int] = {}
    for trial in state.trials.values():
        counts[trial.status] = counts.get(trial.status, 0) + 1
    return counts


def _counts_text(counts: Mapping[TrialStatus, int]) -> str:
    return ", ".join(f"{counts[status]} {status.value}" for status in sorted(counts))


def _number_of_trials(state: ExperimentState, rows: TrialRows) -> str:
    """`n/max_trials` when the experiment has a limit, else `n`: an unknown
    total is not printed as if it were known."""
    limit = state.config.max_trials
    total = f"/{limit}" if limit is not None else ""
    counts = f" ({_counts_text(rows.counts())})" if state.trials else ""
    return f"Number of trials: {len(state.trials)}{total}{counts}"


def resources_line(
    used: Resources, total: Resources | None, label: str = "Resources requested"
) -> str:
    """What the running trials hold, of what the cluster has (`label`:
    Ray's old status says "Resources requested", the text it gives a
    reporter "Logical resource usage")."""
    if total is None:
        return f"{label}: {used.summary()} (cluster size not known yet)"
    parts = [f"{used.cpu:g}/{total.cpu:g} CPUs", f"{used.gpu:g}/{total.gpu:g} GPUs"]
    for name in sorted(set(total.custom) | set(used.custom)):
        parts.append(f"{used.custom.get(name, 0.0):g}/{total.custom.get(name, 0.0):g} {name}")
    return f"{label}: " + ", ".join(parts)


def _best_line(
    rows: TrialRows, metric: str | None, mode: Mode | None, name_of: NameOf
) -> str | None:
    if metric is None or mode is None:
        return None
    best = rows.best()
    if best is None:
        return f"Current best trial: none has reported {metric} yet"
    value = metric_value(best, metric)
    return (
        f"Current best trial: {name_of(best)} with {metric}={_number(value)} "
        f"and parameters={_json_text(best.spec.config, MAX_CONFIG_CHARS)}"
    )


def header_lines(
    state: ExperimentState,
    *,
    metric: str | None,
    mode: Mode | None,
    experiment_dir: str | None = None,
    name_of: NameOf = spec_name,
    rows: TrialRows | None = None,
) -> list[str]:
    """Counts, resources, the scheduler, the best result and the log dir
    (`rows`: `state`'s, kept by the caller, else read from it)."""
    rows = rows if rows is not None else TrialRows.of(state, metric, mode)
    lines = [
        "== Status ==",
        _number_of_trials(state, rows),
        resources_line(state.used, state.total),
        state.scheduler.debug_string(),
    ]
    best = _best_line(rows, metric, mode, name_of)
    if best is not None:
        lines.append(best)
    if state.stopping is not None:
        lines.append(f"Stopping: {state.stopping}")
    waiting = _searcher_wait_line(state)
    if waiting is not None:
        lines.append(waiting)
    if experiment_dir is not None:
        lines.append(f"Result logdir: {experiment_dir}")
    return lines


def _searcher_wait_line(state: ExperimentState) -> str | None:
    """With nothing running, the searcher that suggested no trial and is
    asked again (`core.search.declines`), said: Ray's loop, blocked
    asking, prints nothing."""
    if state.running or state.pending or state.paused or state.stopping is not None:
        return None
    declined = declining_by(state.searcher)
    if declined is None or declined.again_at is None:
        return None
    asked = "once" if declined.times == 1 else f"{declined.times} times in a row"
    return (
        f"Waiting for the searcher: it suggested no trial when asked {asked}; "
        f"asking again, up to {GIVE_UP_AFTER} times in a row"
    )


def progress_string(
    trial: TrialState,
    metric: str | None = None,
    columns: Columns | None = None,
    parameters: Mapping[str, str] | None = None,
) -> str:
    """One trial's row: status, resources, location, the `parameters` (key
    to header), iterations, time and the metrics, leaving out what is not
    known yet."""
    pieces = [trial.status.value, f"[{trial.spec.resources.summary()}]"]
    location = trial.location.describe(None)
    if location:
        pieces.append(location)
    for key, header in (parameters or {}).items():
        value = parameter_value(trial, key)
        if value is not None:
            limit = (columns or Columns()).max_column_length
            pieces.append(f"{header}={parameter_cell(value, limit)}")
    iteration = _flat_value(trial, TRAINING_ITERATION)
    if iteration is not None:
        pieces.append(f"{_number(iteration)} iter")
    seconds = _flat_value(trial, TIME_TOTAL_S)
    if is_number(seconds):
        pieces.append(f"{float(seconds):.1f} s")
    for key, header in (columns or Columns()).metric_keys(metric).items():
        value = _flat_value(trial, key)
        if value is not None:
            pieces.append(f"{header}={_number(value)}")
    if trial.num_failures:
        pieces.append(f"{trial.num_failures} failures")
    return ", ".join(pieces)


def status_lines(
    state: ExperimentState,
    *,
    metric: str | None,
    mode: Mode | None,
    max_rows: int = 20,
    experiment_dir: str | None = None,
    name_of: NameOf = spec_name,
    columns: Columns | None = None,
    rows: TrialRows | None = None,
) -> list[str]:
    """The status as text lines: the header, then per status (in name order)
    its trials, at most `max_rows` in all (module docstring). `rows`:
    `state`'s, kept by the caller, else read from it."""
    rows = rows if rows is not None else TrialRows.of(state, metric, mode)
    lines = header_lines(
        state, metric=metric, mode=mode, experiment_dir=experiment_dir, name_of=name_of, rows=rows
    )
    chosen = columns or Columns()
    selected = _select(chosen.ordered(rows.groups(), metric, mode), max_rows)
    return lines + _selected_lines(selected, metric=metric, name_of=name_of, columns=columns)


def trial_lines(
    trials: Sequence[TrialState],
    *,
    metric: str | None,
    mode: Mode | None = None,
    max_rows: int = 20,
    name_of: NameOf = spec_name,
    columns: Columns | None = None,
) -> list[str]:
    """The trials (in creation order) as text lines, per status (in name
    order), with a column per searched parameter, at most `max_rows` in all
    (module docstring)."""
    groups = (columns or Columns()).ordered(by_status(trials), metric, mode)
    selected = _select(groups, max_rows)
    return _selected_lines(selected, metric=metric, name_of=name_of, columns=columns)


def _selected_lines(
    selected: Mapping[TrialStatus, _Shown],
    *,
    metric: str | None,
    name_of: NameOf,
    columns: Columns | None,
) -> list[str]:
    chosen = columns or Columns()
    keys = chosen.parameter_keys(t for rows in selected.values() for t in rows.trials)
    headers = chosen.parameters or {}
    parameters = {key: headers.get(key, key) for key in keys}

    def row(trial: TrialState) -> str:
        return f" - {name_of(trial)}:\t{progress_string(trial, metric, chosen, parameters)}"

    lines = []
    for status, shown in selected.items():
        lines.append(f"{status.value} trials:")
        lines.extend(row(t) for t in shown.head)
        if shown.hidden:
            lines.append(f" ... {shown.hidden} not shown")
        lines.extend(row(t) for t in shown.tail)
    return lines


# -- the parameters, and the table ---------------------------------------------


def parameter_keys(trials: Iterable[TrialState]) -> list[str]:
    """The parameter columns, as Ray's table chooses them: every searched
    parameter (the param space's domains and grid searches, '/'-joined
    when nested), sorted. Trials that were only given a config (`tunecore
    add`, a what-if) have no searched parameters: their config's first
    `MAX_CONFIG_COLUMNS` keys then, in order of first appearance."""
    listed = list(trials)
    searched: set[str] = set()
    for trial in listed:
        searched.update(trial.spec.evaluated_params)
    if searched:
        return sorted(searched)
    keys: dict[str, None] = {}
    for trial in listed:
        keys.update(dict.fromkeys(flatten(trial.spec.config)))
    return list(keys)[:MAX_CONFIG_COLUMNS]


def parameter_value(trial: TrialState, key: str) -> JsonValue:
    """The trial's current value of the parameter `key` ('/'-joined, list
    items by index): read from its config, which a PBT exploit changes,
    else the value its search drew."""
    config = trial.spec.config
    flat = flatten(config)
    if key in flat:
        return flat[key]
    node: JsonValue = config
    for part in key.split("/"):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return trial.spec.evaluated_params.get(key)
    return node


def parameter_cell(value: JsonValue, limit: int = MAX_PARAM_CHARS) -> str:
    """A parameter as a table cell: numbers to 5 significant digits, and
    anything longer than `limit` cut (Ray cuts at 20 too)."""
    if value is None:
        return ""
    text = _json_text(value) if isinstance(value, list | dict) else _number(value)
    if len(text) > limit:
        return text[: max(limit - 3, 0)] + "..."
    return text


class _Column:
    """One table column before it is laid out: its cells, and how early it
    goes when the terminal is too narrow (lower `drop` goes first)."""

    def __init__(self, header: str, drop: int) -> None:
        self.header = header
        self.drop = drop
        self.cells: list[str] = []

    @property
    def width(self) -> int:
        """Its width in the table: the widest cell or header, the padding on
        both sides and one separator."""
        return max(cell_len(text) for text in (self.header, *self.cells)) + 3


NEVER_DROPPED = 1_000
"""The trial name's rank: it is never dropped, nor cut when it fits."""


def _fit(columns: list[_Column], width: int | None) -> list[_Column]:
    """The columns that fit `width` cells uncut (the table's edge is one
    more): the lowest-ranked ones are dropped first, the trial name never."""
    if width is None:
        return columns
    kept = list(columns)
    by_rank = sorted(kept, key=lambda c: c.drop)
    while by_rank and sum(c.width for c in kept) + 1 > width:
        dropped = by_rank.pop(0)
        if dropped.drop >= NEVER_DROPPED:
            break
        kept.remove(dropped)
    return kept


def render_table(
    state: ExperimentState,
    *,
    metric: str | None,
    mode: Mode | None,
    max_rows: int = 20,
    experiment_dir: str | None = None,
    local_hostname: str | None = None,
    name_of: NameOf = spec_name,
    width: int | None = None,
    columns: Columns | None = None,
    rows: TrialRows | None = None,
) -> Table:
    """The status as a table: the header lines as its title, one row per
    shown trial (the same rows as `status_lines`) and a row per gap.

    Given a `width` (a terminal's), columns are dropped until the rest fit
    it uncut, least useful first: the location, the parameters after the
    first (from the last), the time, the iteration, the first parameter,
    the metric, the status; a caption names them. The trial name is never
    dropped; at 80 columns names as long as `trainable_0a1b2_00001` stay
    whole.

    The parameter columns are Ray's: one per searched parameter, sorted
    (`parameter_keys`), or the `columns` chosen. `rows`: `state`'s, kept
    by the caller, else read from it."""
    rows = rows if rows is not None else TrialRows.of(state, metric, mode)
    chosen = columns or Columns()
    selected = _select(chosen.ordered(rows.groups(), metric, mode), max_rows)
    shown = [t for rows in selected.values() for t in rows.trials]
    params = chosen.parameter_keys(shown)
    headers = chosen.parameters or {}
    name = _Column("Trial name", NEVER_DROPPED)
    status_column = _Column("Status", 90)
    location = _Column("Location", 0)
    param_columns = [
        _Column(headers.get(key, key), 50 if position == 0 else 20 - position)
        for position, key in enumerate(params)
    ]
    iteration = _Column("Iter", 40)
    seconds = _Column("Total time (s)", 30)
    metric_keys = chosen.metric_keys(metric)
    metric_columns = [
        _Column(header, 80 if position == 0 else 35 - position)
        for position, header in enumerate(metric_keys.values())
    ]
    table_columns = [
        name,
        status_column,
        location,
        *param_columns,
        iteration,
        seconds,
        *metric_columns,
    ]

    def add(trial: TrialState) -> None:
        total = _flat_value(trial, TIME_TOTAL_S)
        name.cells.append(name_of(trial))
        status_column.cells.append(trial.status.value)
        location.cells.append(trial.location.describe(local_hostname))
        for key, column in zip(params, param_columns, strict=True):
            column.cells.append(
                parameter_cell(parameter_value(trial, key), chosen.max_column_length)
            )
        iteration.cells.append(_cell(_flat_value(trial, TRAINING_ITERATION)))
        seconds.cells.append(f"{float(total):.1f}" if is_number(total) else "")
        for key, column in zip(metric_keys, metric_columns, strict=True):
            column.cells.append(_cell(_flat_value(trial, key)))

    def gap(hidden: int, status: TrialStatus) -> None:
        for column in table_columns:
            column.cells.append("")
        name.cells[-1] = f"... {hidden} not shown"
        status_column.cells[-1] = status.value

    for status, shown_rows in selected.items():
        for trial in shown_rows.head:
            add(trial)
        if shown_rows.hidden:
            gap(shown_rows.hidden, status)
        for trial in shown_rows.tail:
            add(trial)
    kept = _fit(table_columns, width)
    header = header_lines(
        state, metric=metric, mode=mode, experiment_dir=experiment_dir, name_of=name_of, rows=rows
    )
    left_out = [column.header for column in table_columns if column not in kept]
    table = Table(
        title="\n".join(header),
        title_justify="left",
        caption=f"Not shown, to fit the width: {', '.join(left_out)}" if left_out else None,
        caption_justify="left",
    )
    for column in kept:
        table.add_column(column.header, no_wrap=True, overflow="fold")
    for row in zip(*(column.cells for column in kept), strict=True):
        table.add_row(*row)
    return table


class LiveStatus:
    """The status as a rich renderable that lays itself out for the width
    it is given when drawn (a terminal resized mid-run included): the
    header lines above a `render_table` that fits that width."""

    def __init__(self, table: Callable[[int], Table]) -> None:
        self._table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self._table(options.max_width)
        # The header above the table, not as its title: a title wraps at
        # the table's width, which is narrower than the terminal's.
        header, table.title = table.title, None
        yield Text(str(header))
        yield table


# -- the end -------------------------------------------------------------------


def _last_line(text: str, limit: int = 200) -> str:
    last = failure_reason(text)
    return last if len(last) <= limit else last[: limit - 3] + "..."


def unfinished_trials(state: ExperimentState) -> int:
    return sum(not trial.is_finished for trial in state.trials.values())


def interrupted(state: ExperimentState) -> bool:
    """Whether the experiment ended by an interrupt (Ctrl-C, or a driver
    that ended with trials unfinished), not by finishing: a resume goes on
    with it."""
    return state.done and (state.stopping == INTERRUPTED or unfinished_trials(state) > 0)


def final_counts(state: ExperimentState) -> str:
    """`8 trials (6 PENDING, 2 TERMINATED)`."""
    return f"{len(state.trials)} trials ({_counts_text(_counts(state)) or 'none'})"


def already_finished(
    state: ExperimentState, experiment_dir: str, name_of: NameOf = spec_name
) -> str:
    """The one line a restore of a finished experiment prints instead of
    running it: its counts and its best trial (by its own metric and mode)."""
    metric, mode = state.config.metric, state.config.mode
    best = best_trial(state, metric, mode)
    found = (
        ""
        if best is None or metric is None
        else f", best trial {name_of(best)} with {metric}={_number(metric_value(best, metric))}"
    )
    return (
        f"The experiment in {experiment_dir} had already finished: {final_counts(state)}{found}. "
        "Nothing to resume; its results are returned as they are."
    )


def final_summary(
    state: ExperimentState,
    metric: str | None,
    mode: Mode | None,
    *,
    error_file_of: Callable[[TrialState], Path] | None = None,
    name_of: NameOf = spec_name,
    experiment_dir: str | None = None,
    max_error_rows: int | None = None,
) -> str:
    """The experiment's outcome: counts, the best trial with its whole
    config, and each errored trial (the first `max_error_rows`, None: all)
    with its last error line and where the full traceback is
    (`error_file_of`, when the caller knows the trial directories). An
    interrupted experiment (`interrupted`) is said to be, with how to
    resume it (from `experiment_dir`, where it is kept: a directory or a
    URI)."""
    counts = final_counts(state)
    unfinished = unfinished_trials(state)
    if interrupted(state):
        where = experiment_dir or "DIR"
        command = resume_command_line(where, state.config.trainable_name)
        lines = [
            f"Experiment interrupted: {counts}; {unfinished} not finished.",
            f"Its state is saved. Resume it with: {command}, or "
            f"Tuner.restore({where!r}, trainable).fit()",
        ]
    else:
        lines = [f"Experiment finished: {counts}"]
    if state.error is not None:
        lines.append(f"The experiment ended with an error: {state.error}")
    elif state.stopping is not None and not interrupted(state):
        lines.append(f"The experiment stopped: {state.stopping}")
    if metric is not None and mode is not None:
        best = best_trial(state, metric, mode)
        if best is None:
            lines.append(f"Best trial: none (no trial reported {metric})")
        else:
            value = metric_value(best, metric)
            lines.append(f"Best trial: {name_of(best)} with {metric}={_number(value)}")
            lines.append(f"Best config: {_json_text(best.spec.config)}")
    errored = [t for t in trials_in_order(state) if t.status is TrialStatus.ERROR]
    if errored:
        lines.append(f"Errored trials ({len(errored)}):")
        listed = errored if max_error_rows is None else errored[: max(max_error_rows, 0)]
        for trial in listed:
            where = (
                str(error_file_of(trial))
                if error_file_of is not None
                else "error.txt in the trial's directory"
            )
            reason = _last_line(trial.error_message or "")
            failures = f"{trial.num_failures} failure{'s' if trial.num_failures != 1 else ''}"
            lines.append(f" - {name_of(trial)}: {failures}, {reason}; see {where}")
        if len(listed) < len(errored):
            lines.append(f" ... {len(errored) - len(listed)} more")
    return "\n".join(lines)


# -- the reporter -----------------------------------------------------------------


class ProgressReporter:
    """Prints the status while the experiment runs.

    - `verbose=0`: prints nothing, ever;
    - a terminal: a live table, redrawn at most every `refresh_s` seconds
      (also a notebook, with `overwrite=True`: Ray's
      `JupyterNotebookReporter`; never with `overwrite=False`);
    - anything else (CI, a pipe, a file): the `status_lines` text, at most
      every `plain_refresh_s` seconds (a log gains a whole status each
      time, so it is printed less often than a live table is redrawn).

    Time comes from `update`'s `now` argument or else the `clock` given
    (monotonic seconds), never from sleeping.
    """

    def __init__(
        self,
        *,
        metric: str | None = None,
        mode: Mode | None = None,
        verbose: int = 1,
        console: Console | None = None,
        refresh_s: float = 1.0,
        plain_refresh_s: float = 5.0,
        max_rows: int = 20,
        experiment_dir: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        local_hostname: str | None = None,
        name_of: NameOf = spec_name,
        columns: Columns | None = None,
        overwrite: bool | None = None,
        intermediate: bool = True,
    ) -> None:
        self.metric = metric
        self.intermediate = intermediate
        """False: the status is shown only as the experiment ends (Ray's
        `print_intermediate_tables=False`)."""
        self.overwrite = overwrite
        self.columns = columns
        self.mode = mode
        self.verbose = verbose
        self.console = console if console is not None else Console(file=sys.stdout)
        self.refresh_s = refresh_s
        self.plain_refresh_s = plain_refresh_s
        self.max_rows = max_rows
        self.experiment_dir = experiment_dir
        self.clock = clock
        self.name_of = name_of
        self.local_hostname = local_hostname if local_hostname is not None else socket.gethostname()
        self._rows = TrialRows(metric, mode)
        self._live: Live | None = None
        self._last: float | None = None
        self.shown = 0  # times the status was printed or redrawn

    @property
    def live(self) -> bool:
        """Whether the status is a live table, redrawn in place: in a
        terminal, or in a notebook when `overwrite` asks for it."""
        if self.overwrite is False:
            return False
        return self.console.is_terminal or (self.overwrite is True and self.console.is_jupyter)

    def update(
        self, state: ExperimentState, now: float | None = None, *, force: bool = False
    ) -> None:
        """Show `state` if the refresh interval has passed since the last
        time it was shown (or `force`). Fits the loop's `on_state` hook."""
        if self.verbose <= 0 or not (force or self.intermediate):
            return
        moment = self.clock() if now is None else now
        interval = self.refresh_s if self.live else self.plain_refresh_s
        if not force and self._last is not None and moment - self._last < interval:
            return
        self._last = moment
        self.shown += 1
        self._rows.update(state)
        if self.live:
            table = LiveStatus(lambda width: self._table(state, width))
            if self._live is None:
                self._live = Live(table, console=self.console, auto_refresh=False)
                self._live.start()
            self._live.update(table, refresh=True)
        else:
            self._print_plain("\n".join(self._lines(state)))

    def finish(
        self,
        state: ExperimentState,
        *,
        error_file_of: Callable[[TrialState], Path] | None = None,
    ) -> None:
        """Show the final status, stop the live display and print the
        summary."""
        if self.verbose <= 0:
            return
        self.close(state)
        summary = final_summary(
            state,
            self.metric,
            self.mode,
            error_file_of=error_file_of,
            name_of=self.name_of,
            experiment_dir=self.experiment_dir,
            max_error_rows=None if self.columns is None else self.columns.max_error_rows,
        )
        self._print_plain(summary)

    def close(self, state: ExperimentState | None = None) -> None:
        """Show `state` one last time if given (whatever the interval), then
        stop the live display, leaving its last frame on screen."""
        if state is not None:
            self.update(state, now=self._last, force=True)
        if self._live is not None:
            self._live.stop()
            self._live = None

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _lines(self, state: ExperimentState) -> list[str]:
        return status_lines(
            state,
            metric=self.metric,
            mode=self.mode,
            max_rows=self.max_rows,
            experiment_dir=self.experiment_dir,
            name_of=self.name_of,
            columns=self.columns,
            rows=self._rows_of(state),
        )

    def _table(self, state: ExperimentState, width: int) -> Table:
        return render_table(
            state,
            metric=self.metric,
            mode=self.mode,
            max_rows=self.max_rows,
            experiment_dir=self.experiment_dir,
            local_hostname=self.local_hostname,
            name_of=self.name_of,
            width=width,
            columns=self.columns,
            rows=self._rows_of(state),
        )

    def _rows_of(self, state: ExperimentState) -> TrialRows | None:
        """The kept rows if they are `state`'s (a live table draws the state
        it was given, even once the rows have moved on)."""
        return self._rows if self._rows.state is state else None

    def _print_plain(self, text: str) -> None:
        # A Text object: user strings (configs, errors) may hold "[...]",
        # which rich would otherwise read as markup.
        self.console.print(Text(text), soft_wrap=True, highlight=False)
