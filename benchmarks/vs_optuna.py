"""tunecore in-process against Optuna on the same pruned sweep (issue 13's
in-process anchor).

    python -m benchmarks vs_optuna [--trials 100] [--iterations 50] [--repeats 3]

Workload: `--trials` trials of up to `--iterations` iterations each, pruned
by successive halving. An iteration does no work: the loss is a
deterministic learning curve of the config, `x + 1/step` with `x` drawn
uniformly from [0, 1) by each framework's seeded random search, so what is
measured is the framework's own cost per trial and per reported result.

- tunecore: `Tuner.fit()` with `RunConfig(executor="in_process")`, writing
  what it writes by default (the event log, each trial's `result.json`,
  `progress.csv`, `params.json`, and TensorBoard files when tensorboardX
  is installed), under `ASHAScheduler(grace_period=1, reduction_factor=4,
  max_t=iterations)`, Ray Tune's stopping variant: at each milestone (1,
  4, 16) a trial stops when its score is worse than the cutoff, the
  interpolated 75th percentile of the scores the rung recorded before it
  (losses negated, so the best quarter goes on). Trials run concurrently
  on the machine's CPUs (one each). Run twice: with the event log's
  default durability (`fsync_interval_ms=1000`: every record reaches the
  OS before it is applied, a disk sync at most every second) and with
  `fsync_interval_ms=0` (a sync per record, as Optuna's journal does:
  `JournalFileBackend` fsyncs every append).
- Optuna: `study.optimize` with `RandomSampler(seed)` (so the sampler's
  cost is not TPE's), `SuccessiveHalvingPruner(min_resource=1,
  reduction_factor=4)` (rungs at the same steps 1, 4, 16; a trial is pruned
  unless it is in the top quarter of the trials that reached the rung,
  itself included), `trial.report` and `trial.should_prune()` at every
  iteration, one trial at a time; once with
  `JournalStorage(JournalFileBackend(path))` and once in memory.

The two prune by nearly the same rule (Ray's percentile cutoff against
Optuna's top-k rank), so they prune a similar, not identical, number of
trials: the table shows how many each pruned and how many iterations each
ran. Every run is checked: all trials ran, every trial reported at least
one iteration, some trials ran to the end and some were pruned.

Times are wall seconds, the best of `--repeats`; each repeat runs the four
side by side in this one process, each in a fresh temporary directory.
The clock runs from building the `Tuner` (or the study) to the return of
`fit()` (or `optimize`); imports are not timed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.scratch import run_dir
from benchmarks.vs_ray_tune import iterations_of

SEED = 0
REDUCTION_FACTOR = 4
TARGET = 1.0  # tunecore / Optuna-journal must be below this
TUNECORE = "tunecore, in process"
TUNECORE_FSYNC = "tunecore, in process, fsync every record"
OPTUNA_JOURNAL = "Optuna, JournalFileBackend"
OPTUNA_MEMORY = "Optuna, in memory"


def loss(x: float, step: int) -> float:
    """The learning curve both frameworks report: falls with training and
    levels off at `x`."""
    return x + 1.0 / step


@dataclass(frozen=True)
class Run:
    """One framework's run: time, and what it did."""

    seconds: float
    iterations: list[int]  # per trial
    pruned: int  # trials stopped before the last iteration
    log_bytes: int | None = None  # tunecore's event log, Optuna's journal
    cpu_seconds: float = 0.0  # this process's CPU time, every thread


def run_tunecore(trials: int, iterations: int, storage: str, fsync_interval_ms: int = 1000) -> Run:
    import tunecore  # noqa: PLC0415 - imported before the clock, as Optuna is
    from tunecore.schedulers import ASHAScheduler  # noqa: PLC0415

    def trainable(config: dict[str, Any]) -> None:
        x = float(config["x"])
        for step in range(1, iterations + 1):
            tunecore.report({"loss": loss(x, step)})

    start, cpu = time.perf_counter(), time.process_time()
    tuner = tunecore.Tuner(
        trainable,
        param_space={"x": tunecore.uniform(0.0, 1.0)},
        tune_config=tunecore.TuneConfig(
            metric="loss",
            mode="min",
            num_samples=trials,
            seed=SEED,
            scheduler=ASHAScheduler(
                grace_period=1, reduction_factor=REDUCTION_FACTOR, max_t=iterations
            ),
        ),
        run_config=tunecore.RunConfig(
            name="sweep",
            storage_path=storage,
            executor="in_process",
            verbose=0,
            fsync_interval_ms=fsync_interval_ms,
        ),
    )
    grid = tuner.fit()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if grid.num_errors:
        raise RuntimeError(f"tunecore: {grid.num_errors} trials failed")
    done = [iterations_of(result.metrics) for result in grid]
    pruned = sum(1 for n in done if n < iterations)
    log = Path(storage, "sweep", "events.log").stat().st_size
    return Run(seconds, done, pruned, log, cpu)


