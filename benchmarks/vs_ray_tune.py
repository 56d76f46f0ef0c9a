"""tunecore against Ray Tune, side by side in one run, on the same workloads.

(a) many trials of a function that reports once, 1 CPU each: the cost of
    starting and ending a trial;
(b) 4 trials reporting thousands of results as fast as they can: the cost of
    one result, with tunecore's default handshake (one report, one round
    trip) and, when TuneConfig has it, with its opt-in result buffer;
(c) 100 trials x 50 iterations under ASHA: a realistic mix of both.

Each (framework, workload) runs in its own subprocess: a fresh interpreter
that imports its framework, starts a fresh local Ray with `ray.init(num_cpus=2)`
and runs one experiment. Imports and `ray.init` (with Ray's one-time set-up of
its serializers, `ray.put` of one object) are *not* timed (they are
identical for both frameworks, and `ray.init` is reported separately); the
clock runs from just before the `Tuner` is built to just after `fit()`
returns. The child also reports its peak RSS (`VmHWM` of the driver
process alone: Ray's own processes and the workers are other processes) and
what the experiment produced, and the parent checks that every trial ran and
every result arrived, so no row can pass by doing nothing. The child prints
one line `BENCH_RESULT {json}` on stdout among whatever the framework prints.

Ray Tune runs twice per workload: with its defaults (`reuse_actors=False`)
and at its best here (`reuse_actors=True`); the targets are against the
second. tunecore runs with its defaults (it reuses actors). Each writes its
default result logs: JSON and CSV, and TensorBoard files when tensorboardX
is installed (it is, in the bench session), as Ray Tune does. Next to the
wall time each child reports the driver's CPU time (user + system, all its
threads) over the same span: on a shared machine it moves less than the
wall time, and it says how much of a run is the driver's own work.

The trainables are defined here and the child runs as `python -m
benchmarks.vs_ray_tune`, so they live in `__main__` and both frameworks ship
them to the workers by value (Ray workers do not have `benchmarks` on their
path).

Run with `python -m benchmarks.vs_ray_tune [--quick] [--only a,b,c]`; Ray Tune
must be installed (`pip install "ray[tune]==<the installed ray's version>"`,
which `nox -s bench` does).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks import ray_floor
from benchmarks.children import (
    emit,
    peak_rss_kib,
    preload_ray_serializers,
    preload_tunecore,
    run_child,
)
from benchmarks.cpu_budget import RayProcessesCpu, busy_share, cpu_ticks
from benchmarks.scratch import run_dir
from tunecore.core.schedulers.asha_rungs import rung_milestones

RAY_TUNE = "ray_tune"
TUNECORE = "tunecore"
WORKLOADS = ("a", "b", "c")
BUFFER_LENGTH = 32  # tunecore's opt-in result buffer in row (b, buffered)
GRACE_PERIOD, REDUCTION = 1, 4  # (c)'s ASHA, the same for both frameworks
NUM_CPUS = 2
CHILD_TIMEOUT_S = 3600.0

Report = Callable[[dict[str, float]], None]


@dataclass(frozen=True)
class Sizes:
    """How big each workload is (full run, or `--quick` smoke run)."""

    trials_a: int
    trials_b: int
    results_b: int
    trials_c: int
    iterations_c: int

    @classmethod
    def of(cls, quick: bool) -> Sizes:
        if quick:
            return cls(trials_a=20, trials_b=4, results_b=200, trials_c=10, iterations_c=10)
        return cls(trials_a=200, trials_b=4, results_b=2_000, trials_c=100, iterations_c=50)


# -- the trainables: one logic per workload, a thin wrapper per framework ----------------------


def report_once(config: Mapping[str, Any], report: Report) -> None:
    """(a): one result, then return."""
    report({"score": float(config["x"])})


def report_many(config: Mapping[str, Any], report: Report) -> None:
    """(b): `config["results"]` results, as fast as the framework takes them."""
    for i in range(int(config["results"])):
        report({"i": float(i)})


def asha_objective(config: Mapping[str, Any], report: Report) -> None:
    """(c): a loss that falls with training, lowest for some configs; the
    same for every run (no randomness), so both frameworks see the same
    curves. Configs are shuffled (k * 37 mod 100) so the good ones do not
    all come first."""
    k = int(config["k"])
    floor = (k * 37 % 100) / 100.0
    for step in range(1, int(config["iterations"]) + 1):
        report({"loss": floor + 1.0 / step})


def ray_tune_report(metrics: dict[str, float]) -> None:
    from ray import tune  # noqa: PLC0415 - only Ray Tune's workers import Ray Tune

    tune.report(metrics)


def tunecore_report(metrics: dict[str, float]) -> None:
    import tunecore  # noqa: PLC0415 - the same lookup as Ray Tune's side

    tunecore.report(metrics)


def ray_tune_a(config: dict[str, Any]) -> None:
    report_once(config, ray_tune_report)


def ray_tune_b(config: dict[str, Any]) -> None:
    report_many(config, ray_tune_report)


def ray_tune_c(config: dict[str, Any]) -> None:
    asha_objective(config, ray_tune_report)


def tunecore_a(config: dict[str, Any]) -> None:
    report_once(config, tunecore_report)


def tunecore_b(config: dict[str, Any]) -> None:
    report_many(config, tunecore_report)


def tunecore_c(config: dict[str, Any]) -> None:
    asha_objective(config, tunecore_report)


# -- the child: one experiment in a fresh interpreter ------------------------------------------


@dataclass(frozen=True)
class Plan:
    """One workload as both frameworks run it: trainable config, samples,
    and the ASHA settings (c) uses."""

    num_samples: int
    space: dict[str, Any]  # constants; the search-space entry is added per framework
    asha: bool


def plan(workload: str, sizes: Sizes) -> Plan:
    if workload == "a":
        return Plan(num_samples=sizes.trials_a, space={}, asha=False)
    if workload == "b":
        return Plan(num_samples=sizes.trials_b, space={"results": sizes.results_b}, asha=False)
    return Plan(num_samples=1, space={"iterations": sizes.iterations_c}, asha=True)


def iterations_of(metrics: Mapping[str, Any]) -> int:
    value = metrics.get("training_iteration")
    return int(value) if isinstance(value, int | float) else 0


Outcome = tuple[float, float, list[int], int]
"""(wall seconds, driver CPU seconds, iterations of each trial, errors)."""


def run_ray_tune(workload: str, sizes: Sizes, storage: str, reuse_actors: bool) -> Outcome:
    """One Ray Tune experiment, measured."""
    from ray import tune  # noqa: PLC0415 - Ray Tune is only installed in the bench session
    from ray.tune.schedulers import ASHAScheduler  # noqa: PLC0415

    work = plan(workload, sizes)
    fn = {"a": ray_tune_a, "b": ray_tune_b, "c": ray_tune_c}[workload]
    space: dict[str, Any] = dict(work.space)
    if workload == "a":
        space["x"] = tune.uniform(0.0, 1.0)
    if workload == "c":
        space["k"] = tune.grid_search(list(range(sizes.trials_c)))
    start = time.perf_counter()
    cpu = time.process_time()
    tuner = tune.Tuner(
        fn,
        param_space=space,
        tune_config=tune.TuneConfig(
            num_samples=work.num_samples,
            metric="loss" if work.asha else None,
            mode="min" if work.asha else None,
            # Ray Tune's AsyncHyperBandScheduler, which tunecore's mirrors.
            scheduler=ASHAScheduler(
                max_t=sizes.iterations_c, grace_period=GRACE_PERIOD, reduction_factor=REDUCTION
            )
            if work.asha
            else None,
            reuse_actors=reuse_actors,
        ),
        run_config=tune.RunConfig(storage_path=storage, verbose=0),
    )
    grid = tuner.fit()
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    results = [grid[i] for i in range(len(grid))]
    return seconds, cpu, [iterations_of(r.metrics or {}) for r in results], grid.num_errors


def run_tunecore(workload: str, sizes: Sizes, storage: str, buffer: int | None) -> Outcome:
    """One tunecore experiment, measured."""
    import tunecore  # noqa: PLC0415 - imported before the clock, like Ray Tune
    from tunecore.schedulers import ASHAScheduler  # noqa: PLC0415

    preload_tunecore()

    work = plan(workload, sizes)
    fn = {"a": tunecore_a, "b": tunecore_b, "c": tunecore_c}[workload]
    space: dict[str, Any] = dict(work.space)
    if workload == "a":
        space["x"] = tunecore.uniform(0.0, 1.0)
    if workload == "c":
        space["k"] = tunecore.grid_search(list(range(sizes.trials_c)))
    options: dict[str, Any] = {} if buffer is None else {"result_buffer_length": buffer}
    start = time.perf_counter()
    cpu = time.process_time()
    tuner = tunecore.Tuner(
        fn,
        param_space=space,
        tune_config=tunecore.TuneConfig(
            num_samples=work.num_samples,
            metric="loss" if work.asha else None,
            mode="min" if work.asha else None,
            scheduler=ASHAScheduler(
                max_t=sizes.iterations_c, grace_period=GRACE_PERIOD, reduction_factor=REDUCTION
            )
            if work.asha
            else None,
            **options,
        ),
        run_config=tunecore.RunConfig(storage_path=storage, verbose=0),
    )
    grid = tuner.fit()
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return seconds, cpu, [iterations_of(r.metrics) for r in grid], grid.num_errors


def buffer_unavailable() -> str | None:
    """Why tunecore cannot run the buffered row, or None if it can."""
    from tunecore import TuneConfig  # noqa: PLC0415

    if "result_buffer_length" not in TuneConfig.model_fields:
        return "TuneConfig has no result_buffer_length option yet"
    return None


def files_under(directory: str) -> int:
    """How many files and directories a run left in its storage: creating
    one is a cost of its own on some file systems (`ray_floor` measures it)."""
    return sum(len(dirs) + len(files) for _, dirs, files in os.walk(directory))


def rss_mb() -> float:
    """The driver's peak RSS so far in MB."""
    return peak_rss_kib() / 1024.0


