"""Does model-based search find better configs than random search within the
same trial budget? Median and IQR of the best value found, over seeds, under
`tunecore.simulate` (issue 12).

    python -m benchmarks search_quality [--seeds 10] [--concurrency 1,8]
        [--objectives branin,hartmann6,curve] [--methods NAME,...]

Objectives (`benchmarks.objectives`, all with known optima):

- Branin, 50 trials, and Hartmann-6, 100 trials, one iteration each: random
  search (tunecore's `BasicVariantGenerator`) against TPE (`OptunaSearch`),
  `BayesOptSearch` and `HyperOptSearch`, each with its defaults,
  `NevergradSearch` with OnePlusOne (Ray's example's optimizer),
  `ZOOptSearch` with a budget of the trial count (Ray's class needs one),
  and on torch `HEBOSearch` and `AxSearch`, each with its defaults;
- the learning curve with slow starters, 81 iterations, 143 trials (one full
  band of HyperBand with `max_t=81, reduction_factor=3`): `HyperBandScheduler`
  with random search against BOHB (`HyperBandForBOHB` with `TuneBOHB`).

Each (objective, method, seed, concurrency) is one simulated experiment with
`TuneConfig(seed=seed, max_concurrent_trials=concurrency)` on a simulated
cluster of 8 CPUs; a searcher gets the experiment's seed (`use_seed`), so
the same seeds give the same table, byte for byte. "Best value found" is the
best result any trial reported (over all its iterations). A method whose
package or module is missing is left out, with a line saying so. Timings
(which do differ between runs) go to stderr, not into the table.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import tunecore
from benchmarks.objectives import BRANIN, HARTMANN6, LEARNING_CURVE, Objective
from tunecore import RunConfig, TuneConfig
from tunecore.model import Resources
from tunecore.schedulers import HyperBandScheduler
from tunecore.search import BasicVariantGenerator

CLUSTER_CPUS = 8
MAX_T = 81
REDUCTION_FACTOR = 3
BAYESOPT_SEEDS = 0
"""BayesOptSearch's seeds at most (0: all): a GP fit and an acquisition
search per suggestion make it the slow one."""
TORCH_SEEDS = 0
"""HEBOSearch's and AxSearch's seeds at most (0: all): a GP fit on torch
and an acquisition search per suggestion (per batch, for HEBO) make them
the slowest by far."""
CURVE_TRIALS = 143
"""One band of HyperBand at max_t=81, eta=3: brackets of 81, 34, 15, 8, 5."""


@dataclass(frozen=True)
class Task:
    """An objective and its trial budget."""

    key: str
    objective: Objective
    trials: int


TASKS = (
    Task("branin", BRANIN, 50),
    Task("hartmann6", HARTMANN6, 100),
    Task("curve", LEARNING_CURVE, CURVE_TRIALS),
)


class Unavailable(Exception):
    """The method's module, class or package is not installed here."""


def _class(module: str, name: str) -> Callable[..., object]:
    """`module.name`, or Unavailable saying what is missing."""
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise Unavailable(f"{module}.{name} is not available ({error})") from error
    if not callable(found):
        raise Unavailable(f"{module}.{name} is not a class")
    return found  # type: ignore[no-any-return]


def _build(module: str, name: str, **arguments: object) -> object:
    """A fresh `module.name(**arguments)`; a missing package is Unavailable."""
    cls = _class(module, name)
    try:
        return cls(**arguments)
    except ImportError as error:
        raise Unavailable(str(error)) from error


@dataclass(frozen=True)
class Method:
    """How one row of the table searches: a fresh searcher and scheduler per
    run (searchers keep state); the searcher is given the trial budget."""

    key: str
    label: str
    searcher: Callable[[int], object]
    scheduler: Callable[[], object | None]


def _no_scheduler() -> None:
    return None


def _hyperband() -> object:
    return HyperBandScheduler(max_t=MAX_T, reduction_factor=REDUCTION_FACTOR)


def _bohb_scheduler() -> object:
    cls = _class("tunecore.schedulers", "HyperBandForBOHB")
    return cls(max_t=MAX_T, reduction_factor=REDUCTION_FACTOR)