def run_optuna(trials: int, iterations: int, journal: str | None) -> Run:
    import optuna  # noqa: PLC0415 - only the bench session has Optuna
    from optuna.storages import JournalStorage  # noqa: PLC0415
    from optuna.storages.journal import JournalFileBackend  # noqa: PLC0415

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        value = 0.0
        for step in range(1, iterations + 1):
            value = loss(x, step)
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned
        return value

    start, cpu = time.perf_counter(), time.process_time()
    study = optuna.create_study(
        storage=None if journal is None else JournalStorage(JournalFileBackend(journal)),
        sampler=optuna.samplers.RandomSampler(seed=SEED),
        pruner=optuna.pruners.SuccessiveHalvingPruner(
            min_resource=1, reduction_factor=REDUCTION_FACTOR
        ),
        direction="minimize",
    )
    study.optimize(objective, n_trials=trials)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    states = optuna.trial.TrialState
    if any(t.state not in (states.COMPLETE, states.PRUNED) for t in study.trials):
        raise RuntimeError("Optuna: a trial neither completed nor was pruned")
    done = [len(t.intermediate_values) for t in study.trials]
    pruned = sum(1 for t in study.trials if t.state == states.PRUNED)
    size = None if journal is None else os.path.getsize(journal)
    return Run(seconds, done, pruned, size, cpu)


def check(name: str, run: Run, trials: int, iterations: int) -> str | None:
    """What is wrong with a run, if anything: it must have run every trial,
    pruned some and run some to the end."""
    if len(run.iterations) != trials:
        return f"{name}: {len(run.iterations)} trials, expected {trials}"
    if min(run.iterations) < 1 or max(run.iterations) != iterations:
        return f"{name}: iterations out of 1..{iterations}: {sorted(set(run.iterations))}"
    if run.pruned == 0:
        return f"{name}: nothing was pruned"
    return None


Runner = Callable[[str], Run]


def measure(trials: int, iterations: int, repeats: int) -> dict[str, list[Run]]:
    """Every framework `repeats` times, interleaved, each in a fresh directory."""
    runners: dict[str, Runner] = {
        TUNECORE: lambda d: run_tunecore(trials, iterations, d),
        TUNECORE_FSYNC: lambda d: run_tunecore(trials, iterations, d, fsync_interval_ms=0),
        OPTUNA_JOURNAL: lambda d: run_optuna(trials, iterations, os.path.join(d, "journal.log")),
        OPTUNA_MEMORY: lambda _: run_optuna(trials, iterations, None),
    }
    runs: dict[str, list[Run]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, runner in runners.items():
            runs[name].append(runner(run_dir("bench-vs-optuna-")))
    return runs


def report(runs: dict[str, list[Run]], trials: int, iterations: int) -> tuple[str, bool]:
    """The Markdown table, and whether every run passed its checks."""
    import optuna  # noqa: PLC0415

    import tunecore  # noqa: PLC0415

    lines = [
        f"### In process: {trials} trials x up to {iterations} iterations, successive halving",
        "",
        f"Python {platform.python_version()}, {os.cpu_count()} cores, tunecore "
        f"{tunecore.__version__}, Optuna {optuna.__version__}, {platform.node()}",
        "",
        "| run | wall s | CPU s | trials | pruned | iterations | log bytes |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    problems: list[str] = []
    for name, repeated in runs.items():
        problems += [p for run in repeated if (p := check(name, run, trials, iterations))]
        fastest = min(repeated, key=lambda run: run.seconds)
        cpu = min(run.cpu_seconds for run in repeated)
        log = "-" if fastest.log_bytes is None else f"{fastest.log_bytes:,}"
        lines.append(
            f"| {name} | {fastest.seconds:.3f} | {cpu:.3f} | {len(fastest.iterations)} "
            f"| {fastest.pruned} | {sum(fastest.iterations):,} | {log} |"
        )
    best = {name: min(run.seconds for run in repeated) for name, repeated in runs.items()}
    ratio = best[TUNECORE] / best[OPTUNA_JOURNAL]
    verdict = "met" if ratio < TARGET else "NOT met"
    lines += [
        "",
        f"tunecore / Optuna with its journal: {ratio:.2f} (target < {TARGET:g}: {verdict}); "
        f"both syncing every record: {best[TUNECORE_FSYNC] / best[OPTUNA_JOURNAL]:.2f}; "
        f"tunecore / Optuna in memory: {best[TUNECORE] / best[OPTUNA_MEMORY]:.1f}",
        "",
        f"Wall: the best of {len(runs[TUNECORE])} runs each, interleaved in one process, each "
        "in a fresh temporary directory; CPU: this process's CPU time (every thread), the "
        "least of the same runs. Log bytes: tunecore's event log, Optuna's journal file.",
    ]
    if problems:
        lines += ["", "Failures:", "", *(f"- {p}" for p in problems)]
    return "\n".join(lines), not problems


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks vs_optuna", description=__doc__)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        import optuna  # noqa: F401, PLC0415
    except ImportError:
        print("Optuna is not installed: pip install optuna", file=sys.stderr)
        return 1
    runs = measure(args.trials, args.iterations, args.repeats)
    table, ok = report(runs, args.trials, args.iterations)
    print(table)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
