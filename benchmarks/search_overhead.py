"""What running Optuna inside tunecore costs the driver, per suggestion and
per observation, against Optuna's own ask/tell loop (issue 12).

    python -m benchmarks search_overhead [--trials 200,1000] [--repeats 3]

Workload: N trials over two floats and a categorical (`x1`, `x2`, `kind`),
each one iteration of a Branin-based function, one trial at a time. Both
sides use `TPESampler(seed=0)` (a fresh one per run; `OptunaSearch(seed=0)`
builds it, so the logged spec rebuilds it too), ask in the same order and
are told the same values, so they make the same suggestions: the table
says whether they did.

- bare Optuna: `study.ask(distributions)` then `study.tell(trial, value)`,
  N times; ms per ask and per tell.
- tunecore: `tunecore.simulate` (in-process, virtual time) with
  `OptunaSearch(seed=0)` and `max_concurrent_trials=1`.
  The time inside the object's `suggest` and inside what it is told
  (`on_trial_result` and `on_trial_complete`) is measured around those
  calls; "driver per trial beyond random search" is the run's CPU time less
  the same run's with tunecore's own random search (`BasicVariantGenerator`),
  per trial: everything a searcher object adds to an experiment, Optuna's
  work included. "Added by tunecore" is that less bare Optuna's ask + tell.
- rebuild: what `Tuner.restore` does to get the searcher back
  (`tunecore.api.searching.restored_runtime`: a fresh `OptunaSearch` from
  the logged spec, fed the log's tells and asks in log order, walking the
  log through the core), timed on the finished run's log and given per
  1,000 trials; "of which re-asking Optuna" is that less a walk of the same
  log that calls nothing.

Times are CPU times of this process (`time.process_time`; the machine is
shared, and CPU time does not count the moments another process holds the
core), the best of `--repeats` runs, all measured side by side in one run.
"""

from __future__ import annotations

import argparse
import functools
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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
    """One run's times, in seconds, and what it suggested."""

    suggest_s: float = 0.0
    observe_s: float = 0.0
    run_s: float = 0.0
    configs: list[JsonDict] = field(default_factory=list)


def bare_optuna(trials: int) -> Timings:
    """Optuna's own ask/tell loop over the same space and sampler."""
    import optuna  # noqa: PLC0415 - optional: the benchmark says when it is missing

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    distributions: dict[str, Any] = {
        "x1": optuna.distributions.FloatDistribution(-5.0, 10.0),
        "x2": optuna.distributions.FloatDistribution(0.0, 15.0),
        "kind": optuna.distributions.CategoricalDistribution(list(KINDS)),
    }
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=SEED))
    timings = Timings()
    clock = time.process_time
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
        started = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            setattr(into, attribute, getattr(into, attribute) + time.process_time() - started)

    return timed


def optuna_search() -> Any:
    """`OptunaSearch(seed=0)` (its default `TPESampler(seed=0)`), a fresh one."""
    from tunecore.search.optuna import OptunaSearch  # noqa: PLC0415 - optional: needs optuna

    return OptunaSearch(seed=SEED)


