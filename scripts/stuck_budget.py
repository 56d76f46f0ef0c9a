"""How long `fit()` takes when the time budget runs out on a trial stuck in
its own code (issue 10, item 9): one trial reports once, then waits on an
event nobody sets.

    python scripts/stuck_budget.py [ray|in_process] [--budget 5]

Prints the seconds `fit()` took, the trial's status and its last loss. With
a 5 s budget it took 65 s on Ray (75 s in-process) before the grace period
(`tunecore.shell.executors.base.StopGrace`), about 10 s after: the budget
plus the 5 s grace (plus starting Ray's first actor).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner


def reports_then_blocks(config: dict[str, object]) -> None:  # noqa: ARG001 - the form fn(config)
    tunecore.report({"loss": 1.0})
    threading.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("executor", nargs="?", default="ray", choices=["ray", "in_process"])
    parser.add_argument("--budget", type=float, default=5.0)
    args = parser.parse_args()
    if args.executor == "ray":
        import ray  # noqa: PLC0415 - only this executor needs it

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = time.monotonic()
    grid = Tuner(
        reports_then_blocks,
        tune_config=TuneConfig(time_budget_s=args.budget),
        run_config=RunConfig(
            name="stuck", storage_path=tempfile.mkdtemp(), verbose=0, executor=args.executor
        ),
    ).fit()
    took = time.monotonic() - started
    (result,) = grid
    print(f"fit() took {took:.1f} s: {result.status.value}, loss {result.metrics.get('loss')}")


if __name__ == "__main__":
    main()
