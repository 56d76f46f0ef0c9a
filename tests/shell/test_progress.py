"""Progress output: the seed's status text (fair row limit, natural order,
best result), the rich table, the final summary and the reporter."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console

import tunecore as tune
from tunecore.core.experiment import (
    ExperimentConfig,
    ExperimentState,
    new_experiment,
    step,
    trials_in_order,
)
from tunecore.core.search import BasicVariantGenerator
from tunecore.core.search.external import ExternalSearcher
from tunecore.model import (
    Asked,
    ClusterResourcesChanged,
    ExperimentEvent,
    ExperimentInterrupted,
    JsonValue,
    Mode,
    Rejection,
    Resources,
    ResultReported,
    StopRequested,
    Tick,
    TrialFailed,
    TrialRequested,
    TrialStatus,
)
from tunecore.shell.progress import (
    Columns,
    ProgressReporter,
    best_trial,
    fair_limits,
    final_summary,
    render_table,
    spec_name,
    status_lines,
)
from tunecore.shell.progress_rows import natural_key

CPU = "[1 CPUs, 0 GPUs]"


class Run:
    """An experiment driven through the real core, one event at a time."""

    def __init__(self, **settings: object) -> None:
        config = msgspec.structs.replace(ExperimentConfig(trainable_name="train"), **settings)
        self.state: ExperimentState = new_experiment(config)
        self.clock = 100.0

    def feed(self, event: ExperimentEvent) -> None:
        outcome = step(self.state, event)
        assert not isinstance(outcome, Rejection), outcome
        self.state = outcome[0]

    def tick(self) -> float:
        self.clock += 1.0
        return self.clock

    def cluster(self, cpu: float) -> None:
        self.feed(ClusterResourcesChanged(at=self.tick(), total=Resources(cpu=cpu)))

    def add(self, count: int = 1, tag: str = "", **config: JsonValue) -> None:
        for _ in range(count):
            self.feed(TrialRequested(at=self.tick(), config=dict(config), experiment_tag=tag))

    def result(self, trial_id: str, **result: JsonValue) -> None:
        self.feed(ResultReported(at=self.tick(), trial_id=trial_id, result=dict(result)))

    def fail(self, trial_id: str, error: str) -> None:
        self.feed(TrialFailed(at=self.tick(), trial_id=trial_id, error=error))

    def stop(self, trial_id: str) -> None:
        self.feed(StopRequested(at=self.tick(), trial_id=trial_id))


def tid(number: int) -> str:
    return f"trial_{number:05d}"


def name(number: int) -> str:
    return f"train_{tid(number)}"


def crowded() -> ExperimentState:
    """30 RUNNING (tags 1..30), 3 PENDING (31..33), 1 ERROR (0)."""
    run = Run()
    run.cluster(cpu=30)
    run.add(31)  # tags default to the creation number: "0" ... "30"
    run.fail(tid(0), "Traceback:\nValueError: boom")  # trial 30 takes its CPU
    run.add(3)
    statuses = [t.status for t in run.state.trials.values()]
    assert statuses.count(TrialStatus.RUNNING) == 30
    assert statuses.count(TrialStatus.PENDING) == 3
    assert statuses.count(TrialStatus.ERROR) == 1
    return run.state


# -- row selection --------------------------------------------------------------


def test_fair_limits_hand_computed() -> None:
    run, pend, err = TrialStatus.RUNNING, TrialStatus.PENDING, TrialStatus.ERROR
    # rounds: (E,P,R) (P,R) (P,R) then R alone: 1 + 3 + 16 = 20
    assert fair_limits({err: 1, pend: 3, run: 30}, 20) == {err: 1, pend: 3, run: 16}
    # rounds: (E,P,R) (P,R) and the last row to the first in turn, P
    assert fair_limits({err: 1, pend: 10, run: 10}, 6) == {err: 1, pend: 3, run: 2}
    assert fair_limits({pend: 2, run: 2}, 20) == {pend: 2, run: 2}
    assert fair_limits({pend: 5, run: 5}, 0) == {pend: 0, run: 0}


def test_status_lines_share_rows_fairly_and_hide_the_middle() -> None:
    lines = status_lines(crowded(), metric=None, mode=None, max_rows=20)
    running = [f" - {name(n)}:\tRUNNING, {CPU}" for n in range(1, 31)]
    assert lines == [
        "== Status ==",
        "Number of trials: 34 (1 ERROR, 3 PENDING, 30 RUNNING)",
        "Resources requested: 30/30 CPUs, 0/0 GPUs",
        "Using FIFO scheduling algorithm.",
        "ERROR trials:",
        f" - {name(0)}:\tERROR, {CPU}, 1 failures",
        "PENDING trials:",
        *(f" - {name(n)}:\tPENDING, {CPU}" for n in (31, 32, 33)),
        "RUNNING trials:",
        *running[:8],
        " ... 14 not shown",
        *running[-8:],
    ]
    shown = [line for line in lines if line.startswith(" - ")]
    assert len(shown) == 20


def test_an_odd_row_budget_is_used_whole() -> None:
    lines = status_lines(crowded(), metric=None, mode=None, max_rows=5)
    # rounds: (E,P,R) (P,R): ERROR 1, PENDING 2 of 3, RUNNING 2 of 30
    body = lines[lines.index("ERROR trials:") :]
    assert body == [
        "ERROR trials:",
        f" - {name(0)}:\tERROR, {CPU}, 1 failures",
        "PENDING trials:",
        f" - {name(31)}:\tPENDING, {CPU}",
        " ... 1 not shown",
        f" - {name(33)}:\tPENDING, {CPU}",
        "RUNNING trials:",
        f" - {name(1)}:\tRUNNING, {CPU}",
        " ... 28 not shown",
        f" - {name(30)}:\tRUNNING, {CPU}",
    ]
    one = status_lines(crowded(), metric=None, mode=None, max_rows=1)
    # one row: ERROR takes it; the seed would have printed all 30 RUNNING here
    assert one[one.index("ERROR trials:") :] == [
        "ERROR trials:",
        f" - {name(0)}:\tERROR, {CPU}, 1 failures",
        "PENDING trials:",
        " ... 3 not shown",
        "RUNNING trials:",
        " ... 30 not shown",
    ]


def test_trials_are_in_natural_order_of_their_tags() -> None:
    assert natural_key("10_a") > natural_key("9_b")
    assert natural_key("a10") > natural_key("A9")
    assert sorted(["10_x", "9_x", "1_x", "x", "2"], key=natural_key) == [
        "1_x",
        "2",
        "9_x",
        "10_x",
        "x",
    ]
    run = Run()
    run.cluster(cpu=3)
    for tag in ("10_lr=0.1", "9_lr=0.2", "1_lr=0.3"):
        run.add(tag=tag)
    lines = status_lines(run.state, metric=None, mode=None)
    rows = lines[lines.index("RUNNING trials:") + 1 :]
    assert rows == [f" - {name(n)}:\tRUNNING, {CPU}" for n in (2, 1, 0)]


# -- header and best result -----------------------------------------------------


def test_header_counts_resources_and_the_trial_limit() -> None:
    run = Run(max_trials=8)
    run.cluster(cpu=4)
    run.add(8)
    run.stop(tid(0))
    run.stop(tid(1))
    lines = status_lines(run.state, metric=None, mode=None, experiment_dir="/r/exp")
    assert lines[:5] == [
        "== Status ==",
        "Number of trials: 8/8 (2 PENDING, 4 RUNNING, 2 TERMINATED)",
        "Resources requested: 4/4 CPUs, 0/0 GPUs",
        "Using FIFO scheduling algorithm.",
        "Result logdir: /r/exp",
    ]


def scored() -> ExperimentState:
    run = Run(metric="loss", mode=Mode.MIN)
    run.cluster(cpu=4)
    for x in range(4):
        run.add(x=x)
    run.result(tid(0), training_iteration=1, loss=0.5, time_total_s=1.25)
    run.result(tid(1), training_iteration=1, loss=0.2, time_total_s=2.0)
    run.result(tid(2), training_iteration=3, loss=0.9, time_total_s=3.0)
    run.result(tid(3), training_iteration=1, loss=math.nan)
    return run.state


@pytest.mark.parametrize(("mode", "best", "value"), [(Mode.MIN, 1, "0.2"), (Mode.MAX, 2, "0.9")])
def test_the_best_result_for_min_and_max(mode: Mode, best: int, value: str) -> None:
    state = scored()
    chosen = best_trial(state, "loss", mode)
    assert chosen is not None
    assert chosen.trial_id == tid(best)
    lines = status_lines(state, metric="loss", mode=mode)
    assert lines[4] == (
        f'Current best trial: {name(best)} with loss={value} and parameters={{"x": {best}}}'
    )
    assert f" - {name(2)}:\tRUNNING, {CPU}, x=2, 3 iter, 3.0 s, loss=0.9" in lines


def test_no_best_line_without_a_metric_and_a_note_before_any_result() -> None:
    assert not any("best" in line for line in status_lines(scored(), metric=None, mode=None))
    run = Run(metric="loss", mode=Mode.MAX)
    run.cluster(cpu=1)
    run.add()
    lines = status_lines(run.state, metric="loss", mode=Mode.MAX)
    assert "Current best trial: none has reported loss yet" in lines


# -- table ----------------------------------------------------------------------------


def test_render_table_has_the_same_rows_and_the_param_columns() -> None:
    table = render_table(scored(), metric="loss", mode=Mode.MIN, max_rows=3)
    headers = [str(column.header) for column in table.columns]
    assert headers == ["Trial name", "Status", "Location", "x", "Iter", "Total time (s)", "loss"]
    assert table.row_count == 4  # 3 trials and the "... 1 not shown" row
    names = list(table.columns[0].cells)
    assert names == [name(0), name(1), "... 1 not shown", name(3)]
    assert list(table.columns[6].cells) == ["0.5", "0.2", "", "nan"]
    assert list(table.columns[5].cells) == ["1.2", "2.0", "", ""]
    console = Console(file=io.StringIO(), width=200)
    console.print(table)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Current best trial: train_trial_00001 with loss=0.2" in text


def typical() -> ExperimentState:
    """Twelve trials named as Ray names them (`trainable_0a1b2_00001`), five
    parameters, every status, results from another host."""
    run = Run(trainable_name="trainable", trial_id_prefix="0a1b2", metric="mean_accuracy")
    run.cluster(cpu=8)
    for number in range(12):
        run.add(
            tag=f"{number}_learning_rate={number}",
            learning_rate=0.000123456 * (number + 1),
            batch_size=32 * (number + 1),
            momentum=0.9,
            optimizer="adam",
            weight_decay=1e-5,
        )
    for number in range(6):
        run.result(
            f"0a1b2_{number:05d}",
            training_iteration=100 + number,
            time_total_s=1234.5678 * (number + 1),
            mean_accuracy=0.123456789 * (number + 1),
            hostname="ip-10-0-0-12",
            pid=12345 + number,
        )
    run.stop("0a1b2_00001")
    run.fail("0a1b2_00002", "ValueError: boom")
    return run.state


def drawn(state: ExperimentState, width: int) -> list[str]:
    """The lines a terminal `width` cells wide shows of the live table."""
    buffer = io.StringIO()
    out = Console(file=buffer, force_terminal=True, color_system=None, width=width)
    with ProgressReporter(console=out, metric="mean_accuracy", mode=Mode.MAX) as reporter:
        reporter.update(state, now=0.0)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())
    last_frame = text.replace("\r", "\n").rpartition("== Status ==")[2]
    return [line for line in last_frame.splitlines() if line.strip()]


@pytest.mark.parametrize("width", [80, 120, 200])
def test_the_live_table_fits_the_terminal_and_never_cuts_a_name(width: int) -> None:
    lines = drawn(typical(), width)
    assert all(cell_len(line) <= width for line in lines), "\n".join(lines)
    assert not any("…" in line for line in lines), "\n".join(lines)  # nothing cut
    rows = [line for line in lines if line.startswith("│ trainable_0a1b2_")]
    assert len(rows) == 12
    for row in rows:  # every name whole, in its own cell
        assert re.match(r"│ trainable_0a1b2_000[01][0-9] +│", row), row
    header = next(line for line in lines if "Trial name" in line)
    assert "Status" in header
    assert "mean_accuracy" in header


def test_narrow_terminals_drop_the_least_useful_columns_first() -> None:
    headers = {
        width: next(line for line in drawn(typical(), width) if "Trial name" in line)
        for width in (80, 120, 200)
    }
    wide = ["Location", "learning_rate", "batch_size", "weight_decay", "Iter", "Total time"]
    assert all(column in headers[200] for column in wide)
    assert "Location" not in headers[120]
    assert "learning_rate" in headers[120]
    assert "Location" not in headers[80]
    assert "weight_decay" not in headers[80]  # parameters go from the last one


def test_a_table_without_a_width_keeps_every_column() -> None:
    table = render_table(typical(), metric="mean_accuracy", mode=Mode.MAX)
    assert len(table.columns) == 3 + 5 + 3
    assert table.columns[0].no_wrap


# -- final summary ---------------------------------------------------------------------


def test_final_summary_lists_counts_best_config_and_errors() -> None:
    run = Run(metric="acc", mode=Mode.MAX)
    run.cluster(cpu=3)
    run.add(lr=0.1, layers=[64, 32])
    run.add(lr=0.2)
    run.add(lr=0.3)
    run.result(tid(0), training_iteration=1, acc=0.7)
    run.result(tid(1), training_iteration=1, acc=0.9)
    run.stop(tid(0))
    run.stop(tid(1))
    run.fail(tid(2), "Traceback (most recent call last):\n  ...\nRuntimeError: out of memory\n")

    def error_file(trial: object) -> Path:
        return Path("/results/exp/dir") / "error.txt"

    summary = final_summary(run.state, "acc", Mode.MAX, error_file_of=error_file)
    assert summary.splitlines() == [
        "Experiment finished: 3 trials (1 ERROR, 2 TERMINATED)",
        f"Best trial: {name(1)} with acc=0.9",
        'Best config: {"lr": 0.2}',
        "Errored trials (1):",
        f" - {name(2)}: 1 failure, RuntimeError: out of memory; see /results/exp/dir/error.txt",
    ]
    plain = final_summary(run.state, None, None)
    assert "see error.txt in the trial's directory" in plain
    assert "Best" not in plain


# -- reporter ---------------------------------------------------------------------------


def console(*, terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=200), buffer


def test_quiet_mode_prints_nothing() -> None:
    out, buffer = console(terminal=True)
    reporter = ProgressReporter(verbose=0, console=out, metric="loss", mode=Mode.MIN)
    reporter.update(scored(), now=0.0)
    reporter.close(scored())
    reporter.finish(scored())
    assert reporter.shown == 0
    assert buffer.getvalue() == ""


def test_without_a_terminal_the_status_is_printed_as_text_at_most_every_interval() -> None:
    out, buffer = console(terminal=False)
    reporter = ProgressReporter(
        console=out, metric="loss", mode=Mode.MIN, plain_refresh_s=5.0, experiment_dir="/r"
    )
    state = scored()
    shown = []
    for now, force in ((10.0, False), (14.9, False), (15.0, False), (15.1, True)):
        reporter.update(state, now=now, force=force)
        shown.append(reporter.shown)
    assert shown == [1, 1, 2, 3]
    text = buffer.getvalue()
    assert text.count("== Status ==") == 3
    assert "\x1b[" not in text  # no terminal control codes in a log
    expected = "\n".join(status_lines(state, metric="loss", mode=Mode.MIN, experiment_dir="/r"))
    assert text.startswith(expected.expandtabs(8) + "\n")  # rich expands tabs


def test_the_reporter_reads_its_clock_when_not_given_now() -> None:
    times = iter([0.0, 0.5, 6.0])
    out, _ = console(terminal=False)
    reporter = ProgressReporter(console=out, clock=lambda: next(times))
    state = scored()
    shown = []
    for _ in range(3):
        reporter.update(state)
        shown.append(reporter.shown)
    assert shown == [1, 1, 2]


def test_in_a_terminal_a_live_table_is_refreshed_at_most_every_second() -> None:
    out, buffer = console(terminal=True)
    state = scored()
    with ProgressReporter(console=out, metric="loss", mode=Mode.MIN, local_hostname="h") as rep:
        assert rep.live
        rep.update(state, now=0.0)
        drawn = len(buffer.getvalue())
        rep.update(state, now=0.5)
        assert (rep.shown, len(buffer.getvalue())) == (1, drawn)  # too soon: not redrawn
        rep.update(state, now=1.0)
        assert rep.shown == 2
        assert len(buffer.getvalue()) > drawn
    text = buffer.getvalue()
    assert "Trial name" in text
    assert name(1) in text


@pytest.mark.parametrize(
    ("terminal", "jupyter", "overwrite", "live"),
    [
        (False, True, None, False),  # a notebook, no reporter asked: text, as before
        (False, True, True, True),  # JupyterNotebookReporter(overwrite=True): redrawn in place
        (False, True, False, False),  # JupyterNotebookReporter(overwrite=False): printed anew
        (True, False, False, False),
        (True, False, None, True),
        (False, False, True, False),  # a log file: never live
    ],
)
def test_a_notebook_gets_a_live_table_when_the_reporter_overwrites(
    terminal: bool, jupyter: bool, overwrite: bool | None, live: bool
) -> None:
    out = Console(file=io.StringIO(), force_terminal=terminal, force_jupyter=jupyter, width=200)
    assert ProgressReporter(console=out, overwrite=overwrite).live is live


def test_finish_shows_the_final_status_and_the_summary() -> None:
    out, buffer = console(terminal=False)
    reporter = ProgressReporter(console=out, metric="loss", mode=Mode.MIN)
    state = scored()
    reporter.update(state, now=0.0)
    reporter.finish(state)
    text = buffer.getvalue()
    assert text.count("== Status ==") == 2
    assert text.rstrip().endswith(final_summary(state, "loss", Mode.MIN))


def test_an_empty_experiment_and_a_tiny_table() -> None:
    run = Run()
    assert status_lines(run.state, metric=None, mode=None)[:3] == [
        "== Status ==",
        "Number of trials: 0",
        "Resources requested: 0 CPUs, 0 GPUs (cluster size not known yet)",
    ]
    table = render_table(crowded(), metric=None, mode=None, max_rows=1)
    assert list(table.columns[0].cells) == [name(0), "... 3 not shown", "... 30 not shown"]
    assert list(table.columns[1].cells) == ["ERROR", "PENDING", "RUNNING"]


def test_close_with_a_state_shows_it_once_more() -> None:
    out, buffer = console(terminal=False)
    reporter = ProgressReporter(console=out)
    reporter.update(scored(), now=0.0)
    reporter.close(scored())
    assert reporter.shown == 2
    assert buffer.getvalue().count("== Status ==") == 2


def test_chosen_columns_add_metrics_and_replace_the_parameters() -> None:
    run = Run(metric="loss", mode=Mode.MIN)
    run.cluster(cpu=2)
    run.add(x=1, y=10)
    run.result(tid(0), training_iteration=1, loss=0.5, acc=0.75, other=3)
    columns = Columns(metrics={"acc": "accuracy"}, parameters={"y": "Y"})
    table = render_table(run.state, metric="loss", mode=Mode.MIN, columns=columns)
    headers = [str(column.header) for column in table.columns]
    assert headers == [
        "Trial name",
        "Status",
        "Location",
        "Y",
        "Iter",
        "Total time (s)",
        "loss",
        "accuracy",
    ]
    assert list(table.columns[3].cells) == ["10"]
    assert list(table.columns[7].cells) == ["0.75"]
    lines = status_lines(run.state, metric="loss", mode=Mode.MIN, columns=columns)
    assert any(line.endswith("loss=0.5, accuracy=0.75") for line in lines), lines


# -- parameter columns: Ray's, one per searched parameter ----------------------------


def searched(space: Mapping[str, object], samples: int = 1) -> ExperimentState:
    """Trials drawn by the variant generator from `space`, all running."""
    generator = BasicVariantGenerator().with_space(space, num_samples=samples, seed=3)
    state = new_experiment(ExperimentConfig(trainable_name="train", metric="loss"), None, generator)
    outcome = step(state, ClusterResourcesChanged(at=1.0, total=Resources(cpu=16)))
    assert not isinstance(outcome, Rejection), outcome
    return outcome[0]


def test_the_text_status_shows_each_searched_parameter_but_not_the_constants() -> None:
    state = searched(
        {"lr": tune.grid_search([0.5, 0.25]), "model": {"layers": tune.grid_search([1, 2])}, "k": 7}
    )
    lines = status_lines(state, metric="loss", mode=Mode.MIN)
    rows = [line for line in lines if line.startswith(" - ")]
    first = trials_in_order(state)[0]
    assert rows[0] == f" - {spec_name(first)}:\tRUNNING, {CPU}, lr=0.5, model/layers=1"
    assert [row.rpartition(CPU)[2] for row in rows] == [
        ", lr=0.5, model/layers=1",
        ", lr=0.25, model/layers=1",
        ", lr=0.5, model/layers=2",
        ", lr=0.25, model/layers=2",
    ]


def test_the_table_has_a_column_per_searched_parameter_sorted_without_a_limit() -> None:
    space: dict[str, object] = {f"p{n}": tune.uniform(0, 1) for n in (6, 5, 4, 3, 2, 1, 0)}
    space["text"] = tune.choice(["a-rather-long-choice-of-words"])
    table = render_table(searched(space), metric="loss", mode=Mode.MIN)
    headers = [str(column.header) for column in table.columns]
    assert headers[3:11] == ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "text"]
    assert list(table.columns[10].cells) == ["a-rather-long-cho..."]
    assert all(len(str(cell)) <= 9 for cell in table.columns[3].cells)  # 0.xxxxx: 5 digits
    assert table.caption is None


def test_parameter_columns_left_out_for_the_width_are_named() -> None:
    space = {f"parameter_{n}": tune.uniform(0, 1) for n in range(6)}
    lines = drawn(searched(space, samples=2), 100)
    assert all(cell_len(line) <= 100 for line in lines), "\n".join(lines)
    header = next(line for line in lines if "Trial name" in line)
    assert "parameter_0" in header
    assert "parameter_5" not in header
    bottom = next(number for number, line in enumerate(lines) if line.startswith("└"))
    caption = " ".join(lines[bottom + 1 :])
    assert caption.startswith("Not shown, to fit the width:")
    assert "parameter_5" in caption


def test_chosen_parameter_columns_replace_the_searched_ones_in_the_text_too() -> None:
    state = searched({"lr": tune.grid_search([0.5]), "model": {"layers": 3}})
    columns = Columns(parameters={"model/layers": "layers"})
    lines = status_lines(state, metric="loss", mode=Mode.MIN, columns=columns)
    assert lines[-1].endswith(f"RUNNING, {CPU}, layers=3")


def test_an_interrupted_experiment_is_not_called_finished_and_says_how_to_resume() -> None:
    run = Run(metric="loss", mode=Mode.MIN)
    run.cluster(cpu=2)
    run.add(4)
    run.result(tid(0), loss=0.5, done=True)
    run.feed(ExperimentInterrupted(at=run.tick(), reason="interrupted by the user (Ctrl-C)"))
    assert run.state.done
    summary = final_summary(run.state, "loss", Mode.MIN, experiment_dir="/runs/exp")
    lines = summary.splitlines()
    assert lines[0] == "Experiment interrupted: 4 trials (3 PENDING, 1 TERMINATED); 3 not finished."
    assert lines[1] == (
        "Its state is saved. Resume it with: tunecore resume /runs/exp --trainable "
        "MODULE:FUNCTION, or Tuner.restore('/runs/exp', trainable).fit()"
    )  # "train" is no import path: the command line could not import it
    recorded = msgspec.structs.replace(run.state.config, trainable_name="my_project.train:fit")
    in_a_module = msgspec.structs.replace(run.state, config=recorded)
    summary = final_summary(in_a_module, "loss", Mode.MIN, experiment_dir="/my runs/exp")
    assert summary.splitlines()[1] == (
        "Its state is saved. Resume it with: tunecore resume '/my runs/exp' --trainable "
        "my_project.train:fit, or Tuner.restore('/my runs/exp', trainable).fit()"
    )
    assert "finished:" not in summary


# -- CLIReporter's display settings ---------------------------------------------------


@pytest.mark.parametrize(("mode", "order"), [(Mode.MIN, [1, 0, 2, 3]), (Mode.MAX, [2, 0, 1, 3])])
def test_sort_by_metric_puts_the_best_first_and_trials_without_a_number_last(
    mode: Mode, order: list[int]
) -> None:
    """Ray's `sort_by_metric=True`: per status, best first; the NaN of
    trial 3 is no number, so it comes last."""
    columns = Columns(sort_by_metric=True)
    lines = status_lines(scored(), metric="loss", mode=mode, columns=columns)
    shown = [line.split(":")[0].removeprefix(" - ") for line in lines if line.startswith(" - ")]
    assert shown == [name(n) for n in order]
    by_name = status_lines(scored(), metric="loss", mode=mode)
    first = next(line for line in by_name if line.startswith(" - "))
    assert first.startswith(f" - {name(0)}:")


def test_max_column_length_cuts_parameter_values() -> None:
    run = Run(metric="loss", mode=Mode.MIN)
    run.cluster(cpu=1)
    run.add(path="a-rather-long-parameter-value")
    lines = status_lines(run.state, metric="loss", mode=Mode.MIN, columns=Columns())
    assert "path=a-rather-long-par..." in lines[-1]
    short = status_lines(
        run.state, metric="loss", mode=Mode.MIN, columns=Columns(max_column_length=8)
    )
    assert "path=a-rat..." in short[-1]  # 8 characters in all


def test_max_error_rows_limits_the_errored_trials_listed() -> None:
    run = Run()
    run.cluster(cpu=3)
    run.add(3)
    for number in range(3):
        run.fail(tid(number), f"ValueError: {number}")
    summary = final_summary(run.state, None, None, max_error_rows=1).splitlines()
    assert summary[1:] == [
        "Errored trials (3):",
        f" - {name(0)}: 1 failure, ValueError: 0; see error.txt in the trial's directory",
        " ... 2 more",
    ]


def test_without_intermediate_tables_the_status_shows_only_at_the_end() -> None:
    out, buffer = console(terminal=False)
    reporter = ProgressReporter(console=out, metric="loss", mode=Mode.MIN, intermediate=False)
    reporter.update(scored(), now=10.0)
    reporter.update(scored(), now=100.0)
    assert reporter.shown == 0
    reporter.close(scored())
    assert reporter.shown == 1
    assert buffer.getvalue().count("== Status ==") == 1


@given(st.text(st.sampled_from("aZ09_=.,\u0130\u00df"), max_size=16))
def test_natural_key_reads_digit_runs_as_numbers_and_text_without_case(tag: str) -> None:
    """The key, made apart and interleaved for speed, is still the one its
    docstring describes: text lowered at even places, numbers at odd."""
    parts = re.split(r"([0-9]+)", tag)
    assert natural_key(tag) == tuple(
        (int(part), "") if position % 2 else (-1, part.lower())
        for position, part in enumerate(parts)
    )


def test_the_header_says_when_it_waits_for_a_searcher_that_declined() -> None:
    """Ray's loop prints nothing while it blocks asking; tunecore says why
    nothing runs (`core.search.declines`)."""
    searcher = ExternalSearcher(name="tests:Scripted", asks_again=True)
    state = new_experiment(ExperimentConfig(trainable_name="train"), None, searcher)
    events: list[ExperimentEvent] = [
        ClusterResourcesChanged(at=1.0, total=Resources(cpu=1)),
        Asked(at=1.0, key=0, trial_id="trial_00000"),
        Tick(at=2.0),
        Asked(at=2.0, key=1, trial_id="trial_00000"),
    ]
    for event in events:
        outcome = step(state, event)
        assert not isinstance(outcome, Rejection), outcome
        state = outcome[0]
    lines = status_lines(state, metric=None, mode=None)
    assert lines[4] == (
        "Waiting for the searcher: it suggested no trial when asked 2 times in a row; "
        "asking again, up to 25 times in a row"
    )
    assert not any(
        line.startswith("Waiting") for line in status_lines(scored(), metric=None, mode=None)
    )
