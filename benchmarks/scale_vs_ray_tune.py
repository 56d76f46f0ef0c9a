"""tunecore against Ray Tune at its best (`reuse_actors=True`) at 1,000 and
10,000 trials, side by side in one run (issue 41): the run, reading its
results back, and restoring it after the driver was killed.

    python -m benchmarks scale_vs_ray_tune [--quick] [--fifo 1000,10000] [--asha 1000]

Two sweeps, as `benchmarks.scale` runs them: FIFO, N trials of a function
that reports once; ASHA, N trials of a learning curve of up to 100
iterations (max_t=100, grace_period=1, reduction_factor=4; a grid over
N configs). For each size the children alternate between the frameworks,
each a fresh interpreter (`--child OP FRAMEWORK SWEEP N DIR`):

- `fit`: a fresh `ray.init(num_cpus=2)` (not timed, nor are the imports),
  then the Tuner built and `fit()` run: wall and driver CPU seconds
  (`time.process_time`: all the driver's threads, not Ray's processes),
  and the driver's peak RSS (`VmHWM`);
- `kill`: the same run, the driver killed with SIGKILL by a callback once
  half the trials have finished (what a crash or an OOM kill leaves);
- `results`: what Ray Tune's docs give for reading an experiment back,
  `Tuner.restore(path, trainable).get_results()`, on the finished run,
  without Ray started; for tunecore also `ResultGrid.from_path(path)`;
- `restore`: `Tuner.restore(path, trainable).fit()` on a copy of the killed
  run, after a fresh `ray.init` (not timed), to its first new result (a
  callback ends the process there): the wall and CPU seconds from the call
  of `Tuner.restore`.

Ray Tune's callbacks are restored with its run (its `tuner.pkl`); tunecore's
are given to `Tuner.restore`. One callback class per framework does both
jobs, told which by environment variables (`KILL_AT_ENV`, `STARTED_ENV`)
that each child sets. The parent checks that every run did the work and
prints a Markdown table with the ratios (Ray Tune over tunecore).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import signal
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.children import (
    emit,
    peak_rss_kib,
    preload_ray_serializers,
    preload_tunecore,
    run_child,
)
from benchmarks.command_line import exit_status, trial_counts
from benchmarks.scale import ASHA, FIFO, iterations_of, iterations_problem, machine_line
from benchmarks.scratch import run_dir

RAY_TUNE = "ray_tune"
TUNECORE = "tunecore"
FRAMEWORKS = (RAY_TUNE, TUNECORE)
NAMES = {RAY_TUNE: "Ray Tune", TUNECORE: "tunecore"}
NUM_CPUS = 2
GRACE_PERIOD, REDUCTION = 1, 4
CHILD_TIMEOUT_S = 3 * 3600.0
KILL_AT_ENV = "TUNECORE_BENCH_KILL_AT"
STARTED_ENV = "TUNECORE_BENCH_RESTORE_STARTED"

FIT = "fit"
KILL = "kill"
RESULTS = "results"
FROM_PATH = "from_path"
RESTORE = "restore"
OPS = (FIT, KILL, RESULTS, FROM_PATH, RESTORE)


@dataclass(frozen=True)
class Sizes:
    """The trials of each sweep (full run, or `--quick` smoke run)."""

    fifo_trials: tuple[int, ...]
    asha_trials: tuple[int, ...]
    max_t: int

    @classmethod
    def of(cls, quick: bool) -> Sizes:
        if quick:
            return cls(fifo_trials=(20, 100), asha_trials=(20,), max_t=10)
        return cls(fifo_trials=(1_000, 10_000), asha_trials=(1_000,), max_t=100)


# -- the trainables (in __main__ in the child, so Ray ships them by value) --------------------


def ray_tune_once(config: dict[str, Any]) -> None:
    from ray import tune  # noqa: PLC0415 - looked up on the worker

    tune.report({"score": float(config["x"])})


def ray_tune_curve(config: dict[str, Any]) -> None:
    from ray import tune  # noqa: PLC0415 - looked up on the worker

    for metrics in curve(config):
        tune.report(metrics)


def tunecore_once(config: dict[str, Any]) -> None:
    import tunecore  # noqa: PLC0415 - looked up on the worker

    tunecore.report({"score": float(config["x"])})


def tunecore_curve(config: dict[str, Any]) -> None:
    import tunecore  # noqa: PLC0415 - looked up on the worker

    for metrics in curve(config):
        tunecore.report(metrics)


def curve(config: Mapping[str, Any]) -> list[dict[str, float]]:
    """ASHA's learning curve, as `benchmarks.scale` has it: a loss falling
    towards a floor that k * 37 mod 100 shuffles among the configs."""
    k = int(config["k"])
    floor = (k * 37 % 100) / 100.0
    return [{"loss": floor + 1.0 / step} for step in range(1, int(config["max_t"]) + 1)]


def trainable(framework: str, sweep: str) -> Any:
    if framework == RAY_TUNE:
        return ray_tune_curve if sweep == ASHA else ray_tune_once
    return tunecore_curve if sweep == ASHA else tunecore_once


# -- the callback: kill at half, or stop the clock at the first new result ---------------------


class _Watch:
    """What both frameworks' callbacks do, told by the environment (read
    when called: Ray Tune's callback is the one pickled with the run)."""

    def __init__(self) -> None:
        self.finished = 0

    def result(self) -> None:
        started = os.environ.get(STARTED_ENV)
        if started is None:
            return
        wall_started, cpu_started = (float(v) for v in started.split(","))
        emit(
            {
                "wall_s": time.perf_counter() - wall_started,
                "cpu_s": time.process_time() - cpu_started,
                "peak_rss_kb": peak_rss_kib(),
            }
        )
        os._exit(0)

    def complete(self) -> None:
        self.finished += 1
        kill_at = os.environ.get(KILL_AT_ENV)
        if kill_at is not None and self.finished >= int(kill_at):
            emit({"killed_after": self.finished})
            os.kill(os.getpid(), signal.SIGKILL)