def in_tunecore(trials: int, root: Path, searcher: object | None) -> Timings:
    """One simulated experiment, one trial at a time; `searcher` None is
    tunecore's random search. Its log stays in `root` / "run"."""
    timings = Timings()
    if searcher is not None:
        # Instance attributes: the class (and so the logged spec) stays OptunaSearch's.
        for name, attribute in (
            ("suggest", "suggest_s"),
            ("on_trial_result", "observe_s"),
            ("on_trial_complete", "observe_s"),
        ):
            setattr(searcher, name, _timed(getattr(searcher, name), timings, attribute))
    started = time.process_time()
    results = tunecore.simulate(
        trainable,
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


def rebuild_times(experiment: Path) -> tuple[float, float]:
    """(the whole rebuild of the searcher object on restore, a walk of the
    same log that calls nothing), in CPU seconds."""
    from tunecore.api.searching import restored_runtime  # noqa: PLC0415
    from tunecore.core.experiment.snapshot import BUILTIN  # noqa: PLC0415
    from tunecore.shell.eventlog import read_log  # noqa: PLC0415
    from tunecore.shell.replay import HistoryWalk, rebuild, walk  # noqa: PLC0415

    contents = read_log(experiment)
    state = rebuild(contents, experiment).state
    started = time.process_time()
    history = HistoryWalk(contents, BUILTIN)
    runtime = restored_runtime(history, state.searcher, None, None)
    history.run()
    rebuilt_s = time.process_time() - started
    assert runtime is not None
    started = time.process_time()
    walk(contents, BUILTIN, lambda *_: None)
    walk_s = time.process_time() - started
    return rebuilt_s, walk_s


@dataclass(frozen=True)
class Measured:
    """The best (least disturbed) of the repeats, per quantity."""

    trials: int
    bare: Timings
    tunecore: Timings
    random_run_s: float
    rebuild_s: float
    walk_s: float
    same_suggestions: bool


def measure(trials: int, repeats: int) -> Measured:
    bare: list[Timings] = []
    inside: list[Timings] = []
    random_runs: list[float] = []
    rebuilds: list[tuple[float, float]] = []
    for _ in range(repeats):  # interleaved, so drifts in machine load hit all alike
        bare.append(bare_optuna(trials))
        root = Path(run_dir("bench-search-overhead-"))
        inside.append(in_tunecore(trials, root, optuna_search()))
        rebuilds.append(rebuild_times(root / "run"))
        random_runs.append(in_tunecore(trials, Path(run_dir("bench-search-overhead-")), None).run_s)
    same = all(t.configs == bare[0].configs for t in (*bare, *inside))
    return Measured(
        trials=trials,
        bare=Timings(
            suggest_s=min(t.suggest_s for t in bare), observe_s=min(t.observe_s for t in bare)
        ),
        tunecore=Timings(
            suggest_s=min(t.suggest_s for t in inside),
            observe_s=min(t.observe_s for t in inside),
            run_s=min(t.run_s for t in inside),
        ),
        random_run_s=min(random_runs),
        rebuild_s=min(r[0] for r in rebuilds),
        walk_s=min(r[1] for r in rebuilds),
        same_suggestions=same,
    )


def table(rows: Sequence[Measured]) -> str:
    def ms(seconds: float, m: Measured) -> str:
        return f"{1000 * seconds / m.trials:.2f}"

    header = "| ms per trial (mean) | " + " | ".join(f"{m.trials:,} trials" for m in rows) + " |"
    lines = [header, "|---|" + "---:|" * len(rows)]

    def row(label: str, cell: Callable[[Measured], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(m) for m in rows) + " |")

    row("bare Optuna: `study.ask`", lambda m: ms(m.bare.suggest_s, m))
    row("tunecore: `OptunaSearch.suggest`", lambda m: ms(m.tunecore.suggest_s, m))
    row("bare Optuna: `study.tell`", lambda m: ms(m.bare.observe_s, m))
    row("tunecore: `on_trial_result` + `on_trial_complete`", lambda m: ms(m.tunecore.observe_s, m))
    row(
        "tunecore: driver per trial beyond random search",
        lambda m: ms(m.tunecore.run_s - m.random_run_s, m),
    )
    row(
        "**added by tunecore** (the above less ask + tell)",
        lambda m: (
            "**"
            + ms(m.tunecore.run_s - m.random_run_s - m.bare.suggest_s - m.bare.observe_s, m)
            + "**"
        ),
    )
    row("whole run, random search (for scale)", lambda m: ms(m.random_run_s, m))
    row(
        "rebuild on restore, s per 1,000 trials",
        lambda m: f"{m.rebuild_s * 1000 / m.trials:.2f}",
    )
    row(
        "of which re-asking Optuna, s per 1,000 trials",
        lambda m: f"{(m.rebuild_s - m.walk_s) * 1000 / m.trials:.2f}",
    )
    row("same suggestions as bare Optuna", lambda m: "yes" if m.same_suggestions else "**no**")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks search_overhead")
    parser.add_argument("--trials", default="200,1000", help="trial counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    args = parser.parse_args(list(argv))
    counts = [int(n) for n in args.trials.split(",") if n]
    if args.repeats < 1 or not counts or min(counts) < 1:
        parser.error("--trials and --repeats must be positive")
    try:
        optuna_search()
    except ImportError as missing:
        print(f"search_overhead skipped: {missing}")
        return 0
    rows = [measure(n, args.repeats) for n in counts]
    import optuna  # noqa: PLC0415

    command = "python -m benchmarks search_overhead " + " ".join(argv)
    print(
        f"Made by `{command.strip()}` on {platform.machine()} "
        f"(Python {platform.python_version()}, optuna {optuna.__version__}; "
        f"CPU ms, best of {args.repeats}).\n"
    )
    print(table(rows))
    return 0 if all(m.same_suggestions for m in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
