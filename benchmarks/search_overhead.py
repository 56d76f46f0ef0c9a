"""What running a model-based searcher inside tunecore costs the driver,
per trial, against the searcher's own work (issues 12 and 41).

    python -m benchmarks search_overhead [--trials 200,1000,10000] [--repeats 2]
        [--sampler tpe|random] [--searchers optuna,hyperopt] [--check [added,flat,rebuild]]

Workload: N trials over two floats and a categorical (`x1`, `x2`, `kind`),
each one iteration of a Branin-based function, one trial at a time.

- bare Optuna: `study.ask(distributions)` then `study.tell(trial, value)`,
  N times, with the sampler of `--sampler`: `TPESampler(seed=0)` (what
  `OptunaSearch(seed=0)` builds, and what its logged spec rebuilds) or
  `RandomSampler(seed=0)` (given to `OptunaSearch(sampler=...)`, so a
  restore is given it again). Both sides ask in the same order and are
  told the same values, so they make the same suggestions: the table says
  whether they did.
- tunecore: `tunecore.simulate` (in-process, virtual time) with the
  searcher and `max_concurrent_trials=1`; the same with tunecore's own
  random search (`BasicVariantGenerator`) for the driver's cost without a
  searcher object. Inside the run, the time in Optuna's `Study.ask`,
  `Trial.report` and `Study.tell` is measured around those calls, and so
  is the time in the searcher object's `suggest`, `on_trial_result` and
  `on_trial_complete`.
- **added by tunecore** (the target: at most `ADDED_TARGET_MS` a trial,
  at every size): the run's CPU time less the time it spent in the
  optimizer's own work (Optuna's ask, report and tell for `OptunaSearch`,
  so the adapter's code counts as tunecore's; the object's methods for
  the others, whose calls are not told apart from the adapter's), less
  the driver's time in a control run: tunecore's random search whose
  trainable drives a searcher object of its own in a bare loop (the same
  optimizer doing the same work between the driver's turns, outside
  tunecore's searcher path), the object's methods taken out. Why not
  against random search alone (still shown): the driver's per-trial code
  takes 40-90% more CPU when other work comes between its turns, whatever
  that work is (a sleep does it too; docs/benchmarks.md, "Searcher
  overhead: where the added time went"), so a slow searcher's run was
  charged for the driver's own code running cold. Taken in the same run,
  not from the bare loop: at 10,000 trials a TPE ask takes ~50 ms, and
  run-to-run noise of 1% there is the whole target.
- rebuild: what `Tuner.restore` does to get the searcher back
  (`tunecore.api.searching.restored_runtime`: a fresh object from the
  logged spec, or the one given again, fed the log's tells and asks in
  log order, walking the log through the core), on the finished run's
  log. Its target: at most `REBUILD_TARGET` times bare Optuna's ask + tell
  of the same sequence, at the largest size. Re-asking is as quadratic
  as the bare loop with TPE (the sampler's random state can be rebuilt
  only by asking again: docs/search-plan.md), so this holds only if the
  walk and the adapter add little, and if the re-asks run back to back,
  not between the walk's steps (which made each ask 10-20% slower).

Times are CPU times (`time.process_time` for whole runs, including the
log writer's thread; `time.thread_time` around the calls inside a run,
which the driver makes from its own thread and which costs a third of
`process_time`): the machine is shared, and CPU time does not count the
moments another process holds the core. Each is the median of
`--repeats` runs, all measured side by side in one run, interleaved.
`--check` exits 1 when a target named (all by default) is not met: the
regression benchmark, `--check added,flat,rebuild` (with `--searchers
optuna,hyperopt`; `--sampler random --trials 1000,10000` for 10,000
trials in minutes: docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import functools
import platform
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

import tunecore
from benchmarks.objectives import branin
from benchmarks.scratch import run_dir
from tunecore import RunConfig, TuneConfig
from tunecore.model import JsonDict
from tunecore.search import BasicVariantGenerator

SEED = 0
KINDS = ("a", "b", "c")
PARAM_SPACE: dict[str, object] = {
    "x1": tunecore.uniform(-5.0, 10.0),
    "x2": tunecore.uniform(0.0, 15.0),
    "kind": tunecore.choice(list(KINDS)),
}
ADDED_TARGET_MS = 0.5  # what tunecore adds to a model-based searcher, per trial
REBUILD_TARGET = 1.2  # a restore's searcher rebuild over bare Optuna's ask + tell
SAMPLERS = ("tpe", "random")
SEARCHERS = ("optuna", "hyperopt")
OBJECT_METHODS = ("suggest", "on_trial_result", "on_trial_complete")


def value(config: JsonDict) -> float:
    """Branin, shifted by the categorical."""
    x1, x2, kind = config["x1"], config["x2"], config["kind"]
    if not (isinstance(x1, float) and isinstance(x2, float) and kind in KINDS):
        raise TypeError(f"config {config!r} is not a point of {PARAM_SPACE}")
    return branin(x1, x2) + KINDS.index(str(kind))


def trainable(config: JsonDict, _iteration: int) -> tuple[JsonDict, float]:
    return {"value": value(config)}, 1.0


@dataclass
class Timings:
    """One run's times, in seconds, and what it suggested. `suggest_s` and
    `observe_s`: the optimizer's own ask and tell (bare), or the time in
    Optuna's ask, report and tell inside a tunecore run;
    `object_s`: in the searcher object's methods."""

    suggest_s: float = 0.0
    observe_s: float = 0.0
    object_s: float = 0.0
    run_s: float = 0.0
    configs: list[JsonDict] = field(default_factory=list)


