"""What the callbacks' `trials` list costs the driver: the simulated ASHA
run of `benchmarks.simulate_asha` (10,000 trials x 100 iterations) with
no callback of the user's, with one whose `on_trial_result` takes
`trials` (Ray's `List[Trial]`) and never reads it, one that reads
`len(trials)`, and one that reads an entry's status and last result, the
next entry at each result (so every entry in turn, each as the list shows
it then). The list is brought up to date by the trials changed since its
last update (`shell.listed_trials`), so the three should cost what no
callback does, per result, at any number of trials.

    python -m benchmarks callback_trials [--trials 10000] [--runs 3] [--against SRC]

Each run is a fresh child; its driver CPU time (`time.process_time`) is
what is compared. `--against SRC` runs the same cases on another source
tree too (its `src` directory, e.g. a `git archive` of the commit before
a change), alternating with this one run by run, so both see the same
machine load: a before/after table from one invocation.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.children import emit, run_child
from benchmarks.scratch import run_dir

NO_CALLBACK = "none"
IGNORES_TRIALS = "ignores trials"
READS_TRIALS = "reads len(trials)"
READS_ENTRIES = "reads every entry in turn"
CASES = (NO_CALLBACK, IGNORES_TRIALS, READS_TRIALS, READS_ENTRIES)
CHILD_TIMEOUT_S = 3600.0


def build(case: str, trials: int) -> dict[str, Any]:
    """One simulated ASHA run with the callbacks of `case`: its driver CPU."""
    import tunecore  # noqa: PLC0415 - imported before the clock, from the tree asked for
    from benchmarks.simulate_asha import simulated  # noqa: PLC0415

    lengths: list[int] = []

    class CountsTrials(tunecore.Callback):
        def on_trial_result(self, iteration: int, trials: Any, trial: Any, result: Any) -> None:
            lengths.append(len(trials))

    class CountsResults(tunecore.Callback):
        def on_trial_result(self, iteration: int, trials: Any, trial: Any, result: Any) -> None:
            lengths.append(0)

    class ReadsEntries(tunecore.Callback):
        def on_trial_result(self, iteration: int, trials: Any, trial: Any, result: Any) -> None:
            entry = trials[len(lengths) % len(trials)]
            lengths.append(len(entry.status) + len(entry.last_result))

    callbacks: dict[str, list[tunecore.Callback]] = {
        READS_TRIALS: [CountsTrials()],
        IGNORES_TRIALS: [CountsResults()],
        READS_ENTRIES: [ReadsEntries()],
    }
    started = time.process_time()
    grid = simulated(
        trials, run_dir("bench-callbacks-"), name="callbacks", callbacks=callbacks.get(case, [])
    )
    return {
        "cpu_s": time.process_time() - started,
        "finished": len(grid),
        "results_heard": len(lengths),
        "source": os.path.dirname(os.path.dirname(tunecore.__file__)),
    }


def measured(case: str, trials: int, source: str | None) -> dict[str, Any] | str:
    """`build` in a child importing tunecore from `source` (None: this tree)."""
    before = os.environ.get("PYTHONPATH")
    if source is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join([source, *filter(None, [before])])
    try:
        child = run_child(
            "benchmarks.callback_trials", ["--child", case, str(trials)], CHILD_TIMEOUT_S
        )
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
    return child.data if child.data is not None else child.problem or "no result"


THIS_TREE = "this tree"


def collected(
    trials: int, runs: int, trees: Sequence[tuple[str, str | None]], cases: Sequence[str]
) -> tuple[dict[tuple[str, str], list[float]], list[str]]:
    """Each (tree, case)'s driver CPU seconds over `runs` rounds, the
    trees (name, `src` or None for this one) alternating within each
    case; and what failed."""
    seconds: dict[tuple[str, str], list[float]] = {}
    problems: list[str] = []
    for _ in range(runs):
        for case in cases:
            for name, source in trees:
                print(f"{name}: {case}, {trials:,} trials ...", file=sys.stderr, flush=True)
                cell = measured(case, trials, source)
                if isinstance(cell, str):
                    problems.append(f"{name}, {case}: {cell}")
                else:
                    seconds.setdefault((name, case), []).append(float(cell["cpu_s"]))
    return seconds, problems


def against_no_callback(trials: int, runs: int) -> dict[str, float] | str:
    """What `scale_regression` checks: each callback case's median driver
    CPU over the median of the run without one, on this tree; or what
    failed."""
    seconds, problems = collected(trials, runs, [(THIS_TREE, None)], CASES)
    if problems:
        return "; ".join(problems)
    alone = statistics.median(seconds[(THIS_TREE, NO_CALLBACK)])
    return {
        case: statistics.median(seconds[(THIS_TREE, case)]) / alone
        for case in CASES
        if case != NO_CALLBACK
    }


def table(trials: int, runs: int, against: str | None, cases: Sequence[str] = CASES) -> str:
    trees: list[tuple[str, str | None]] = [(THIS_TREE, None)]
    if against is not None:
        trees.insert(0, (f"--against {against}", against))
    seconds, problems = collected(trials, runs, trees, cases)
    lines = [
        f"### The callbacks' `trials` at {trials:,} simulated ASHA trials "
        f"(driver CPU s, median of {runs}; each run: min-max)",
        "",
        "| tree | " + " | ".join(cases) + " |",
        "|---|" + "---:|" * len(cases),
    ]
    for name, _ in trees:
        cells = []
        for case in cases:
            got = seconds.get((name, case), [])
            cells.append(
                f"{statistics.median(got):.1f} ({min(got):.1f}-{max(got):.1f})" if got else "-"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines + [f"\nfailed: {problem}" for problem in problems])


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks callback_trials")
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES)
    )
    parser.add_argument("--against", help="another tree's src directory, run alternately")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "TRIALS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        emit(build(args.child[0], int(args.child[1])))
        return 0
    print(table(args.trials, args.runs, args.against, args.cases.split(",")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
