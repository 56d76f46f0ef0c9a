"""Reading a finished experiment back at 1,000 to 100,000 trials (issue 41):
does each read stay fast, and its cost per trial flat, as the experiment grows?

    python -m benchmarks scale_reads [--quick] [--sizes 1000,10000,100000]
        [--restore-sizes 1000,10000,100000] [--finished-sizes 1000,10000]
        [--searcher-trials 200,1000] [--cache DIR]

The experiments (built once, kept under `--cache` between runs, keyed by
tunecore's version):

- `fifo`: N one-report trials, simulated (`tunecore.simulate`, 16 virtual CPUs);
- `asha`: N trials of a learning curve up to 100 iterations under ASHA
  (grace 1, reduction factor 4), simulated;
- `killed`: N one-report trials on the in-process executor, the driver
  killed (`os._exit`) once N/2 have finished: what a crash leaves;
- `finished`: the same run to its end (in-process; a simulated experiment
  cannot be restored, `Tuner.restore` says so).

Each read runs in a fresh interpreter (`--read WHAT SWEEP N DIR`) and reports
its CPU time (`time.process_time`: the machine is shared, and CPU time does
not count the moments another process holds a core), its wall time and the
process's peak RSS (`VmHWM`). The reads: `ResultGrid.from_path`, `tunecore
status`, `tunecore replay` (every event, checked against the snapshots),
`get_dataframe()` (pandas imported before the clock), one snapshot of the
final state (encode and write; its size), the progress table's redraw (the
status lines and the table a terminal gets, per redraw, averaged), and
`Tuner.restore(...).fit()`: of a finished experiment to its return, of a
killed one to its first new result (the child exits there).

Driver memory per finished trial: each simulated build's RSS after the run
(the `ResultGrid` alive) less before it, largest size against smallest, per
extra trial: the fixed costs cancel; the event log is on disk, not in it.
The searcher rows run `benchmarks.search_overhead` at `--searcher-trials`
(Optuna's TPE grows with its history: 10,000 trials take hours on a busy
2-core machine, so the default stops at 1,000), the median of
`SEARCHER_REPEATS` interleaved repeats: at 200 trials one repeat's "added"
moved from 0.04 to 0.52 ms with the machine's load, the same code minutes
apart.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import io
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.children import emit, peak_rss_kib, run_child
from benchmarks.command_line import exit_status, trial_counts
from benchmarks.scale import current_rss_kb
from benchmarks.scratch import run_dir
from tunecore.callback import Callback

FIFO = "fifo"
ASHA = "asha"
KILLED = "killed"
FINISHED = "finished"
SIMULATED_SWEEPS = (FIFO, ASHA)
MAX_T = 100
CHILD_TIMEOUT_S = 3 * 3600.0
BUILD_FILE = "build.json"
REDRAWS = 50

FROM_PATH = "from_path"
STATUS = "status"
REPLAY = "replay"
DATAFRAME = "get_dataframe"
SNAPSHOT = "snapshot"
REDRAW = "redraw"
RESTORE = "restore"
READS = (FROM_PATH, STATUS, REPLAY, DATAFRAME, SNAPSHOT, REDRAW)

TARGET_TRIALS = 100_000  # the size the read and restore targets are set at
READ_TARGET_S = 5.0  # from_path and status at the largest size
RESTORE_TARGET_S = 10.0  # a killed experiment to its first new result
FLAT_TARGET = 1.2  # cost per trial (or per redraw) at the largest size over the smallest
MEMORY_TARGET_KB = 2.0  # driver memory per finished trial beyond the log


# -- the experiments ------------------------------------------------------------------------


def report_once(config: dict[str, Any]) -> None:
    """The in-process trainable: one result, then return."""
    import tunecore  # noqa: PLC0415 - the trainable imports what it uses

    tunecore.report({"score": float(config["x"])})


def one_result(config: Mapping[str, Any], _iteration: int) -> tuple[dict[str, Any], float]:
    """The simulated FIFO trainable: its score, one virtual second."""
    return {"score": float(config["x"])}, 1.0


def curve(config: Mapping[str, Any], iteration: int) -> tuple[dict[str, Any], float]:
    """The simulated ASHA trainable: a loss falling towards a floor."""
    a, b = float(config["a"]), float(config["b"])
    return {"loss": a + b / iteration}, 1.0 + a


def build(sweep: str, trials: int, directory: Path) -> dict[str, Any]:
    """Run one experiment into `directory` (its parent is the storage path,
    its name the experiment's) and say what the driver spent."""
    import tunecore  # noqa: PLC0415 - imported before the clock
    from tunecore.model import Resources  # noqa: PLC0415
    from tunecore.schedulers import ASHAScheduler  # noqa: PLC0415

    run_config = tunecore.RunConfig(
        name=directory.name, storage_path=str(directory.parent), verbose=0
    )
    rss_before = current_rss_kb()
    started = time.process_time()
    if sweep == FIFO:
        grid: Any = tunecore.simulate(
            one_result,
            param_space={"x": tunecore.uniform(0.0, 1.0)},
            tune_config=tunecore.TuneConfig(num_samples=trials, seed=0),
            run_config=run_config,
            cluster=Resources(cpu=16),
            max_iterations=1,
        )
    elif sweep == ASHA:
        grid = tunecore.simulate(
            curve,
            param_space={"a": tunecore.uniform(0.0, 1.0), "b": tunecore.uniform(0.0, 5.0)},
            tune_config=tunecore.TuneConfig(
                metric="loss",
                mode="min",
                num_samples=trials,
                seed=0,
                scheduler=ASHAScheduler(max_t=MAX_T, grace_period=1, reduction_factor=4),
            ),
            run_config=run_config,
            cluster=Resources(cpu=16),
            max_iterations=MAX_T,
        )
    else:
        from benchmarks.scale_reads import report_once as trainable  # noqa: PLC0415 - its real name

        killer = [_KillAfter(trials // 2)] if sweep == KILLED else []
        grid = tunecore.Tuner(
            trainable,
            param_space={"x": tunecore.uniform(0.0, 1.0)},
            tune_config=tunecore.TuneConfig(num_samples=trials, seed=0),
            run_config=tunecore.RunConfig(
                name=directory.name,
                storage_path=str(directory.parent),
                verbose=0,
                executor="in_process",
                callbacks=killer,
            ),
        ).fit()
    cpu_s = time.process_time() - started
    return {
        "cpu_s": cpu_s,
        "rss_growth_kb": current_rss_kb() - rss_before,
        "peak_rss_kb": peak_rss_kib(),
        "finished": len(grid),
    }


class _KillAfter(Callback):
    """A callback that ends the driver the way a kill does once `count`
    trials have finished: no clean-up, no final snapshot."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.finished = 0

    def on_trial_complete(self, iteration: int, trials: Sequence[Any], trial: Any) -> None:
        self.finished += 1
        if self.finished >= self.count:
            emit({"killed_after": self.finished})
            sys.stdout.flush()
            os._exit(0)


class _FirstResult(Callback):
    """A callback that emits the CPU and wall time since `started` at the
    first result it sees, and ends the process there."""

    def __init__(self, cpu_started: float, wall_started: float) -> None:
        self.cpu_started, self.wall_started = cpu_started, wall_started

    def on_trial_result(
        self, iteration: int, trials: Sequence[Any], trial: Any, result: Mapping[str, Any]
    ) -> None:
        cpu_s = time.process_time() - self.cpu_started
        wall_s = time.perf_counter() - self.wall_started
        emit({"cpu_s": cpu_s, "wall_s": wall_s, "peak_rss_kb": peak_rss_kib()})
        sys.stdout.flush()
        os._exit(0)


# -- the reads ------------------------------------------------------------------------------


def read(what: str, sweep: str, directory: Path) -> dict[str, Any]:
    """Prepare (untimed), then time one read of the experiment in `directory`."""
    import tunecore  # noqa: PLC0415 - imported before the clock
    from tunecore.cli import main as cli  # noqa: PLC0415

    _ = tunecore.ResultGrid, tunecore.Tuner  # the package imports a name at its first use
    out: dict[str, Any] = {}
    if what == RESTORE:
        return restore(sweep, directory)
    prepared: Any = None
    if what == DATAFRAME:
        import pandas  # noqa: F401, PLC0415 - imported before the clock

        prepared = tunecore.ResultGrid.from_path(directory)
    elif what in (SNAPSHOT, REDRAW):
        prepared = tunecore.ResultGrid.from_path(directory)  # warms the same imports
        prepared = _state(directory)
    base_rss = current_rss_kb()
    cpu, wall = time.process_time(), time.perf_counter()
    if what == FROM_PATH:
        out["trials"] = len(tunecore.ResultGrid.from_path(directory))
    elif what in (STATUS, REPLAY):
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            out["exit"] = cli([what, str(directory)])
        out["lines"] = printed.getvalue().count("\n")
    elif what == DATAFRAME:
        out["rows"] = len(prepared.get_dataframe())
    elif what == SNAPSHOT:
        out["bytes"] = _snapshot(prepared)
    elif what == REDRAW:
        out.update(_redraws(prepared))
    else:
        raise ValueError(f"--read {what!r}: not one of {', '.join((*READS, RESTORE))}")
    out.update(
        cpu_s=time.process_time() - cpu,
        wall_s=time.perf_counter() - wall,
        peak_rss_kb=peak_rss_kib(),
        base_rss_kb=base_rss,
    )
    return out


def _state(directory: Path) -> Any:
    from tunecore.api.loader import load_experiment  # noqa: PLC0415

    return load_experiment(directory).state


def _snapshot(state: Any) -> int:
    """Encode and write one snapshot of `state` (into a scratch directory,
    leaving the experiment's own alone); its size in bytes."""
    from tunecore.core.experiment.snapshot import encode_state  # noqa: PLC0415
    from tunecore.shell.journal import EMPTY_DIGEST, SnapshotStore  # noqa: PLC0415

    probe = Path(run_dir("bench-scale-reads-snapshot-"))
    store = SnapshotStore(probe)
    records = 1
    store.write(records, EMPTY_DIGEST, encode_state(state))
    return store.path(records).stat().st_size


def _redraws(state: Any) -> dict[str, Any]:
    """What one redraw of the progress output costs: the status lines (a
    pipe or a file) and the table (a terminal), CPU ms each, averaged. As a
    run's `ProgressReporter` draws them: from the rows it keeps between
    redraws (`TrialRows`, read from the state once, untimed: a run builds
    them a few trials at a time), caught up with the state at each one.
    `prime_ms` is that first read of the whole state."""
    from tunecore.shell.progress import render_table, status_lines  # noqa: PLC0415
    from tunecore.shell.progress_rows import TrialRows  # noqa: PLC0415

    metric = state.config.metric
    mode = state.config.mode
    started = time.process_time()
    rows = TrialRows.of(state, metric, mode)
    prime_ms = 1000 * (time.process_time() - started)
    started = time.process_time()
    for _ in range(REDRAWS):
        rows.update(state)
        lines = status_lines(state, metric=metric, mode=mode, rows=rows)
    lines_ms = 1000 * (time.process_time() - started) / REDRAWS
    started = time.process_time()
    for _ in range(REDRAWS):
        rows.update(state)
        render_table(state, metric=metric, mode=mode, width=120, rows=rows)
    table_ms = 1000 * (time.process_time() - started) / REDRAWS
    return {"lines_ms": lines_ms, "table_ms": table_ms, "prime_ms": prime_ms, "rows": len(lines)}


def restore(sweep: str, directory: Path) -> dict[str, Any]:
    """`Tuner.restore(...).fit()` on a copy of the experiment (a restore
    appends to it): a finished one to its return; a killed one to its first
    new result (`_FirstResult` ends the process there)."""
    import tunecore  # noqa: PLC0415 - imported before the clock
    from benchmarks.scale_reads import report_once as trainable  # noqa: PLC0415 - its real name

    copy = Path(run_dir("bench-scale-reads-restore-")) / directory.name
    shutil.copytree(directory, copy)
    cpu, wall = time.process_time(), time.perf_counter()
    callbacks: list[object] = [_FirstResult(cpu, wall)] if sweep == KILLED else []
    grid = tunecore.Tuner.restore(str(copy), trainable, callbacks=callbacks, verbose=0).fit()
    return {
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "peak_rss_kb": peak_rss_kib(),
        "trials": len(grid),
    }


# -- the parent -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    trials: tuple[int, ...]
    restore_trials: tuple[int, ...]
    searcher_trials: tuple[int, ...]
    finished_trials: tuple[int, ...] = ()
    """The sizes of the finished in-process experiments restored (building
    one runs every trial in-process: 100,000 take some 10 minutes)."""


def cache_root(cache: str | None) -> Path:
    """Where built experiments are kept between runs: one directory per
    version of tunecore's code (`code_digest`). Keyed by the package's
    version alone, which no commit changes, a run after a change to the
    driver read builds made by older code, and reported their memory (the
    build's RSS growth) as the new code's."""
    base = Path(cache) if cache else Path(tempfile.gettempdir()) / "tunecore-scale-reads"
    return base / f"{importlib.metadata.version('tunecore')}-{code_digest()}"


def code_digest() -> str:
    """A digest of tunecore's source files, names and contents: a build
    records what this code writes and keeps in memory."""
    import tunecore  # noqa: PLC0415 - the package measured

    package = Path(tunecore.__file__).parent
    digest = hashlib.sha256()
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def drop_older_builds(root: Path) -> None:
    """Deletes the builds other versions of the code made beside `root`:
    no run reads them again, and at 100,000 trials they take gigabytes of
    a disk the test suite and CI share."""
    if not root.parent.is_dir():
        return
    for other in root.parent.iterdir():
        if other != root and other.is_dir():
            shutil.rmtree(other)


def ensure_built(sweep: str, trials: int, root: Path) -> tuple[Path, dict[str, Any] | str]:
    """The experiment's directory and its build record, building it (in a
    child) if the cache has none; or why it could not be built."""
    directory = root / f"{sweep}-{trials}"
    record = directory / BUILD_FILE
    if record.is_file():
        return directory, dict(json.loads(record.read_text()))
    if directory.exists():
        shutil.rmtree(directory)  # a build cut short
    print(f"building {sweep} {trials:,} ...", file=sys.stderr, flush=True)
    child = run_child(
        "benchmarks.scale_reads", ["--build", sweep, str(trials), str(directory)], CHILD_TIMEOUT_S
    )
    if child.data is None:
        return directory, child.problem or "no result"
    if sweep == KILLED and child.data.get("killed_after") != trials // 2:
        return directory, f"expected a kill after {trials // 2} trials, got {child.data}"
    if sweep != KILLED and child.data.get("finished") != trials:
        return directory, f"{child.data.get('finished')} trials, expected {trials}"
    record.write_text(json.dumps(child.data))
    return directory, child.data


def fresh_build(sweep: str, trials: int, directory: Path) -> dict[str, Any] | str:
    """One build in a child into `directory`, never cached (the memory
    check measures the code as it is now); its record, or why it failed."""
    print(f"building {sweep} {trials:,} (fresh) ...", file=sys.stderr, flush=True)
    child = run_child(
        "benchmarks.scale_reads", ["--build", sweep, str(trials), str(directory)], CHILD_TIMEOUT_S
    )
    if child.data is None:
        return child.problem or "no result"
    if child.data.get("finished") != trials:
        return f"{child.data.get('finished')} trials, expected {trials}"
    return child.data


def measure(what: str, sweep: str, trials: int, directory: Path) -> dict[str, Any] | str:
    print(f"{what} on {sweep} {trials:,} ...", file=sys.stderr, flush=True)
    child = run_child(
        "benchmarks.scale_reads",
        ["--read", what, sweep, str(trials), str(directory)],
        CHILD_TIMEOUT_S,
    )
    if child.data is None:
        return child.problem or "no result"
    return child.data


Cell = dict[str, Any] | str
Results = dict[tuple[str, str, int], Cell]
"""(read, sweep, trials) -> the child's measurements, or what went wrong."""


def run(sizes: Sizes, cache: str | None) -> tuple[str, bool, list[str]]:
    """Build what the cache lacks, measure every read; (the Markdown
    report, whether every run passed and every target measured was met,
    the target lines)."""
    root = cache_root(cache)
    drop_older_builds(root)
    root.mkdir(parents=True, exist_ok=True)
    results: Results = {}
    builds: dict[tuple[str, int], Cell] = {}
    for sweep in SIMULATED_SWEEPS:
        for trials in sizes.trials:
            directory, built = ensure_built(sweep, trials, root)
            builds[sweep, trials] = built
            if isinstance(built, str):
                continue
            for what in READS:
                results[what, sweep, trials] = measure(what, sweep, trials, directory)
    for sweep, restored in ((KILLED, sizes.restore_trials), (FINISHED, sizes.finished_trials)):
        for trials in restored:
            directory, built = ensure_built(sweep, trials, root)
            builds[sweep, trials] = built
            if not isinstance(built, str):
                results[RESTORE, sweep, trials] = measure(RESTORE, sweep, trials, directory)
    searcher = searcher_rows(sizes.searcher_trials)
    return report(sizes, builds, results, searcher)


SEARCHER_REPEATS = 3


def searcher_rows(trials: Sequence[int]) -> list[Any]:
    """`benchmarks.search_overhead`'s measurements at `trials` (none without Optuna)."""
    from benchmarks import search_overhead  # noqa: PLC0415

    try:
        search_overhead.optuna_search()
    except ImportError:
        return []
    rows = []
    for n in trials:
        print(f"searcher overhead at {n:,} trials ...", file=sys.stderr, flush=True)
        rows.append(search_overhead.measure(n, repeats=SEARCHER_REPEATS))
    return rows


def _cpu(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    if isinstance(cell, str):
        return "FAILED"
    return f"{cell['cpu_s']:.2f} ({cell['peak_rss_kb'] / 1024:.0f})"


def per_trial_ratio(cells: Mapping[int, Cell], key: str = "cpu_s") -> float | None:
    """The cost per trial at the largest size over the smallest's, of the
    sizes measured."""
    done = {n: c[key] for n, c in cells.items() if not isinstance(c, str)}
    if len(done) < 2:
        return None
    small, large = min(done), max(done)
    return float((done[large] / large) / (done[small] / small))


def flat_ratio(cells: Mapping[int, Cell], key: str) -> float | None:
    """The cost (not per trial) at the largest size over the smallest's."""
    done = {n: c[key] for n, c in cells.items() if not isinstance(c, str)}
    if len(done) < 2:
        return None
    return float(done[max(done)] / done[min(done)])


def verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else ("met" if ok else "**NOT met**")


def memory_per_trial(builds: Mapping[tuple[str, int], Cell], sweep: str) -> float | None:
    """KB of driver RSS per finished trial, largest build against smallest."""
    done = {
        n: float(c["rss_growth_kb"])
        for (s, n), c in builds.items()
        if s == sweep and not isinstance(c, str)
    }
    if len(done) < 2:
        return None
    small, large = min(done), max(done)
    return (done[large] - done[small]) / (large - small)


def report(
    sizes: Sizes, builds: Mapping[tuple[str, int], Cell], results: Results, searcher: Sequence[Any]
) -> tuple[str, bool, list[str]]:
    columns = sizes.trials
    lines = [
        "### Reading experiments of "
        + ", ".join(f"{n:,}" for n in columns)
        + " trials (tunecore, no Ray)",
        "",
        f"{os.cpu_count()} cores, Python {platform.python_version()}, tunecore "
        f"{importlib.metadata.version('tunecore')}, {platform.machine()} {platform.node()}. "
        "CPU s of the reading process (its peak RSS, MB).",
        "",
        "| read | sweep | " + " | ".join(f"{n:,} trials" for n in columns) + " | per trial, "
        "largest / smallest |",
        "|---|---|" + "---:|" * (len(columns) + 1),
    ]
    for sweep in SIMULATED_SWEEPS:
        lines.append(
            f"| build (simulate) | {sweep} | "
            + " | ".join(_cpu(builds.get((sweep, n))) for n in columns)
            + " | "
            + _ratio(per_trial_ratio(_cells_of_builds(builds, sweep)))
            + " |"
        )
    for what in READS:
        for sweep in SIMULATED_SWEEPS:
            cells = {n: results[what, sweep, n] for n in columns if (what, sweep, n) in results}
            lines.append(
                f"| {what} | {sweep} | "
                + " | ".join(_cpu(cells.get(n)) for n in columns)
                + f" | {_ratio(per_trial_ratio(cells))} |"
            )
    restores = sizes.restore_trials
    if restores:
        lines += [
            "",
            "| `Tuner.restore(...).fit()`, in-process | "
            + " | ".join(f"{n:,} trials" for n in restores)
            + " |",
            "|---|" + "---:|" * len(restores),
            "| finished, to its return: CPU s (wall s) | "
            + " | ".join(_restore_cell(results.get((RESTORE, FINISHED, n))) for n in restores)
            + " |",
            "| killed at half, to its first new result: CPU s (wall s) | "
            + " | ".join(_restore_cell(results.get((RESTORE, KILLED, n))) for n in restores)
            + " |",
        ]
    lines += ["", *detail_lines(columns, results)]
    targets, failed = target_lines(sizes, builds, results, searcher)
    lines += ["", "Targets (issue 41):", "", *targets]
    if searcher:
        from benchmarks.search_overhead import table  # noqa: PLC0415

        lines += [
            "",
            f"Searcher overhead (`benchmarks.search_overhead`, median of {SEARCHER_REPEATS}):",
            "",
        ]
        lines.append(table(searcher))
    problems = [
        f"- {what} {sweep} {n:,}: {cell}"
        for (what, sweep, n), cell in results.items()
        if isinstance(cell, str)
    ] + [f"- build {s} {n:,}: {c}" for (s, n), c in builds.items() if isinstance(c, str)]
    if problems:
        lines += ["", "Failures:", "", *problems]
    return "\n".join(lines), not problems and not failed, targets


def _cells_of_builds(builds: Mapping[tuple[str, int], Cell], sweep: str) -> dict[int, Cell]:
    return {n: c for (s, n), c in builds.items() if s == sweep}


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _restore_cell(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    if isinstance(cell, str):
        return "FAILED"
    return f"{cell['cpu_s']:.2f} ({cell['wall_s']:.2f})"


def detail_lines(columns: Sequence[int], results: Results) -> list[str]:
    """Snapshot sizes and redraw costs, per size."""
    lines = [
        "| per size | sweep | " + " | ".join(f"{n:,} trials" for n in columns) + " |",
        "|---|---|" + "---:|" * len(columns),
    ]
    for sweep in SIMULATED_SWEEPS:
        snaps = [results.get((SNAPSHOT, sweep, n)) for n in columns]
        lines.append(
            f"| snapshot size, B / trial | {sweep} | "
            + " | ".join(
                "-" if not isinstance(c, dict) else f"{c['bytes'] / n:,.0f}"
                for c, n in zip(snaps, columns, strict=True)
            )
            + " |"
        )
        for key, label in (("lines_ms", "status lines"), ("table_ms", "table")):
            cells = [results.get((REDRAW, sweep, n)) for n in columns]
            lines.append(
                f"| redraw, {label}, CPU ms | {sweep} | "
                + " | ".join("-" if not isinstance(c, dict) else f"{c[key]:.1f}" for c in cells)
                + " |"
            )
    return lines


def target_lines(
    sizes: Sizes,
    builds: Mapping[tuple[str, int], Cell],
    results: Results,
    searcher: Sequence[Any],
) -> tuple[list[str], bool]:
    """One line per target, and whether any measured target was not met."""
    largest = max(sizes.trials)
    lines: list[str] = []
    failed = False

    def judge(label: str, value: str, ok: bool | None) -> None:
        nonlocal failed
        failed = failed or ok is False
        lines.append(f"- {label}: {value} ({verdict(ok)})")

    for what in (FROM_PATH, STATUS):
        for sweep in SIMULATED_SWEEPS:
            cell = results.get((what, sweep, largest))
            seconds = None if not isinstance(cell, dict) else float(cell["cpu_s"])
            value, ok = at_target_size(seconds, largest, READ_TARGET_S)
            judge(f"{what} on {sweep} {TARGET_TRIALS:,} < {READ_TARGET_S:g} s CPU", value, ok)
    if sizes.restore_trials:
        n = max(sizes.restore_trials)
        cell = results.get((RESTORE, KILLED, n))
        seconds = None if not isinstance(cell, dict) else float(cell["wall_s"])
        value, ok = at_target_size(seconds, n, RESTORE_TARGET_S)
        if isinstance(cell, dict):
            value += f"; {cell['cpu_s']:.2f} s CPU at {n:,}"
        judge(
            f"restore of killed {TARGET_TRIALS:,} to its first new result "
            f"< {RESTORE_TARGET_S:g} s wall",
            value,
            ok,
        )
    for sweep in SIMULATED_SWEEPS:
        cells = {
            n: results[REDRAW, sweep, n] for n in sizes.trials if (REDRAW, sweep, n) in results
        }
        for key in ("lines_ms", "table_ms"):
            ratio = flat_ratio(cells, key)
            judge(
                f"redraw ({key[:-3]}) on {sweep}, largest / smallest <= {FLAT_TARGET:g}x",
                _ratio(ratio),
                None if ratio is None else ratio <= FLAT_TARGET,
            )
    for sweep in SIMULATED_SWEEPS:
        kb = memory_per_trial(builds, sweep)
        judge(
            f"driver memory per finished trial on {sweep} <= {MEMORY_TARGET_KB:g} KB",
            "-" if kb is None else f"{kb:.2f} KB",
            None if kb is None else kb <= MEMORY_TARGET_KB,
        )
    if searcher:
        from benchmarks.search_overhead import targets  # noqa: PLC0415

        for _, label, measured, met in targets(searcher):
            judge(label, measured, met)
    return lines, failed


def at_target_size(seconds: float | None, trials: int, target: float) -> tuple[str, bool | None]:
    """A time measured at `trials` against a target set at `TARGET_TRIALS`:
    as measured there; from a smaller size, scaled linearly (what the
    per-trial ratios say holds, and `benchmarks.scale_regression` checks)
    and said so."""
    if seconds is None:
        return "-", None
    if trials >= TARGET_TRIALS:
        return f"{seconds:.2f} s", seconds < target
    projected = seconds * TARGET_TRIALS / trials
    shown = f"{seconds:.2f} s at {trials:,}, {projected:.1f} s scaled to {TARGET_TRIALS:,}"
    return shown, projected < target


def main(argv: Sequence[str]) -> int:
    return exit_status(measure_from(argv))


def measure_from(argv: Sequence[str]) -> tuple[str, bool, list[str]] | None:
    """Do what the command line asks: a child's one build or read (None),
    or the whole run (what `run` returns)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks scale_reads", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 trials, a smoke run")
    parser.add_argument("--sizes", type=trial_counts, default=(1_000, 10_000, 100_000))
    parser.add_argument("--restore-sizes", type=trial_counts, default=None)
    parser.add_argument("--finished-sizes", type=trial_counts, default=None)
    parser.add_argument("--searcher-trials", type=trial_counts, default=(200, 1_000))
    parser.add_argument("--cache", default=None, help="where built experiments are kept")
    parser.add_argument("--build", nargs=3, metavar=("SWEEP", "N", "DIR"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--read", nargs=4, metavar=("WHAT", "SWEEP", "N", "DIR"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(list(argv))
    if args.build is not None:
        sweep, trials, directory = args.build
        emit(build(sweep, int(trials), Path(directory)))
        return None
    if args.read is not None:
        what, sweep, _trials, directory = args.read
        emit(read(what, sweep, Path(directory)))
        return None
    trials = (100, 1_000) if args.quick else args.sizes
    restore_trials = args.restore_sizes if args.restore_sizes is not None else trials
    searcher_trials = (50, 200) if args.quick else args.searcher_trials
    finished = args.finished_sizes if args.finished_sizes is not None else restore_trials
    return run(Sizes(trials, restore_trials, searcher_trials, finished), args.cache)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