RANDOM = Method(
    "random", "random (BasicVariantGenerator)", lambda _: BasicVariantGenerator(), _no_scheduler
)
TPE = Method(
    "tpe",
    "TPE (OptunaSearch)",
    lambda _: _build("tunecore.search.optuna", "OptunaSearch"),
    _no_scheduler,
)
BAYESOPT = Method(
    "bayesopt",
    "BayesOptSearch",
    lambda _: _build("tunecore.search.bayesopt", "BayesOptSearch"),
    _no_scheduler,
)
HYPEROPT = Method(
    "hyperopt",
    "HyperOptSearch (TPE)",
    lambda _: _build("tunecore.search.hyperopt", "HyperOptSearch"),
    _no_scheduler,
)
NEVERGRAD = Method(
    "nevergrad",
    "NevergradSearch (OnePlusOne)",
    lambda _: _build("tunecore.search.nevergrad", "NevergradSearch", optimizer="OnePlusOne"),
    _no_scheduler,
)
ZOOPT = Method(
    "zoopt",
    "ZOOptSearch (ASRacos)",
    lambda trials: _build("tunecore.search.zoopt", "ZOOptSearch", budget=trials),
    _no_scheduler,
)
HEBO = Method(
    "hebo",
    "HEBOSearch",
    lambda _: _build("tunecore.search.hebo", "HEBOSearch"),
    _no_scheduler,
)
AX = Method(
    "ax",
    "AxSearch",
    lambda _: _build("tunecore.search.ax", "AxSearch"),
    _no_scheduler,
)
HYPERBAND = Method(
    "hyperband",
    "HyperBand + random (HyperBandScheduler)",
    lambda _: BasicVariantGenerator(),
    _hyperband,
)
BOHB = Method(
    "bohb",
    "BOHB (HyperBandForBOHB + TuneBOHB)",
    lambda _: _build("tunecore.search.bohb", "TuneBOHB"),
    _bohb_scheduler,
)

METHODS: dict[str, tuple[Method, ...]] = {
    "branin": (RANDOM, TPE, BAYESOPT, HYPEROPT, NEVERGRAD, ZOOPT, HEBO, AX),
    "hartmann6": (RANDOM, TPE, BAYESOPT, HYPEROPT, NEVERGRAD, ZOOPT, HEBO, AX),
    "curve": (HYPERBAND, BOHB),
}


@dataclass(frozen=True)
class Outcome:
    """What one simulated experiment found."""

    best: float
    trials: int
    iterations: int


def run_once(task: Task, method: Method, seed: int, concurrency: int) -> Outcome:
    """One experiment in virtual time; raises Unavailable for a missing method."""
    objective = task.objective
    searcher, scheduler = method.searcher(task.trials), method.scheduler()
    with one_blas_thread(), tempfile.TemporaryDirectory(prefix="bench-search-quality-") as root:
        results = tunecore.simulate(
            objective.trainable,
            param_space=objective.param_space,
            tune_config=TuneConfig(
                metric=objective.metric,
                mode=objective.mode,
                num_samples=task.trials,
                seed=seed,
                max_concurrent_trials=concurrency,
                search_alg=searcher,
                scheduler=scheduler,
            ),
            run_config=RunConfig(name="run", storage_path=root, verbose=0),
            cluster=Resources(cpu=CLUSTER_CPUS),
            max_iterations=objective.iterations,
        )
    if results.num_errors:
        raise RuntimeError(f"{method.label} on {objective.name}: {results.errors[0]}")
    if not 0 < len(results) <= task.trials:
        raise RuntimeError(f"{method.label} on {objective.name} ran {len(results)} trials")
    bests: list[float] = []
    iterations = 0
    for result in results:
        stats = result.metric_analysis[objective.metric]
        bests.append(stats.min if objective.mode == "min" else stats.max)
        iteration = result.metrics["training_iteration"]
        assert isinstance(iteration, int)
        iterations += iteration
    best = min(bests) if objective.mode == "min" else max(bests)
    return Outcome(best, len(results), iterations)


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """numpy's BLAS on one thread, for the BLAS libraries loaded so far
    (the searcher is built first, which loads its package's). A GP fit on
    a shared 2-core machine is five times slower with a thread per core
    (bayes_opt's suggestion: 0.35 s of CPU instead of 0.07 s), and one
    thread sums in one order everywhere."""
    try:
        threadpoolctl = importlib.import_module("threadpoolctl")
    except ImportError:
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[object] = threadpoolctl.threadpool_limits(limits=1)
    return limits