class _WatchHooks:
    """The two hooks of either framework's callback, each told to a `_Watch`;
    mixed in before the framework's `Callback` (see `watch_callback`)."""

    def __init__(self) -> None:
        self.watch = _Watch()

    def on_trial_result(self, *args: Any, **info: Any) -> None:
        self.watch.result()

    def on_trial_complete(self, *args: Any, **info: Any) -> None:
        self.watch.complete()


def watch_callback(framework: str) -> Any:
    """The framework's callback around `_Watch`."""
    if framework == RAY_TUNE:
        from ray import tune  # noqa: PLC0415 - Ray Tune's side only

        class RayTuneWatch(_WatchHooks, tune.Callback):
            pass

        return RayTuneWatch()
    from tunecore.callback import Callback  # noqa: PLC0415

    class TunecoreWatch(_WatchHooks, Callback):
        pass

    return TunecoreWatch()


# -- the child ---------------------------------------------------------------------------------


def start_ray(framework: str) -> float:
    """Import the framework, start a fresh Ray and set up its serializers;
    the seconds `ray.init` took. Not timed in any run."""
    if framework == RAY_TUNE:
        import ray.tune  # noqa: PLC0415
    else:
        import tunecore.shell.executors.ray  # noqa: F401, PLC0415

        preload_tunecore()
    import ray  # noqa: PLC0415

    preload_ray_serializers()
    started = time.perf_counter()
    ray.init(num_cpus=NUM_CPUS, include_dashboard=False)
    ray.get(ray.put(None))
    return time.perf_counter() - started


def api_of(framework: str) -> Any:
    """`ray.tune` or `tunecore`: the same names, imported under one."""
    return importlib.import_module("ray.tune" if framework == RAY_TUNE else "tunecore")


def tuner(framework: str, sweep: str, trials: int, max_t: int, directory: Path) -> Any:
    """The Tuner of one run (Ray Tune with `reuse_actors=True`)."""
    asha = sweep == ASHA
    api = api_of(framework)
    schedulers: Any = importlib.import_module(f"{api.__name__}.schedulers")
    options = {"reuse_actors": True} if framework == RAY_TUNE else {}
    space: dict[str, Any]
    if asha:
        space = {"k": api.grid_search(list(range(trials))), "max_t": max_t}
    else:
        space = {"x": api.uniform(0.0, 1.0)}
    scheduler = schedulers.ASHAScheduler(
        max_t=max_t, grace_period=GRACE_PERIOD, reduction_factor=REDUCTION
    )
    return api.Tuner(
        trainable(framework, sweep),
        param_space=space,
        tune_config=api.TuneConfig(
            num_samples=1 if asha else trials,
            metric="loss" if asha else None,
            mode="min" if asha else None,
            scheduler=scheduler if asha else None,
            **options,
        ),
        run_config=api.RunConfig(
            name=directory.name,
            storage_path=str(directory.parent),
            verbose=0,
            callbacks=[watch_callback(framework)],
        ),
    )