def child(framework: str, workload: str, quick: bool, buffer: int | None, reuse: bool) -> None:
    """Run one experiment and print its measurements as one JSON line."""
    sizes = Sizes.of(quick)
    out: dict[str, Any] = {"framework": framework, "workload": workload, "buffer": buffer}
    if framework == TUNECORE and buffer is not None and (why := buffer_unavailable()):
        emit({**out, "unavailable": why})
        return
    try:  # imports before the clock and before ray.init, for both frameworks
        if framework == RAY_TUNE:
            import ray.tune  # noqa: PLC0415
        else:
            import tunecore.shell.executors.ray  # noqa: F401, PLC0415
    except ImportError as error:
        emit({**out, "unavailable": f"cannot import: {error}"})
        return
    import ray  # noqa: PLC0415

    preload_ray_serializers()
    started = time.perf_counter()
    ray.init(num_cpus=NUM_CPUS, include_dashboard=False)
    # Ray sets up its serializers at the first object it stores, importing
    # pyarrow and pydantic's v1 layer (about 0.3 s). `import ray.tune`
    # imports pyarrow already and tunecore does not, so without this the
    # same Ray start-up would fall inside tunecore's timed span only.
    ray.get(ray.put(None))
    out["ray_init_s"] = time.perf_counter() - started
    out["rss_before_mb"] = rss_mb()
    storage = run_dir(f"bench-{framework}-{workload}-")
    ticks, ray_processes = cpu_ticks(), RayProcessesCpu()
    ray_processes.start()
    if framework == RAY_TUNE:
        seconds, cpu, iterations, errors = run_ray_tune(workload, sizes, storage, reuse)
    else:
        seconds, cpu, iterations, errors = run_tunecore(workload, sizes, storage, buffer)
    out["busy"] = busy_share(ticks, cpu_ticks())
    used = ray_processes.stop()
    out["workers_cpu_s"], out["daemons_cpu_s"] = used["workers"], used["daemons"]
    out["peak_rss_mb"] = rss_mb()
    ray.shutdown()
    out["files"] = files_under(storage)
    out.update(seconds=seconds, cpu_s=cpu, iterations=iterations, errors=errors, reuse=reuse)
    emit(out)


