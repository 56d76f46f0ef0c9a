"""tunecore at scale on a local Ray (issues 13 and 41): does the driver's
cost per trial and per result stay flat from 1,000 to 100,000 trials, how
much driver memory does a finished trial keep, and how big is the event log?

Two sweeps, each at several sizes:

- FIFO: N trials of a function that reports once (N = 1,000, 10,000,
  100,000; `--fifo-sizes`): driver seconds per trial, and the ratio of the
  largest size's to the smallest's (the issues' target: flat within 1.2x);
- ASHA: N trials x up to 100 reports under `tunecore.schedulers.ASHAScheduler`
  (max_t=100, grace_period=1, reduction_factor=4), N = 1,000 and 10,000
  (`--asha-sizes`): driver seconds per result, and the same ratio.

Each run is a fresh interpreter (`python -m benchmarks.scale --child ...`)
that starts a fresh local Ray with `ray.init(num_cpus=2)` (not timed) and
runs one experiment after warming Ray up (`warm_up_ray`, 5,000 tiny
tasks, not timed); the clock runs from just before the `Tuner` is built to
just after `fit()` returns, as in `benchmarks.vs_ray_tune`. The child prints
one line `BENCH_RESULT {json}`; the parent checks the work was done (every
trial ran without error, one result each under FIFO, 1..100 under ASHA with
some trials stopped early) and prints a Markdown table.

Memory: the driver's *current* RSS (`/proc/self/statm`, the driver process
alone: Ray's processes and the workers are others) just before the `Tuner`
is built and just after `fit()` returns, with the `ResultGrid` alive. The
growth per finished trial is the difference of that growth between the
largest and the smallest size, divided by the extra trials, so the fixed
costs (imports, Ray's client, thread stacks) cancel. The event log
(`<experiment dir>/events.log`) is written through a file descriptor and
not kept by the driver, so that growth is all beyond the log; the log's
size is reported next to it, per trial and per result.
`--tracemalloc` also traces the Python heap in each child (slower, so its
times and RSS are not comparable) and ranks the allocation sites alive when
`fit()` returns by their growth per trial, largest size against smallest.

Run with `python -m benchmarks.scale [--quick] [--tracemalloc]` or
`python -m benchmarks scale [...]` (Linux: `/proc/self/statm`). Then, unless
`--skip-ray-tune`, tunecore against Ray Tune at 1,000 and 10,000 trials
(`benchmarks.scale_vs_ray_tune`: the run, reading it back, restoring it
after a kill); unless `--skip-reads`, the reads of finished experiments of
1,000 to 100,000 trials (`benchmarks.scale_reads`, which takes the flags
this module does not know; `--reads-only` runs them alone); and last, every
target of issue 41 these measured, each marked met or not.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchmarks.children import (
    emit,
    peak_rss_kib,
    preload_ray_serializers,
    preload_tunecore,
    run_child,
)
from benchmarks.scratch import run_dir
from tunecore.shell.eventlog import LOG_FILE

NUM_CPUS = 2
CHILD_TIMEOUT_S = 3600.0
FIFO = "fifo"
ASHA = "asha"
FLAT_TARGET = 1.2  # largest size's cost per unit over the smallest's
RSS_TARGET_KB = 2.0  # driver RSS per finished trial, beyond the log (issue 41)
TOP_SITES = 40  # sites each traced child sends
SHOWN_SITES = 5  # sites the report shows per sweep, by growth per trial


@dataclass(frozen=True)
class Sizes:
    """The sizes of each sweep (full run, or `--quick` smoke run)."""

    fifo_trials: tuple[int, ...]
    asha_trials: tuple[int, ...]
    max_t: int
    warm_up: int  # tiny Ray tasks before each run (see warm_up_ray)

    @classmethod
    def of(cls, quick: bool) -> Sizes:
        if quick:
            return cls(fifo_trials=(20, 100), asha_trials=(10, 40), max_t=20, warm_up=500)
        sizes = (1_000, 10_000, 100_000)
        return cls(fifo_trials=sizes, asha_trials=(1_000, 10_000), max_t=100, warm_up=5_000)


# -- the trainables (in __main__ in the child, so Ray ships them by value) --------------------


def report_once(config: dict[str, Any]) -> None:
    """FIFO: one result, then return."""
    import tunecore  # noqa: PLC0415 - looked up on the worker

    tunecore.report({"score": float(config["x"])})


def asha_objective(config: dict[str, Any]) -> None:
    """ASHA: a loss that falls with training, lower for some configs (k * 37
    mod 100 shuffles them), the same curves every run."""
    import tunecore  # noqa: PLC0415 - looked up on the worker

    k = int(config["k"])
    floor = (k * 37 % 100) / 100.0
    for step in range(1, int(config["max_t"]) + 1):
        tunecore.report({"loss": floor + 1.0 / step})


# -- the child: one experiment in a fresh interpreter ------------------------------------------


def current_rss_kb() -> float:
    """The driver's resident set now, in KiB (the second field of statm is
    resident pages)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1024.0