def iterations(grid: Any) -> dict[str, int]:
    """How many trials reported how many results, and the errors."""
    metrics = [grid[i].metrics or {} for i in range(len(grid))]
    counts = Counter(iterations_of(m) for m in metrics)
    return {str(n): c for n, c in counts.items()}


@dataclass(frozen=True)
class Job:
    """One sweep at one size."""

    sweep: str
    trials: int
    max_t: int


def child(op: str, framework: str, job: Job, directory: Path) -> None:
    """Run one operation and print its measurements as one JSON line."""
    sweep, trials, max_t = job.sweep, job.trials, job.max_t
    out: dict[str, Any] = {}
    if framework == RAY_TUNE:
        try:
            import ray.tune  # noqa: F401, PLC0415 - imported before any clock
        except ImportError as error:
            emit({"unavailable": f"cannot import ray.tune: {error}"})
            return
    if op in (FIT, KILL):
        out["ray_init_s"] = start_ray(framework)
        if op == KILL:
            os.environ[KILL_AT_ENV] = str(trials // 2)
        wall, cpu = time.perf_counter(), time.process_time()
        grid = tuner(framework, sweep, trials, max_t, directory).fit()
        out.update(
            wall_s=time.perf_counter() - wall,
            cpu_s=time.process_time() - cpu,
            peak_rss_kb=peak_rss_kib(),
            trials=len(grid),
            errors=grid.num_errors,
            iterations=iterations(grid),
        )
        emit(out)
        return
    if op in (RESULTS, FROM_PATH):
        emit(read_back(op, framework, sweep, directory))
        return
    copy = Path(run_dir(f"bench-scale-vs-restore-{framework}-")) / directory.name
    shutil.copytree(directory, copy)
    start_ray(framework)
    restore(framework, sweep, copy)


def read_back(op: str, framework: str, sweep: str, directory: Path) -> dict[str, Any]:
    """Time reading a finished experiment's results back, imports done first."""
    api = api_of(framework)
    _ = api.ResultGrid, api.Tuner  # tunecore imports a name at its first use
    wall, cpu = time.perf_counter(), time.process_time()
    if op == FROM_PATH:
        grid = api.ResultGrid.from_path(directory)
    else:
        grid = api.Tuner.restore(str(directory), trainable(framework, sweep)).get_results()
    return {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "peak_rss_kb": peak_rss_kib(),
        "trials": len(grid),
    }


def restore(framework: str, sweep: str, directory: Path) -> None:
    """`Tuner.restore(...).fit()` of a killed run; the callback emits at its
    first new result and ends the process. A restore that finishes without
    one emits nothing (a failure the parent names)."""
    os.environ.pop(KILL_AT_ENV, None)
    if framework == RAY_TUNE:
        from ray import tune  # noqa: PLC0415 - imported before the clock

        os.environ[STARTED_ENV] = f"{time.perf_counter()},{time.process_time()}"
        tune.Tuner.restore(str(directory), trainable(framework, sweep)).fit()
        return
    import tunecore  # noqa: PLC0415 - imported before the clock

    callbacks: list[object] = [watch_callback(framework)]
    os.environ[STARTED_ENV] = f"{time.perf_counter()},{time.process_time()}"
    tunecore.Tuner.restore(
        str(directory), trainable(framework, sweep), callbacks=callbacks, verbose=0
    ).fit()


# -- the parent --------------------------------------------------------------------------------

Cell = dict[str, Any] | str
"""A child's measurements, or what went wrong."""


@dataclass(frozen=True)
class Size:
    """One sweep at one size, every operation for both frameworks."""

    sweep: str
    trials: int
    cells: dict[tuple[str, str], Cell]  # (op, framework) -> cell


def spawn(op: str, framework: str, job: Job, directory: Path) -> Cell:
    sweep, trials, max_t = job.sweep, job.trials, job.max_t
    print(f"{op} {framework} {sweep} {trials:,} ...", file=sys.stderr, flush=True)
    command = ["--child", op, framework, sweep, str(trials), str(directory), "--max-t", str(max_t)]
    killed = op == KILL
    child = run_child(
        "benchmarks.scale_vs_ray_tune",
        command,
        CHILD_TIMEOUT_S,
        exit_codes=(-signal.SIGKILL,) if killed else (0,),
    )
    if child.data is None:
        cell: Cell = child.problem or "no result"
    elif "unavailable" in child.data:
        cell = child.data
    else:
        cell = check(op, sweep, trials, max_t, child.data) or child.data
    print(f"  {cell if isinstance(cell, str) else _brief(cell)}", file=sys.stderr, flush=True)
    return cell


def _brief(data: Mapping[str, Any]) -> str:
    """A child's numbers in one line, for the progress on stderr (a run cut
    short keeps what it measured)."""
    return ", ".join(
        f"{key} {value:.2f}" if isinstance(value, float) else f"{key} {value}"
        for key, value in data.items()
        if key != "iterations"
    )


def check(op: str, sweep: str, trials: int, max_t: int, data: Mapping[str, Any]) -> str | None:
    """What is wrong with a child that claims to have done its work."""
    if "unavailable" in data:
        return None
    if op == KILL:
        if data.get("killed_after") != trials // 2:
            return f"expected a kill after {trials // 2} trials, got {dict(data)}"
        return None
    if op == RESTORE:
        return None if "wall_s" in data else f"no first new result: {dict(data)}"
    if data["trials"] != trials:
        return f"{data['trials']} trials, expected {trials}"
    if op != FIT:
        return None
    counts = {int(n): c for n, c in data["iterations"].items()}
    if data["errors"]:
        return f"{data['errors']} trials failed"
    return iterations_problem(sweep, trials, max_t, counts)


def measure(sweep: str, trials: int, max_t: int) -> Size:
    """Every operation at one size, the frameworks alternating."""
    job = Job(sweep, trials, max_t)
    cells: dict[tuple[str, str], Cell] = {}
    dirs: dict[tuple[str, str], Path] = {}
    for op in (FIT, KILL):
        for framework in FRAMEWORKS:
            if op == KILL and _unavailable(cells.get((FIT, framework))):
                cells[op, framework] = cells[FIT, framework]
                continue
            name = f"{framework}-{sweep}-{trials}-{op}"
            directory = Path(run_dir(f"bench-scale-vs-{name}-")) / name
            dirs[op, framework] = directory
            cells[op, framework] = spawn(op, framework, job, directory)
    for op, source in ((RESULTS, FIT), (FROM_PATH, FIT), (RESTORE, KILL)):
        for framework in FRAMEWORKS:
            if op == FROM_PATH and framework == RAY_TUNE:
                continue  # Ray Tune has no ResultGrid.from_path
            before = cells[source, framework]
            if isinstance(before, str):
                cells[op, framework] = f"no {source} run to read"
                continue
            if "unavailable" in before:
                cells[op, framework] = before
                continue
            cells[op, framework] = spawn(op, framework, job, dirs[source, framework])
    return Size(sweep, trials, cells)


def run(sizes: Sizes) -> tuple[str, bool, list[str]]:
    """Every size, both sweeps; (the Markdown report, whether every run
    passed its checks, the ratios in one line per size)."""
    measured = [measure(FIFO, n, sizes.max_t) for n in sizes.fifo_trials]
    measured += [measure(ASHA, n, sizes.max_t) for n in sizes.asha_trials]
    table, ok = report(measured, sizes)
    return table, ok, ratio_lines(measured)


def ratio_lines(measured: Sequence[Size]) -> list[str]:
    """Ray Tune's time over tunecore's, per size: the run, the results read
    back, the restore to its first new result (wall time; CPU in brackets)."""
    lines = []
    for size in measured:
        parts = []
        for op, text in ((FIT, "fit()"), (RESULTS, "results read back"), (RESTORE, "restore")):
            wall, cpu = ratio(size, op, "wall_s"), ratio(size, op, "cpu_s")
            shown = "-" if wall is None or cpu is None else f"{wall:.1f}x ({cpu:.1f}x CPU)"
            parts.append(f"{text} {shown}")
        lines.append(
            f"- {size.sweep.upper()} {size.trials:,} trials, Ray Tune / tunecore: "
            + ", ".join(parts)
        )
    return lines


ROWS = (
    (FIT, "wall_s", "`fit()`, wall s"),
    (FIT, "cpu_s", "`fit()`, driver CPU s"),
    (FIT, "peak_rss_kb", "driver peak RSS, MB"),
    (RESULTS, "wall_s", "`Tuner.restore(path, trainable).get_results()`, wall s"),
    (RESULTS, "cpu_s", "the same, CPU s"),
    (FROM_PATH, "wall_s", "`ResultGrid.from_path(path)`, wall s (tunecore only)"),
    (RESTORE, "wall_s", "restore of a run killed at half, to its first new result, wall s"),
    (RESTORE, "cpu_s", "the same, driver CPU s"),
)


def _unavailable(cell: Cell | None) -> bool:
    return isinstance(cell, dict) and "unavailable" in cell


def _value(cell: Cell | None, key: str) -> float | None:
    if not isinstance(cell, dict) or _unavailable(cell):
        return None
    value = float(cell[key])
    return value / 1024.0 if key == "peak_rss_kb" else value


def _shown(cell: Cell | None, key: str) -> str:
    if cell is None:
        return "-"
    if _unavailable(cell):
        return "unavailable"
    value = _value(cell, key)
    return (
        "FAILED" if value is None else f"{value:,.0f}" if key == "peak_rss_kb" else f"{value:.2f}"
    )


def ratio(size: Size, op: str, key: str) -> float | None:
    """Ray Tune's value over tunecore's (how many times more Ray Tune takes)."""
    theirs = _value(size.cells.get((op, RAY_TUNE)), key)
    ours = _value(size.cells.get((op, TUNECORE)), key)
    if theirs is None or ours is None or ours <= 0.0:
        return None
    return theirs / ours


def report(measured: Sequence[Size], sizes: Sizes) -> tuple[str, bool]:
    lines = [
        "### tunecore against Ray Tune (`reuse_actors=True`) at scale",
        "",
        machine_line(),
        "",
        "| sweep | trials | measure | Ray Tune | tunecore | Ray Tune / tunecore |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for size in measured:
        label = "FIFO x 1" if size.sweep == FIFO else f"ASHA x <= {sizes.max_t}"
        for op, key, text in ROWS:
            theirs = size.cells.get((op, RAY_TUNE))
            ours = size.cells.get((op, TUNECORE))
            value = ratio(size, op, key)
            lines.append(
                f"| {label} | {size.trials:,} | {text} | {_shown(theirs, key)} "
                f"| {_shown(ours, key)} | {'-' if value is None else f'{value:.1f}x'} |"
            )
    lines += ["", *ratio_lines(measured)]
    lines += [
        "",
        "Each cell is one fresh interpreter; the frameworks alternate. Imports and",
        f"ray.init(num_cpus={NUM_CPUS}) are not timed. The reads run without Ray; the restore",
        "starts a fresh Ray first (not timed) and is timed from the call of Tuner.restore",
        "on a copy of a run killed (SIGKILL) once half its trials had finished.",
    ]
    problems = [
        f"- {NAMES[framework]} {op} {size.sweep} {size.trials:,}: {cell}"
        for size in measured
        for (op, framework), cell in size.cells.items()
        if isinstance(cell, str)
    ]
    missing = sorted(
        {
            str(c["unavailable"])
            for size in measured
            for c in size.cells.values()
            if isinstance(c, dict) and "unavailable" in c
        }
    )
    lines += [f"Ray Tune unavailable: {why}" for why in missing]
    if problems:
        lines += ["", "Failures:", "", *problems]
    return "\n".join(lines), not problems


def main(argv: Sequence[str]) -> int:
    return exit_status(measure_from(argv))


def measure_from(argv: Sequence[str]) -> tuple[str, bool, list[str]] | None:
    """Do what the command line asks: a child's one operation (None), or
    the whole comparison (what `run` returns)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks scale_vs_ray_tune", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument(
        "--fifo", type=trial_counts, default=None, help="FIFO trials, e.g. 1000,10000"
    )
    parser.add_argument("--asha", type=trial_counts, default=None, help="ASHA trials, e.g. 1000")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--max-t", type=int, default=100, help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    if args.child is not None:
        op, framework, sweep, trials, directory = args.child
        child(op, framework, Job(sweep, int(trials), args.max_t), Path(directory))
        return None
    default = Sizes.of(args.quick)
    sizes = Sizes(
        fifo_trials=args.fifo if args.fifo is not None else default.fifo_trials,
        asha_trials=args.asha if args.asha is not None else default.asha_trials,
        max_t=default.max_t,
    )
    return run(sizes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