def sampler(kind: str) -> Any:
    """A fresh seeded Optuna sampler of `kind` (`SAMPLERS`)."""
    import optuna  # noqa: PLC0415 - optional: the benchmark says when it is missing

    if kind == "random":
        return optuna.samplers.RandomSampler(seed=SEED)
    return optuna.samplers.TPESampler(seed=SEED)


def bare_optuna(trials: int, kind: str = "tpe") -> Timings:
    """Optuna's own ask/tell loop over the same space and sampler."""
    import optuna  # noqa: PLC0415 - optional: the benchmark says when it is missing

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    distributions: dict[str, Any] = {
        "x1": optuna.distributions.FloatDistribution(-5.0, 10.0),
        "x2": optuna.distributions.FloatDistribution(0.0, 15.0),
        "kind": optuna.distributions.CategoricalDistribution(list(KINDS)),
    }
    study = optuna.create_study(direction="minimize", sampler=sampler(kind))
    timings = Timings()
    clock = time.thread_time
    for _ in range(trials):
        started = clock()
        trial = study.ask(distributions)
        timings.suggest_s += clock() - started
        config: JsonDict = dict(trial.params)
        timings.configs.append(config)
        result = value(config)
        started = clock()
        study.tell(trial, result)
        timings.observe_s += clock() - started
    return timings


def _timed(method: Callable[..., Any], into: Timings, attribute: str) -> Callable[..., Any]:
    @functools.wraps(method)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return method(*args, **kwargs)
        finally:
            setattr(into, attribute, getattr(into, attribute) + time.thread_time() - started)

    return timed


@contextmanager
def _optuna_timed(into: Timings) -> Iterator[None]:
    """Optuna's own work timed into `into` while the block runs (the study
    is the searcher's own, made inside the run): `Study.ask` as the
    suggestion, `Trial.report` (a result's intermediate value, which Ray's
    `OptunaSearch` reports too) and `Study.tell` as the observation."""
    from optuna.study import Study  # noqa: PLC0415 - optional: needs optuna
    from optuna.trial import Trial  # noqa: PLC0415

    timed = (
        (Study, "ask", "suggest_s"),
        (Study, "tell", "observe_s"),
        (Trial, "report", "observe_s"),
    )
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in timed]
    for owner, name, attribute in timed:
        setattr(owner, name, _timed(getattr(owner, name), into, attribute))
    try:
        yield
    finally:
        for owner, name, method in originals:
            setattr(owner, name, method)


