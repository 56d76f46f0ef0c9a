"""What an idle experiment writes to its event log, per idle minute.

Two trials on a local Ray each report once, then spend `--idle` seconds
in one step (a long training step: nothing arrives), then report again
and end. The events logged between the two reports are the idle time's:
the count, and the `Tick`s among them, per minute of it. `--budget` sets
`TuneConfig(time_budget_s=...)` (well beyond the run), the setting under
which an idle experiment still logs a `Tick` now and then (see
`tunecore.core.experiment.idle`).

    python -m benchmarks.idle_log [--idle 60] [--budget 3600]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import ResultReported, Tick
from tunecore.shell.eventlog import read_log


def _trainable(idle_s: float) -> Callable[[dict[str, object]], None]:
    def train(config: dict[str, object]) -> None:
        del config
        tunecore.report({"score": 0.0})
        time.sleep(idle_s)  # the long step: what is measured, not a synchronisation
        tunecore.report({"score": 1.0})

    return train


def measure(idle_s: float, budget_s: float | None, storage: Path) -> dict[str, float]:
    """Run the experiment; the idle span's records, Ticks, and their rates."""
    tuner = Tuner(
        _trainable(idle_s),
        tune_config=TuneConfig(num_samples=2, time_budget_s=budget_s),
        run_config=RunConfig(name="idle", storage_path=str(storage), verbose=0),
    )
    tuner.fit()
    events = list(read_log(storage / "idle").events)
    scores = [
        (n, e.result.get("score")) for n, e in enumerate(events) if isinstance(e, ResultReported)
    ]
    first = max(n for n, score in scores if score == 0.0)  # the last of the first reports
    last = min(n for n, score in scores if score == 1.0)  # the first of the second ones
    span = events[first + 1 : last]
    minutes = (events[last].at - events[first].at) / 60
    ticks = sum(isinstance(e, Tick) for e in span)
    return {
        "idle_minutes": round(minutes, 2),
        "records": len(span),
        "ticks": ticks,
        "records_per_idle_minute": round(len(span) / minutes, 1),
        "ticks_per_idle_minute": round(ticks / minutes, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of the long step")
    parser.add_argument("--budget", type=float, default=None, help="time_budget_s, if any")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="idle_log-") as scratch:
        print(measure(args.idle, args.budget, Path(scratch)))


if __name__ == "__main__":
    main()