@dataclass(frozen=True)
class Row:
    method: Method
    concurrency: int
    outcomes: tuple[Outcome, ...]


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """Q1, median, Q3 (linear interpolation between order statistics)."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def table(task: Task, rows: Sequence[Row]) -> str:
    objective = task.objective
    better = "lower" if objective.mode == "min" else "higher"
    curve = objective.iterations > 1
    lines = [
        f"#### {objective.name}: best value found in {task.trials} trials "
        f"({better} is better; optimum {objective.optimum:.6g})",
        "",
        "| method | concurrent trials | seeds | median best | IQR [Q1, Q3] | median trials run |"
        + (" median iterations run |" if curve else ""),
        "|---|---:|---:|---:|---:|---:|" + ("---:|" if curve else ""),
    ]
    for row in rows:
        q1, median, q3 = quartiles([o.best for o in row.outcomes])
        trials = f"{statistics.median(o.trials for o in row.outcomes):,.0f}"
        fewest = min(o.trials for o in row.outcomes)
        if fewest < task.trials:
            trials += f" (min {fewest:,})"
        line = (
            f"| {row.method.label} | {row.concurrency} | {len(row.outcomes)} | {median:.4f} "
            f"| [{q1:.4f}, {q3:.4f}] | {trials} |"
        )
        if curve:
            line += f" {statistics.median(o.iterations for o in row.outcomes):,.0f} |"
        lines.append(line)
    if any(o.trials < task.trials for row in rows for o in row.outcomes):
        lines += [
            "",
            "Fewer trials run than the budget: the searcher returned `Searcher.FINISHED` "
            "(BayesOptSearch does, as in Ray, once it has suggested one config more than "
            "`patience=5` times).",
        ]
    if curve:
        lines += [
            "",
            f"Iterations run: the compute spent ({task.trials * objective.iterations:,} "
            "if no trial were stopped early).",
        ]
    return "\n".join(lines)


PACKAGES = (
    "optuna",
    "bayesian-optimization",
    "hyperopt",
    "ConfigSpace",
    "hpbandster",
    "nevergrad",
    "zoopt",
    "HEBO",
    "pymoo",
    "ax-platform",
    "botorch",
    "torch",
)


def versions() -> str:
    """Python's version and the optimizers' installed here: suggestions
    depend on them, so the table does too."""
    found = [f"Python {platform.python_version()}"]
    for package in PACKAGES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found.append(f"{package} {importlib.metadata.version(package)}")
    return ", ".join(found)


def _split(text: str) -> list[str]:
    return [part for part in text.split(",") if part]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks search_quality")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    parser.add_argument("--concurrency", default="1,8", help="max_concurrent_trials values")
    parser.add_argument("--objectives", default="branin,hartmann6,curve")
    parser.add_argument("--methods", default="", help="only these methods (default: all)")
    parser.add_argument(
        "--bayesopt-seeds",
        type=int,
        default=BAYESOPT_SEEDS,
        help=f"at most this many seeds for BayesOptSearch, whose suggestions are slow "
        f"(default {BAYESOPT_SEEDS}; 0: as many as --seeds)",
    )
    parser.add_argument(
        "--torch-seeds",
        type=int,
        default=TORCH_SEEDS,
        help=f"at most this many seeds for HEBOSearch and AxSearch, the slowest "
        f"(default {TORCH_SEEDS}; 0: as many as --seeds)",
    )
    args = parser.parse_args(list(argv))
    if args.seeds < 1:
        parser.error(f"--seeds={args.seeds} must be at least 1")
    concurrencies = [int(c) for c in _split(args.concurrency)]
    tasks = {task.key: task for task in TASKS}
    unknown = [key for key in _split(args.objectives) if key not in tasks]
    if unknown:
        parser.error(f"--objectives: unknown {unknown}; known: {list(tasks)}")
    wanted = set(_split(args.methods))

    command = "python -m benchmarks search_quality " + " ".join(argv)
    print(f"Made by `{command.strip()}` ({versions()}).\n", flush=True)
    for key in _split(args.objectives):
        task = tasks[key]
        rows: list[Row] = []
        skipped: list[str] = []
        for method in METHODS[key]:
            if wanted and method.key not in wanted:
                continue
            try:
                seeds = args.seeds
                if method is BAYESOPT:
                    seeds = min(seeds, args.bayesopt_seeds or seeds)
                if method in (HEBO, AX):
                    seeds = min(seeds, args.torch_seeds or seeds)
                rows.extend(_rows(task, method, seeds, concurrencies))
            except Unavailable as missing:
                skipped.append(f"{method.label} skipped: {missing}")
        print(table(task, rows), flush=True)
        for line in skipped:
            print(f"\n{line}", flush=True)
        print(flush=True)
    return 0


def _rows(task: Task, method: Method, seeds: int, concurrencies: Sequence[int]) -> list[Row]:
    rows = []
    for concurrency in concurrencies:
        started = time.perf_counter()
        outcomes = tuple(run_once(task, method, seed, concurrency) for seed in range(seeds))
        elapsed = time.perf_counter() - started
        print(
            f"[{task.objective.name}, {method.label}, {concurrency} concurrent: "
            f"{elapsed:.1f} s for {seeds} seeds]",
            file=sys.stderr,
            flush=True,
        )
        rows.append(Row(method, concurrency, outcomes))
    return rows


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