def new_searcher(name: str = "optuna", kind: str = "tpe") -> Any:
    """A fresh searcher object: `OptunaSearch(seed=0)` (its default
    `TPESampler(seed=0)`) or `OptunaSearch(sampler=RandomSampler(seed=0))`;
    `HyperOptSearch(random_state_seed=0)`."""
    if name == "hyperopt":
        from tunecore.search.hyperopt import HyperOptSearch  # noqa: PLC0415 - optional

        return HyperOptSearch(random_state_seed=SEED)
    from tunecore.search.optuna import OptunaSearch  # noqa: PLC0415 - optional: needs optuna

    if kind == "random":
        return OptunaSearch(sampler=sampler(kind))
    return OptunaSearch(seed=SEED)


def optuna_search() -> Any:
    """`OptunaSearch(seed=0)`, a fresh one (ImportError without optuna)."""
    return new_searcher()


def in_tunecore(
    trials: int,
    root: Path,
    searcher: object | None,
    train: Callable[[JsonDict, int], tuple[JsonDict, float]] = trainable,
) -> Timings:
    """One simulated experiment of `train`, one trial at a time;
    `searcher` None is tunecore's random search. Its log stays in
    `root` / "run"."""
    timings = Timings()
    if searcher is not None:
        # Instance attributes: the class (and so the logged spec) stays the searcher's.
        for name in OBJECT_METHODS:
            setattr(searcher, name, _timed(getattr(searcher, name), timings, "object_s"))
    with _optuna_timed(timings):
        started = time.process_time()
        results = tunecore.simulate(
            train,
            param_space=PARAM_SPACE,
            tune_config=TuneConfig(
                metric="value",
                mode="min",
                num_samples=trials,
                seed=SEED,
                max_concurrent_trials=1,
                search_alg=searcher if searcher is not None else BasicVariantGenerator(),
            ),
            run_config=RunConfig(name="run", storage_path=str(root), verbose=0),
            max_iterations=1,
        )
        timings.run_s = time.process_time() - started
    if results.num_errors or len(results) != trials:
        raise RuntimeError(f"the run did not complete {trials} trials: {results.errors[:1]}")
    timings.configs = [dict(trial.config) for trial in results.trials]
    return timings