def iterations_of(metrics: Mapping[str, Any]) -> int:
    value = metrics.get("training_iteration")
    return int(value) if isinstance(value, int | float) else 0


def run_experiment(
    sweep: str,
    trials: int,
    max_t: int,
    storage: str,
    executor: Literal["ray", "in_process"] = "ray",
) -> tuple[float, Any]:
    """(seconds from Tuner to the end of fit(), the ResultGrid); `executor`
    as `RunConfig` takes it."""
    import tunecore  # noqa: PLC0415 - imported before the clock, like Ray Tune
    from tunecore.schedulers import ASHAScheduler  # noqa: PLC0415

    preload_tunecore()

    asha = sweep == ASHA
    space: dict[str, Any]
    if asha:
        space = {"k": tunecore.grid_search(list(range(trials))), "max_t": max_t}
    else:
        space = {"x": tunecore.uniform(0.0, 1.0)}
    start = time.perf_counter()
    tuner = tunecore.Tuner(
        asha_objective if asha else report_once,
        param_space=space,
        tune_config=tunecore.TuneConfig(
            num_samples=1 if asha else trials,
            metric="loss" if asha else None,
            mode="min" if asha else None,
            scheduler=ASHAScheduler(max_t=max_t, grace_period=1, reduction_factor=4)
            if asha
            else None,
        ),
        run_config=tunecore.RunConfig(storage_path=storage, verbose=0, executor=executor),
    )
    grid = tuner.fit()
    return time.perf_counter() - start, grid


def top_sites(snapshot: Any, limit: int) -> list[dict[str, Any]]:
    """The allocation sites holding the most Python memory, by line, with
    the line's source."""
    import linecache  # noqa: PLC0415 - only the traced child needs it

    sites = []
    for stat in snapshot.statistics("lineno")[:limit]:
        frame = stat.traceback[0]
        code = linecache.getline(frame.filename, frame.lineno).strip()
        site = f"{frame.filename}:{frame.lineno}"
        sites.append({"site": site, "code": code, "kb": stat.size / 1024.0})
    return sites


def warm_up_ray(calls: int) -> None:
    """Run `calls` tiny tasks, one in flight per CPU. A fresh Ray driver's
    RSS grows by some 14 MB over its first few thousand calls and then hardly
    at all (0.4 KB per 4 actor calls here): Ray's buffers filling, which
    would otherwise count against the smaller run of each sweep and inflate
    the growth per trial. Tasks, not actors, so the idle worker processes
    Ray started stay in its pool for the experiment's actors."""
    import ray  # noqa: PLC0415 - only the child needs Ray

    echo: Any = ray.remote(num_cpus=1)(_echo)
    pending = [echo.remote(n) for n in range(NUM_CPUS)]
    for n in range(calls):
        ready, pending = ray.wait(pending, num_returns=1)
        ray.get(ready)
        pending.append(echo.remote(n))
    ray.get(pending)


def _echo(value: int) -> int:
    return value