# -- the parent: run the children side by side, check them, print the table -------------------


@dataclass(frozen=True)
class Measured:
    """One child's outcome: its measurements, or why it has none."""

    data: dict[str, Any]
    problem: str | None = None  # a failure: the run or its check
    unavailable: str | None = None  # the row cannot run here (not a failure)

    @property
    def seconds(self) -> float:
        return float(self.data["seconds"])

    @property
    def rss(self) -> float:
        return float(self.data["peak_rss_mb"])

    @property
    def cpu(self) -> float:
        return float(self.data["cpu_s"])


def spawn(framework: str, workload: str, quick: bool, buffer: int | None, reuse: bool) -> Measured:
    """Run one child and parse its JSON line."""
    command = ["--child", framework, workload]
    command += ["--quick"] if quick else []
    command += ["--buffer", str(buffer)] if buffer is not None else []
    command += ["--ray-tune-reuse-actors"] if reuse else []
    child = run_child("benchmarks.vs_ray_tune", command, CHILD_TIMEOUT_S)
    if child.data is None:
        return Measured({}, problem=child.problem)
    data = child.data
    if "unavailable" in data:
        return Measured(data, unavailable=str(data["unavailable"]))
    return Measured(data, problem=check(workload, Sizes.of(quick), data))


def check(workload: str, sizes: Sizes, data: Mapping[str, Any]) -> str | None:
    """What is wrong with a run that claims to have finished, if anything."""
    iterations: list[int] = data["iterations"]
    expected = {"a": sizes.trials_a, "b": sizes.trials_b, "c": sizes.trials_c}[workload]
    if data["errors"]:
        return f"{data['errors']} trials failed"
    if len(iterations) != expected:
        return f"{len(iterations)} trials, expected {expected}"
    if workload == "a" and iterations != [1] * expected:
        return f"expected one result per trial, got {sorted(set(iterations))}"
    if workload == "b" and iterations != [sizes.results_b] * expected:
        return f"expected {sizes.results_b} results per trial, got {iterations}"
    if workload == "c":
        if min(iterations) < 1 or max(iterations) != sizes.iterations_c:
            return f"iterations out of range 1..{sizes.iterations_c}: {sorted(set(iterations))}"
        if all(n == sizes.iterations_c for n in iterations):
            return "ASHA stopped no trial early"
    return None