def random_search_beside(trials: int, root: Path, searcher: Any) -> Timings:
    """Tunecore's random search whose trainable, before each trial's
    result, runs one step of a bare loop over `searcher` (an object of its
    own, as a script would drive it: `suggest`, a result, complete, told
    the objective of its own suggestion): the optimizer does the work it
    does in the searcher run, in the same order, between the same turns of
    the driver, but none of it goes through tunecore's searcher path.
    `object_s` is the time in the object's methods; `configs` are its
    suggestions. Why: the driver's per-trial code takes 40-90% more CPU
    when other work comes between its turns (its caches cooled: a sleep
    does it too, docs/benchmarks.md), so the searcher run less this one is
    what the searcher's path in tunecore adds, its own code running as
    cold as the driver's."""
    timings = Timings()
    searcher.set_search_properties("value", "min", dict(PARAM_SPACE))
    for name in OBJECT_METHODS:
        setattr(searcher, name, _timed(getattr(searcher, name), timings, "object_s"))

    def beside(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        trial_id = f"bare-{len(timings.configs)}"
        suggested = searcher.suggest(trial_id)
        timings.configs.append(dict(suggested))
        result = {"value": value(suggested), "training_iteration": 1}
        searcher.on_trial_result(trial_id, result)
        searcher.on_trial_complete(trial_id, result)
        return trainable(config, iteration)

    timings.run_s = in_tunecore(trials, root, None, train=beside).run_s
    return timings


def rebuild_times(experiment: Path, given: object = None) -> tuple[float, float]:
    """(the whole rebuild of the searcher object on restore, a walk of the
    same log that calls nothing), in CPU seconds. `given`: the searcher
    passed to the restore again (one the logged spec cannot rebuild)."""
    from tunecore.api.searching import restored_runtime  # noqa: PLC0415
    from tunecore.core.experiment.snapshot import BUILTIN  # noqa: PLC0415
    from tunecore.shell.eventlog import read_log  # noqa: PLC0415
    from tunecore.shell.replay import HistoryWalk, rebuild, walk  # noqa: PLC0415

    contents = read_log(experiment)
    state = rebuild(contents, experiment).state
    started = time.process_time()
    history = HistoryWalk(contents, BUILTIN)
    runtime = restored_runtime(history, state.searcher, given, None)
    history.run()
    rebuilt_s = time.process_time() - started
    assert runtime is not None
    started = time.process_time()
    walk(contents, BUILTIN, lambda *_: None)
    walk_s = time.process_time() - started
    return rebuilt_s, walk_s


@dataclass(frozen=True)
class Measured:
    """The median of the repeats, per quantity. `bare` is None for a
    searcher without a bare loop here (HyperOpt); `beside` is the random
    search run beside a bare loop over the same searcher
    (`random_search_beside`)."""

    trials: int
    searcher: str
    sampler: str
    bare: Timings | None
    tunecore: Timings
    random_run_s: float
    beside: Timings
    rebuild_s: float
    walk_s: float
    same_suggestions: bool | None

    @property
    def label(self) -> str:
        if self.searcher == "optuna":
            return f"OptunaSearch ({'TPESampler' if self.sampler == 'tpe' else 'RandomSampler'})"
        return "HyperOptSearch"

    @property
    def optimizer_s(self) -> float:
        """The optimizer's own work inside the run (see the module docstring)."""
        if self.searcher == "optuna":
            return self.tunecore.suggest_s + self.tunecore.observe_s
        return self.tunecore.object_s

    @property
    def added_s(self) -> float:
        """What tunecore adds, in seconds, over the run: the run less the
        optimizer's own work, less the driver's time in the random search
        run beside a bare loop of the same optimizer (its run less the
        object's methods), so that the driver's own per-trial code counts
        alike on both sides, as cold (docs/benchmarks.md)."""
        driver_beside_s = self.beside.run_s - self.beside.object_s
        return self.tunecore.run_s - self.optimizer_s - driver_beside_s

    @property
    def alone_added_s(self) -> float:
        """The same against tunecore's random search alone, whose driver
        code runs warm, one trial right after the other (the measure before
        the cause was found; shown for the difference)."""
        return self.tunecore.run_s - self.random_run_s - self.optimizer_s

    @property
    def rebuild_ratio(self) -> float | None:
        """The rebuild over bare Optuna's ask + tell of the same sequence."""
        if self.bare is None:
            return None
        return self.rebuild_s / (self.bare.suggest_s + self.bare.observe_s)


def _median(runs: Sequence[Timings]) -> Timings:
    return Timings(
        suggest_s=median(t.suggest_s for t in runs),
        observe_s=median(t.observe_s for t in runs),
        object_s=median(t.object_s for t in runs),
        run_s=median(t.run_s for t in runs),
    )


WARM_UP_TRIALS = 20


def warm_up(searcher: str, kind: str) -> None:
    """One small run of each kind, so that no measured run pays for the
    imports and first calls (Optuna's samplers, the searcher module, the
    log reader) that any experiment pays once."""
    if searcher == "optuna":
        bare_optuna(WARM_UP_TRIALS, kind)
    root = Path(run_dir("bench-search-overhead-"))
    in_tunecore(WARM_UP_TRIALS, root, new_searcher(searcher, kind))
    rebuild_times(root / "run", new_searcher(searcher, kind) if kind == "random" else None)
    in_tunecore(WARM_UP_TRIALS, Path(run_dir("bench-search-overhead-")), None)


def measure(trials: int, repeats: int, searcher: str = "optuna", kind: str = "tpe") -> Measured:
    warm_up(searcher, kind)
    bare: list[Timings] = []
    inside: list[Timings] = []
    random_runs: list[float] = []
    beside: list[Timings] = []
    rebuilds: list[tuple[float, float]] = []
    # A searcher whose spec cannot rebuild it (Optuna with the user's sampler) is given again.
    given = (lambda: new_searcher(searcher, kind)) if kind == "random" else (lambda: None)
    for _ in range(repeats):  # interleaved, so drifts in machine load hit all alike
        if searcher == "optuna":
            bare.append(bare_optuna(trials, kind))
        root = Path(run_dir("bench-search-overhead-"))
        inside.append(in_tunecore(trials, root, new_searcher(searcher, kind)))
        rebuilds.append(rebuild_times(root / "run", given()))
        control = Path(run_dir("bench-search-overhead-"))
        beside.append(random_search_beside(trials, control, new_searcher(searcher, kind)))
        random_runs.append(in_tunecore(trials, Path(run_dir("bench-search-overhead-")), None).run_s)
    runs = (*bare, *inside, *beside)
    same = all(t.configs == bare[0].configs for t in runs) if bare else None
    return Measured(
        trials=trials,
        searcher=searcher,
        sampler=kind if searcher == "optuna" else "",
        bare=_median(bare) if bare else None,
        tunecore=_median(inside),
        random_run_s=median(random_runs),
        beside=_median(beside),
        rebuild_s=median(r[0] for r in rebuilds),
        walk_s=median(r[1] for r in rebuilds),
        same_suggestions=same,
    )


def table(rows: Sequence[Measured]) -> str:
    """One table per searcher, a column per size."""
    out: list[str] = []
    for label in dict.fromkeys(m.label for m in rows):
        out += ["", *_table([m for m in rows if m.label == label])]
    return "\n".join(out).strip("\n")


def _table(rows: Sequence[Measured]) -> list[str]:
    def ms(seconds: float, m: Measured) -> str:
        return f"{1000 * seconds / m.trials:.2f}"

    header = f"| {rows[0].label}, ms per trial | " + " | ".join(
        f"{m.trials:,} trials" for m in rows
    )
    lines = [header + " |", "|---|" + "---:|" * len(rows)]

    def row(label: str, cell: Callable[[Measured], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(m) for m in rows) + " |")

    optuna = rows[0].searcher == "optuna"
    if optuna:
        row("bare Optuna: `study.ask` + `study.tell`", lambda m: _bare(m, ms))
        row(
            "in tunecore: Optuna's ask, report and tell",
            lambda m: ms(m.tunecore.suggest_s + m.tunecore.observe_s, m),
        )
    row("in tunecore: the searcher object's methods", lambda m: ms(m.tunecore.object_s, m))
    if optuna:
        row(
            "of which `OptunaSearch`'s own code",
            lambda m: ms(m.tunecore.object_s - m.optimizer_s, m),
        )
    row("whole run, with the searcher", lambda m: ms(m.tunecore.run_s, m))
    row("whole run, random search", lambda m: ms(m.random_run_s, m))
    row("added against random search alone", lambda m: ms(m.alone_added_s, m))
    row("whole run, random search beside a bare loop", lambda m: ms(m.beside.run_s, m))
    row("of which the bare loop's searcher calls", lambda m: ms(m.beside.object_s, m))
    row(
        f"**added by tunecore** (against the run beside; target <= {ADDED_TARGET_MS:g})",
        lambda m: f"**{ms(m.added_s, m)}**",
    )
    row("rebuild on restore, s per 1,000 trials", lambda m: f"{m.rebuild_s * 1000 / m.trials:.2f}")
    row("of which walking the log", lambda m: f"{m.walk_s * 1000 / m.trials:.2f}")
    if optuna:
        row(
            f"rebuild / bare ask + tell (target <= {REBUILD_TARGET:g}x)",
            lambda m: f"{m.rebuild_ratio:.2f}x" if m.rebuild_ratio is not None else "-",
        )
        row(
            "same suggestions as bare Optuna",
            lambda m: "yes" if m.same_suggestions else "**no**",
        )
    return lines


def _bare(m: Measured, ms: Callable[[float, Measured], str]) -> str:
    return "-" if m.bare is None else ms(m.bare.suggest_s + m.bare.observe_s, m)


TARGETS = ("added", "flat", "rebuild")
FLAT_TARGET = 1.2  # added by tunecore at the largest size over the smallest's


def targets(rows: Sequence[Measured]) -> list[tuple[str, str, str, bool]]:
    """(which of `TARGETS`, what, the value measured, met) per target: what
    tunecore adds at each size; per searcher, that it stays flat (at the
    largest size within `FLAT_TARGET` times the smallest's, or within the
    target itself: a ratio of two small, noisy numbers says little) and
    the rebuild at the largest size (Optuna)."""
    found = [
        (
            "added",
            f"{m.label}: added by tunecore at {m.trials:,} trials <= {ADDED_TARGET_MS:g} ms",
            f"{1000 * m.added_s / m.trials:.2f} ms / trial",
            1000 * m.added_s / m.trials <= ADDED_TARGET_MS,
        )
        for m in rows
    ]
    for label in dict.fromkeys(m.label for m in rows):
        sized = sorted((m for m in rows if m.label == label), key=lambda m: m.trials)
        smallest, largest = sized[0], sized[-1]
        if largest.trials > smallest.trials:
            first, last = (1000 * m.added_s / m.trials for m in (smallest, largest))
            found.append(
                (
                    "flat",
                    f"{label}: added by tunecore at {largest.trials:,} trials <= "
                    f"{FLAT_TARGET:g}x at {smallest.trials:,}, or <= {ADDED_TARGET_MS:g} ms",
                    f"{last:.2f} against {first:.2f} ms / trial",
                    last <= max(FLAT_TARGET * first, ADDED_TARGET_MS),
                )
            )
        ratio = largest.rebuild_ratio
        if ratio is not None:
            found.append(
                (
                    "rebuild",
                    f"{label}: restore's rebuild at {largest.trials:,} trials <= "
                    f"{REBUILD_TARGET:g}x bare ask + tell",
                    f"{ratio:.2f}x",
                    ratio <= REBUILD_TARGET,
                )
            )
    return found


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks search_overhead")
    parser.add_argument("--trials", default="200,1000", help="trial counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="median of this many runs")
    parser.add_argument(
        "--sampler", choices=SAMPLERS, default="tpe", help="OptunaSearch's (and bare) sampler"
    )
    parser.add_argument(
        "--searchers", default="optuna", help=f"comma-separated, of {', '.join(SEARCHERS)}"
    )
    parser.add_argument(
        "--check",
        nargs="?",
        const=",".join(TARGETS),
        default="",
        help=f"exit 1 when one of these targets ({', '.join(TARGETS)}; all if none named) "
        "is not met",
    )
    args = parser.parse_args(list(argv))
    counts = [int(n) for n in args.trials.split(",") if n]
    names = [n for n in args.searchers.split(",") if n]
    if args.repeats < 1 or not counts or min(counts) < 1:
        parser.error("--trials and --repeats must be positive")
    checked = [n for n in args.check.split(",") if n]
    if any(n not in TARGETS for n in checked):
        parser.error(f"--check {args.check!r}: a comma-separated list of {TARGETS}")
    if not names or any(n not in SEARCHERS for n in names):
        parser.error(f"--searchers {args.searchers!r}: a comma-separated list of {SEARCHERS}")
    try:
        for name in names:
            new_searcher(name, args.sampler)
    except ImportError as missing:
        print(f"search_overhead skipped: {missing}")
        return 0
    rows = [measure(n, args.repeats, name, args.sampler) for name in names for n in counts]
    import optuna  # noqa: PLC0415

    command = "python -m benchmarks search_overhead " + " ".join(argv)
    print(
        f"Made by `{command.strip()}` on {platform.machine()} "
        f"(Python {platform.python_version()}, optuna {optuna.__version__}; "
        f"CPU ms, median of {args.repeats}).\n"
    )
    print(table(rows))
    found = targets(rows)
    print("\nTargets (issue 41):\n")
    for _, what, measured, met in found:
        print(f"- {what}: {measured} ({'met' if met else '**not met**'})")
    same = all(m.same_suggestions is not False for m in rows)
    return 0 if same and all(met for key, *_, met in found if key in checked) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