def child(
    sweep: str, trials: int, max_t: int, warm_up: int, trace: bool, *, in_process: bool = False
) -> None:
    """Run one experiment and print its measurements as one JSON line; with
    `in_process`, its trials run in the driver's threads, without Ray
    (`RunConfig(executor="in_process")`: what `in_process_memory` checks)."""
    out: dict[str, Any] = {"sweep": sweep, "trials": trials, "max_t": max_t}
    if not in_process:
        import ray  # noqa: PLC0415 - only the child needs Ray

        import tunecore.shell.executors.ray  # noqa: F401, PLC0415 - imported before the clock

        preload_ray_serializers()
        started = time.perf_counter()
        ray.init(num_cpus=NUM_CPUS, include_dashboard=False)
        out["ray_init_s"] = time.perf_counter() - started
        warm_up_ray(warm_up)
    if trace:
        import tracemalloc  # noqa: PLC0415

        tracemalloc.start(1)
    out["rss_before_kb"] = current_rss_kb()
    storage = run_dir(f"bench-scale-{sweep}-{trials}-")
    seconds, grid = run_experiment(
        sweep, trials, max_t, storage, "in_process" if in_process else "ray"
    )
    out["rss_after_kb"] = current_rss_kb()
    out["peak_rss_kb"] = peak_rss_kib()
    if trace:
        out["top_sites"] = top_sites(tracemalloc.take_snapshot(), TOP_SITES)
        out["traced_kb"] = tracemalloc.get_traced_memory()[0] / 1024.0
        tracemalloc.stop()
    logs = list(Path(storage).rglob(LOG_FILE))
    out["log_bytes"] = sum(p.stat().st_size for p in logs)
    out["logs"] = len(logs)
    iterations = [iterations_of(r.metrics) for r in grid]
    out.update(
        seconds=seconds,
        finished=len(iterations),
        results=sum(iterations),
        iterations=dict(Counter(iterations)),
        errors=grid.num_errors,
    )
    del grid
    if not in_process:
        import ray  # noqa: PLC0415 - only the child needs Ray

        ray.shutdown()
    emit(out)


# -- the parent: run the children, check them, print the table ---------------------------------


@dataclass(frozen=True)
class Run:
    """One child's outcome: its measurements, or what went wrong."""

    sweep: str
    trials: int
    data: dict[str, Any]
    problem: str | None = None

    @property
    def seconds(self) -> float:
        return float(self.data["seconds"])

    @property
    def results(self) -> int:
        return int(self.data["results"])

    @property
    def growth_kb(self) -> float:
        return float(self.data["rss_after_kb"]) - float(self.data["rss_before_kb"])

    @property
    def log_bytes(self) -> int:
        return int(self.data["log_bytes"])

    def per(self, unit: str) -> float:
        """Driver seconds per trial or per result."""
        return self.seconds / (self.trials if unit == "trial" else self.results)


def spawn(sweep: str, trials: int, sizes: Sizes, trace: bool, in_process: bool = False) -> Run:
    """Run one child and parse its JSON line."""
    command = ["--child", sweep, str(trials)]
    command += ["--max-t", str(sizes.max_t), "--warm-up", str(sizes.warm_up)]
    command += ["--tracemalloc"] if trace else []
    command += ["--in-process"] if in_process else []
    child = run_child("benchmarks.scale", command, CHILD_TIMEOUT_S)
    if child.data is None:
        return Run(sweep, trials, {}, problem=child.problem)
    return Run(sweep, trials, child.data, problem=check(sweep, trials, sizes.max_t, child.data))


def check(sweep: str, trials: int, max_t: int, data: Mapping[str, Any]) -> str | None:
    """What is wrong with a run that claims to have finished, if anything."""
    counts = {int(n): int(c) for n, c in data["iterations"].items()}
    if data["errors"]:
        return f"{data['errors']} trials failed"
    if data["finished"] != trials:
        return f"{data['finished']} trials, expected {trials}"
    if data["logs"] != 1 or data["log_bytes"] <= 0:
        return f"expected one non-empty {LOG_FILE}, found {data['logs']}"
    return iterations_problem(sweep, trials, max_t, counts)