@dataclass(frozen=True)
class Row:
    label: str
    workload: str
    target: float  # the speed-up the issue asks for, against Ray Tune with reuse on
    ray_tune: Measured  # its defaults (reuse_actors=False)
    ray_tune_reuse: Measured  # reuse_actors=True
    tunecore: Measured
    # The fewest actor calls any framework needs for the row: one per trial
    # (its result must come back), one per buffer of results, or under
    # ASHA one per rung a trial reached (`asha_round_trips`).
    round_trips: int


def asha_round_trips(iterations: Sequence[int], max_t: int) -> int:
    """The fewest actor calls (c) needs, given how far each trial ran: a
    trial waits for the scheduler's answer at each rung it reaches (a STOP
    lands at the report it answers, in both frameworks), and a trial past
    the last rung takes one more call to reach `max_t`. The rungs are the
    ASHA bracket's milestones below `max_t` (`rung_milestones`, Ray's
    formula)."""
    milestones = rung_milestones(GRACE_PERIOD, max_t, REDUCTION, 0)
    rungs = [milestone for milestone in milestones if milestone < max_t]
    return sum(
        sum(1 for rung in rungs if rung <= ran) + (1 if ran >= max_t else 0) for ran in iterations
    )


TARGETS = {"a": 15.0, "b": 4.0, "c": 10.0}
BUFFERED_TARGET = 25.0


def machine_line() -> str:
    ray_version = importlib.metadata.version("ray")
    return (
        f"{os.cpu_count()} cores ({NUM_CPUS} given to Ray), Python "
        f"{platform.python_version()}, Ray {ray_version}, tunecore "
        f"{importlib.metadata.version('tunecore')}, {platform.machine()} {platform.node()}"
    )


