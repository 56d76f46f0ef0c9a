"""The rows a reporter keeps from one redraw to the next show what a fresh
read of each state shows: the natural order of the tags, the counts, the
best trial, and an errored trial a resume restarts."""

from __future__ import annotations

import io
from collections import Counter

from rich.console import Console
from rich.table import Table

from tests.shell.test_progress import Run, tid
from tunecore.core.experiment import ExperimentState, trials_in_order
from tunecore.model import ExperimentResumed, Mode
from tunecore.shell.progress import (
    ProgressReporter,
    best_trial,
    header_lines,
    render_table,
    spec_name,
    trial_lines,
)
from tunecore.shell.progress_rows import TrialRows

TAGS = ["10_a", "2_b", "2_b", "1_c", "B", "a", "30", "3", "2_b", "11"]


def shown(reporter: ProgressReporter, state: ExperimentState, out: io.StringIO) -> list[str]:
    out.seek(0)
    out.truncate()
    reporter.update(state, force=True)
    return out.getvalue().splitlines()


def expected(state: ExperimentState) -> list[str]:
    """The status read from the whole state: every trial sorted by its tag
    (`trial_lines`), the counts of all trials, the best of all trials."""
    trials = trials_in_order(state)
    counts = Counter(trial.status.value for trial in trials)
    best = best_trial(state, "loss", Mode.MIN)
    header = header_lines(state, metric="loss", mode=Mode.MIN)
    assert (
        header[1].endswith(f"({', '.join(f'{counts[s]} {s}' for s in sorted(counts))})")
        or not trials
    )
    assert best is None or f" {spec_name(best)} with " in header[4]
    lines = header + trial_lines(trials, metric="loss", max_rows=7)
    return [line.expandtabs() for line in lines]  # as the console prints them


def test_kept_rows_show_what_each_state_read_whole_shows() -> None:
    out = io.StringIO()
    reporter = ProgressReporter(
        metric="loss", mode=Mode.MIN, console=Console(file=out, width=200), max_rows=7
    )
    run = Run(metric="loss", mode=Mode.MIN)
    run.cluster(cpu=100)
    states = [run.state]
    for number, tag in enumerate(TAGS * 3):
        run.add(tag=tag, x=number)
        states.append(run.state)
        trial = tid(number)
        if number % 5 == 4:
            run.fail(trial, "Traceback:\nValueError: boom")
        else:
            run.result(trial, training_iteration=1, loss=float((number * 7) % 11))
            if number % 2:
                run.stop(trial)
        states.append(run.state)
    run.feed(ExperimentResumed(at=run.tick(), restart_errored=True))
    states.append(run.state)
    run.cluster(cpu=100)
    states.append(run.state)
    run.result(tid(4), training_iteration=1, loss=-1.0)
    states.append(run.state)
    assert "ERROR trials:" in expected(states[-4])
    assert "ERROR trials:" not in expected(states[-3])
    for state in states:
        assert shown(reporter, state, out) == expected(state)


def drawn(table: Table) -> str:
    out = io.StringIO()
    Console(file=out, width=200).print(table)
    return out.getvalue()


def test_the_table_with_kept_rows_is_the_table_of_the_state() -> None:
    run = Run(metric="loss", mode=Mode.MAX)
    run.cluster(cpu=100)
    rows = TrialRows(metric="loss", mode=Mode.MAX)
    for number, tag in enumerate(TAGS):
        run.add(tag=tag, x=number)
        run.result(tid(number), training_iteration=1, loss=float(number % 4))
        if number % 2:
            run.stop(tid(number))
        rows.update(run.state)
        kept = render_table(run.state, metric="loss", mode=Mode.MAX, max_rows=5, rows=rows)
        fresh = render_table(run.state, metric="loss", mode=Mode.MAX, max_rows=5)
        assert drawn(kept) == drawn(fresh)


def test_many_trials_ended_at_once_are_kept_in_the_order_of_their_tags() -> None:
    """More trials than are inserted one by one end between two redraws
    (or a whole state is read): the rows are sorted at once, the same."""
    out = io.StringIO()
    reporter = ProgressReporter(
        metric="loss", mode=Mode.MIN, console=Console(file=out, width=200), max_rows=7
    )
    run = Run(metric="loss", mode=Mode.MIN)
    run.cluster(cpu=1000)
    for number in range(10):
        run.add(tag=TAGS[number], x=number)
    for number in range(9):  # one runs on: the experiment is not over
        run.stop(tid(number))
    assert shown(reporter, run.state, out) == expected(run.state)
    for number in range(10, 210):
        run.add(tag=TAGS[(number * 7) % len(TAGS)] + str(number % 13), x=number)
        run.result(tid(number), training_iteration=1, loss=float(number % 17))
        if number % 3:
            run.stop(tid(number))
    assert shown(reporter, run.state, out) == expected(run.state)