def iterations_problem(
    sweep: str, trials: int, max_t: int, counts: Mapping[int, int]
) -> str | None:
    """What is wrong with a sweep's results per trial, if anything
    (`counts`: how many trials reported each number of results). FIFO
    reports once per trial; ASHA from 1 to `max_t` times, and stops at
    least one trial early. Shared with `benchmarks.scale_vs_ray_tune`."""
    if sweep == FIFO and counts != {1: trials}:
        return f"expected one result per trial, got {sorted(counts)} results"
    if sweep == ASHA:
        if min(counts) < 1 or max(counts) != max_t:
            return f"results per trial out of range 1..{max_t}: {sorted(counts)}"
        if counts.get(max_t) == trials:
            return "ASHA stopped no trial early"
    return None


def machine_line() -> str:
    return (
        f"{os.cpu_count()} cores ({NUM_CPUS} given to Ray), Python "
        f"{platform.python_version()}, Ray {importlib.metadata.version('ray')}, tunecore "
        f"{importlib.metadata.version('tunecore')}, {platform.machine()} {platform.node()}"
    )


def run(sizes: Sizes, quick: bool = False, trace: bool = False) -> tuple[str, bool, list[str]]:
    """Run both sweeps; (the Markdown report, whether every run passed its
    checks, the target lines)."""
    plan = [(FIFO, n) for n in sizes.fifo_trials] + [(ASHA, n) for n in sizes.asha_trials]
    runs: list[Run] = []
    for sweep, trials in plan:
        print(f"{sweep} {trials:,} trials ...", file=sys.stderr, flush=True)
        runs.append(spawn(sweep, trials, sizes, trace))
    table, ok = report(runs, sizes, quick, trace)
    return table, ok, summary(runs, judge_memory=not (quick or trace))