def run(quick: bool = False, only: Sequence[str] = WORKLOADS) -> tuple[str, bool]:
    """Run the comparison; (the Markdown report, whether every run passed its checks)."""
    sizes = Sizes.of(quick)
    labels = {
        "a": f"(a) {sizes.trials_a} trials x 1 report, 1 CPU each",
        "b": f"(b) {sizes.trials_b} trials x {sizes.results_b:,} results",
        "c": f"(c) {sizes.trials_c} trials x {sizes.iterations_c} iterations, ASHA",
    }
    rows: list[Row] = []
    progress("Ray's floor ...")
    floor = ray_floor.measure()
    missing: Measured | None = None  # Ray Tune is not installed: say so once, run the rest
    for workload in WORKLOADS:
        if workload not in only:
            continue
        progress(f"{labels[workload]}: Ray Tune ...")
        ray_tune = missing or spawn(RAY_TUNE, workload, quick, None, reuse=False)
        if ray_tune.unavailable is not None:
            missing = ray_tune
        progress(f"{labels[workload]}: Ray Tune, reuse_actors=True ...")
        reused = missing or spawn(RAY_TUNE, workload, quick, None, reuse=True)
        progress(f"{labels[workload]}: tunecore ...")
        tunecore = spawn(TUNECORE, workload, quick, None, reuse=False)
        label = labels[workload]
        trials = {"a": sizes.trials_a, "b": sizes.trials_b, "c": sizes.trials_c}[workload]
        calls = trials
        if workload == "c" and _usable(tunecore):
            calls = asha_round_trips(tunecore.data["iterations"], sizes.iterations_c)
        row = Row(label, workload, TARGETS[workload], ray_tune, reused, tunecore, calls)
        rows.append(row)
        if workload == "b":
            progress(f"{label}: tunecore, result buffer {BUFFER_LENGTH} ...")
            buffered = spawn(TUNECORE, workload, quick, BUFFER_LENGTH, reuse=False)
            label = f"{label}, tunecore result buffer {BUFFER_LENGTH}"
            calls = trials * -(-sizes.results_b // BUFFER_LENGTH)
            rows.append(Row(label, workload, BUFFERED_TARGET, ray_tune, reused, buffered, calls))
    return report(rows, sizes, quick, floor)


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def report(
    rows: Sequence[Row], sizes: Sizes, quick: bool, floor: Mapping[str, Any] | str
) -> tuple[str, bool]:
    title = "### tunecore against Ray Tune, side by side" + (" (--quick)" if quick else "")
    lines = [
        title,
        "",
        machine_line(),
        "",
        "| workload | Ray Tune s (defaults) | Ray Tune s (reuse_actors=True) | tunecore s "
        "| speed-up vs defaults | speed-up vs reuse | target vs reuse | Ray's floor s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes: list[str] = []
    ok = True
    for row in rows:
        runs = (row.ray_tune, row.ray_tune_reuse, row.tunecore)
        if any(m.unavailable is None and m.problem is not None for m in runs):
            ok = False
        cells = [row.label, *(_seconds(m) for m in runs)]
        for peer in (row.ray_tune, row.ray_tune_reuse):
            usable = _usable(peer) and _usable(row.tunecore)
            cells.append(f"{peer.seconds / row.tunecore.seconds:.1f}x" if usable else "-")
        cells.append(f">= {row.target:g}x")
        least = None if isinstance(floor, str) else ray_floor.floor_s(floor, row.round_trips)
        cells.append("-" if least is None else f"{least:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
        if _usable(row.ray_tune_reuse) and _usable(row.tunecore):
            ratio = row.ray_tune_reuse.seconds / row.tunecore.seconds
            verdict = "met" if ratio >= row.target else "NOT met"
            note = (
                f"- {row.label}: {ratio:.1f}x against Ray Tune with reuse_actors=True, "
                f"target {row.target:g}x {verdict}"
            )
            if least is not None and ratio < row.target:
                best = row.ray_tune_reuse.seconds / least
                reach = "below" if best < row.target else "above"
                note += (
                    f"; a run at Ray's floor ({least:.2f} s) would be {best:.1f}x, "
                    f"{reach} the target"
                )
            notes.append(note)
    lines += ["", *notes, ""]
    lines += details(rows, sizes)
    lines += [
        "",
        "Time runs from building the Tuner to the return of fit(); imports and",
        f"ray.init(num_cpus={NUM_CPUS}) are excluded for all and listed above. Each run is",
        "a fresh interpreter and a fresh Ray; the runs alternate per workload.",
        "Driver CPU is the driver process's user + system time over the same span (Ray's",
        "processes and the workers excluded); peak RSS is its VmHWM. Cores busy is the",
        "share of all cores' time, machine-wide, that was not idle during the run: near",
        "100% the run is bound by CPU, not by waiting on Ray's round trips. Workers CPU is",
        "what Ray's worker processes (the trials' actors, started ones included) used in",
        "the run, Ray daemons CPU the raylet's and the GCS server's (`benchmarks.cpu_budget`).",
        "Ray's floor (`benchmarks.ray_floor`, measured in this run) is the least a",
        "framework on Ray takes for the row with one actor call per trial start: starting",
        "two actors, then one call per trial, per buffer of results, or under ASHA per",
        "rung each trial reached (in tunecore's run), two in flight. tunecore's chained",
        "starts run up to nine one-report trials per call, so (a) can go below it.",
    ]
    if isinstance(floor, str):
        lines.append(f"Ray's floor: {floor}")
    else:
        tmpfs = floor.get("entries_tmpfs_ms")
        lines.append(
            f"Here: two actors start in {floor['start_s']:.3f} s; a call takes "
            f"{floor['two_ms']:.2f} ms with two in flight. A trial's directory and four "
            f"files with a line each (both frameworks write them, on the driver) cost "
            f"{floor['entries_ms']:.3f} ms of CPU where the runs store (`benchmarks.scratch`)"
            + ("" if tmpfs is None else f", {tmpfs:.3f} ms on tmpfs")
            + "; `files made` above counts the runs' entries."
        )
    problems = [
        f"- {row.label}, {name}: {measured.problem}"
        for row in rows
        for name, measured in (
            (RAY_TUNE, row.ray_tune),
            (f"{RAY_TUNE} reuse", row.ray_tune_reuse),
            (TUNECORE, row.tunecore),
        )
        if measured.problem is not None
    ]
    if problems:
        lines += ["", "Failures:", "", *dict.fromkeys(problems)]
    return "\n".join(lines), ok


def details(rows: Sequence[Row], sizes: Sizes) -> list[str]:
    """Per-run facts: what was produced, results/s, early stops, driver CPU
    and memory, Ray init."""
    lines = [
        "| run | trials | results | results/s | stopped early | driver CPU s | peak RSS MB "
        "| ray.init s | files made | cores busy | workers CPU s | Ray daemons CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    seen: set[int] = set()
    for row in rows:
        runs = (
            ("Ray Tune", row.ray_tune),
            ("Ray Tune reuse", row.ray_tune_reuse),
            ("tunecore", row.tunecore),
        )
        for name, measured in runs:
            if id(measured) in seen or not _usable(measured):
                continue
            seen.add(id(measured))
            data = measured.data
            iterations: list[int] = data["iterations"]
            total = sum(iterations)
            early = sum(1 for n in iterations if n < sizes.iterations_c)
            buffer = data.get("buffer")
            label = f"{row.label.split(')')[0]}) {name}" + (f", buffer {buffer}" if buffer else "")
            lines.append(
                f"| {label} | {len(iterations)} | {total:,} | {total / measured.seconds:,.0f} "
                f"| {early if row.workload == 'c' else '-'} | {measured.cpu:.2f} "
                f"| {measured.rss:.0f} | {data['ray_init_s']:.2f} | {data.get('files', '-')} "
                f"| {_percent(data.get('busy'))} | {_seconds_of(data.get('workers_cpu_s'))} "
                f"| {_seconds_of(data.get('daemons_cpu_s'))} |"
            )
    return lines


def _percent(share: object) -> str:
    return f"{share:.0%}" if isinstance(share, float) else "-"


def _seconds_of(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else "-"


def _usable(measured: Measured) -> bool:
    return measured.problem is None and measured.unavailable is None


def _seconds(measured: Measured) -> str:
    if measured.unavailable is not None:
        return f"unavailable ({measured.unavailable})"
    if measured.problem is not None:
        return "FAILED"
    return f"{measured.seconds:.2f}"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vs_ray_tune", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small workloads, a smoke run")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="workloads, e.g. a,c")
    parser.add_argument("--ray-tune-reuse-actors", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--child", nargs=2, metavar=("FRAMEWORK", "WORKLOAD"), help=argparse.SUPPRESS
    )
    parser.add_argument("--buffer", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        framework, workload = args.child
        child(framework, workload, args.quick, args.buffer, args.ray_tune_reuse_actors)
        return 0
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = sorted(set(only) - set(WORKLOADS))
    if unknown:
        parser.error(f"--only: unknown workloads {unknown}; choose from {', '.join(WORKLOADS)}")
    table, ok = run(args.quick, only)
    print(table)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