def report(runs: Sequence[Run], sizes: Sizes, quick: bool, trace: bool) -> tuple[str, bool]:
    flags = " ".join(f for f, on in (("--quick", quick), ("--tracemalloc", trace)) if on)
    lines = [
        "### tunecore at scale on Ray" + (f" ({flags})" if flags else ""),
        "",
        machine_line(),
        "",
        "| run | trials | results | driver s | ms / trial | ms / result | marginal ms "
        "| RSS growth MB | peak RSS MB | log KB | log B / result |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    previous: dict[str, Run] = {}
    for r in runs:
        label = f"{r.sweep.upper()} {r.trials:,}" + (
            f" x <= {sizes.max_t}" if r.sweep == ASHA else " x 1"
        )
        if r.problem is not None:
            lines.append(f"| {label} | FAILED |" + " |" * 9)
            continue
        unit = "trial" if r.sweep == FIFO else "result"
        marginal = "-"
        if (before := previous.get(r.sweep)) is not None:
            extra = r.results - before.results if unit == "result" else r.trials - before.trials
            marginal = f"{1000 * (r.seconds - before.seconds) / extra:.3f} / {unit}"
        previous[r.sweep] = r
        lines.append(
            f"| {label} | {r.data['finished']:,} | {r.results:,} | {r.seconds:.2f} "
            f"| {1000 * r.per('trial'):.2f} | {1000 * r.per('result'):.3f} | {marginal} "
            f"| {r.growth_kb / 1024:.1f} | {r.data['peak_rss_kb'] / 1024:.0f} "
            f"| {r.log_bytes / 1024:,.0f} | {r.log_bytes / r.results:,.0f} |"
        )
    lines += ["", *summary(runs, judge_memory=not (quick or trace))]
    if trace:
        lines += sites(runs)
    lines += [
        "",
        "Time runs from building the Tuner to the return of fit(); imports and",
        f"ray.init(num_cpus={NUM_CPUS}) are excluded. Each run is a fresh interpreter and a",
        "fresh Ray. RSS growth is the driver's current RSS (/proc/self/statm) after fit()",
        "minus before the Tuner, the ResultGrid alive; the event log is not held in memory.",
        "Marginal: the extra driver seconds over the previous size, per extra trial (FIFO)",
        "or per extra result (ASHA): the cost without the fixed start-up of fit().",
    ]
    problems = [f"- {r.sweep} {r.trials:,}: {r.problem}" for r in runs if r.problem]
    if problems:
        lines += ["", "Failures:", "", *problems]
    return "\n".join(lines), not problems


def summary(runs: Sequence[Run], judge_memory: bool) -> list[str]:
    """The ratios and per-trial memory, largest size against smallest; the
    memory against its target only when `judge_memory` (not for --quick's
    sizes, too small for it, nor under tracemalloc, which adds its own)."""
    lines: list[str] = []
    for sweep, unit in ((FIFO, "trial"), (ASHA, "result")):
        done = sorted((r for r in runs if r.sweep == sweep and r.problem is None), key=_trials)
        if len(done) < 2:
            continue
        small, large = done[0], done[-1]
        ratio = large.per(unit) / small.per(unit)
        verdict = "met" if ratio <= FLAT_TARGET else "NOT met"
        extra = large.trials - small.trials
        rss = (large.growth_kb - small.growth_kb) / extra
        log_kb = (large.log_bytes - small.log_bytes) / 1024 / extra
        target = "met" if rss <= RSS_TARGET_KB else "NOT met"
        memory = f", target <= {RSS_TARGET_KB:g} KB {target}" if judge_memory else ""
        lines += [
            f"- {sweep.upper()}: driver time per {unit} at {large.trials:,} trials over "
            f"{small.trials:,}: {ratio:.2f}x (target <= {FLAT_TARGET:g}x {verdict})",
            f"- {sweep.upper()}: driver RSS per finished trial, {small.trials:,} to "
            f"{large.trials:,} trials: {rss:.1f} KB{memory}; event log "
            f"{log_kb:.2f} KB per trial (on disk, not in the driver)",
        ]
    return lines


def sites(runs: Sequence[Run]) -> list[str]:
    """Where the traced Python heap grows per finished trial, largest size
    against smallest: the sites with the most growth (a site outside the
    smaller run's top `TOP_SITES` counts as 0 there, so its growth is an
    upper bound)."""
    lines: list[str] = []
    for sweep in (FIFO, ASHA):
        done = sorted(
            (r for r in runs if r.sweep == sweep and r.problem is None and "top_sites" in r.data),
            key=_trials,
        )
        if len(done) < 2:
            continue
        small, large = done[0], done[-1]
        extra = large.trials - small.trials
        heap = (large.data["traced_kb"] - small.data["traced_kb"]) * 1024 / extra
        before = {s["site"]: s["kb"] for s in small.data["top_sites"]}
        growth = sorted(  # largest first; ties keep the larger run's order
            (
                ((s["kb"] - before.get(s["site"], 0.0)) * 1024 / extra, s)
                for s in large.data["top_sites"]
            ),
            key=_first,
            reverse=True,
        )
        lines += [
            "",
            f"{sweep.upper()}, {small.trials:,} to {large.trials:,} trials: the traced Python "
            f"heap alive after fit() grows {heap:,.0f} B per trial; the top sites:",
            "",
            "| site | B / trial | code |",
            "|---|---:|---|",
        ]
        lines += [
            f"| {_short(s['site'])} | {per:,.0f} | `{s['code']}` |"
            for per, s in growth[:SHOWN_SITES]
        ]
    return lines


def _short(site: str) -> str:
    """A source path from its package on (tunecore/..., msgspec/...,
    pathlib.py for the standard library)."""
    for marker in (
        "/src/",
        "/site-packages/",
        f"/python{sys.version_info[0]}.{sys.version_info[1]}/",
    ):
        site = site.rsplit(marker, maxsplit=1)[-1]
    return site


def _first(pair: tuple[float, Any]) -> float:
    return pair[0]


def _trials(r: Run) -> int:
    return r.trials


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument(
        "--fifo-sizes", type=_sizes, default=None, help="FIFO trials on Ray, e.g. 1000,100000"
    )
    parser.add_argument(
        "--asha-sizes", type=_sizes, default=None, help="ASHA trials on Ray, e.g. 1000,10000"
    )
    parser.add_argument(
        "--tracemalloc", action="store_true", help="trace the Python heap (slow runs)"
    )
    parser.add_argument(
        "--skip-ray-tune",
        action="store_true",
        help="leave out the runs against Ray Tune (benchmarks.scale_vs_ray_tune)",
    )
    parser.add_argument(
        "--vs-sizes",
        type=_sizes,
        default=None,
        help="FIFO trials against Ray Tune (default 1000,10000)",
    )
    parser.add_argument(
        "--vs-asha-sizes",
        type=_sizes,
        default=None,
        help="ASHA trials against Ray Tune (default 1000)",
    )
    parser.add_argument(
        "--skip-reads", action="store_true", help="leave out the reads (benchmarks.scale_reads)"
    )
    parser.add_argument(
        "--reads-only", action="store_true", help="only the reads (benchmarks.scale_reads)"
    )
    parser.add_argument("--child", nargs=2, metavar=("SWEEP", "TRIALS"), help=argparse.SUPPRESS)
    parser.add_argument("--max-t", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--warm-up", type=int, default=5_000, help=argparse.SUPPRESS)
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    args, reads_argv = parser.parse_known_args(argv)
    if reads_argv and args.skip_reads:
        parser.error(f"unrecognized arguments: {' '.join(reads_argv)}")
    if args.child is not None:
        sweep, trials = args.child
        in_process: bool = args.in_process
        child(sweep, int(trials), args.max_t, args.warm_up, args.tracemalloc, in_process=in_process)
        return 0
    from benchmarks import scale_reads, scale_vs_ray_tune  # noqa: PLC0415 - they import this module

    parts: list[tuple[bool, list[str]]] = []
    if not args.reads_only:
        default = Sizes.of(args.quick)
        sizes = Sizes(
            fifo_trials=args.fifo_sizes or default.fifo_trials,
            asha_trials=args.asha_sizes or default.asha_trials,
            max_t=default.max_t,
            warm_up=default.warm_up,
        )
        on_ray = run(sizes, args.quick, args.tracemalloc)
        parts.append(_shown("tunecore on Ray (`benchmarks.scale`):", on_ray))
    if not (args.reads_only or args.skip_ray_tune):
        vs_argv = ["--quick"] if args.quick else []
        vs_argv += ["--fifo", _listed(args.vs_sizes)] if args.vs_sizes else []
        vs_argv += ["--asha", _listed(args.vs_asha_sizes)] if args.vs_asha_sizes else []
        print()
        compared = scale_vs_ray_tune.measure_from(vs_argv)
        heading = "Against Ray Tune, `reuse_actors=True` (ratios; no target):"
        parts.append(_shown(heading, compared))
    if not args.skip_reads:
        print()
        reads_argv += ["--quick"] if args.quick else []
        measured = scale_reads.measure_from(reads_argv)
        heading = "Reads, restore, memory, searchers (`benchmarks.scale_reads`):"
        parts.append(_shown(heading, measured))
    targets = [line for _, lines in parts for line in lines]
    if targets:
        quick = " (--quick: sizes too small to judge)" if args.quick else ""
        print(f"\n### Issue 41: the targets{quick}\n")
        print("\n".join(targets).rstrip())
    return 0 if all(ok for ok, _ in parts) else 1


def _shown(heading: str, measured: tuple[str, bool, list[str]] | None) -> tuple[bool, list[str]]:
    """Print a part's table; (whether the part passed, its target lines
    under `heading`). A part that measured nothing (None) passes, and adds
    no lines."""
    if measured is None:
        return True, []
    table, ok, lines = measured
    print(table, flush=True)
    return ok, [heading, "", *lines, ""]


def _sizes(text: str) -> tuple[int, ...]:
    values = tuple(int(n) for n in text.split(",") if n)
    if len(values) < 1 or any(n < 2 for n in values):
        raise argparse.ArgumentTypeError(f"{text!r}: sizes must be at least 2")
    return values


def _listed(sizes: Sequence[int]) -> str:
    return ",".join(str(n) for n in sizes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
