"""Run every benchmark and print Markdown tables (`python -m benchmarks [--quick]`)."""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable

from benchmarks import step_throughput
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.node()}\n")
    schedulers: dict[str, Callable[[], TrialScheduler]] = {
        "FIFO": FIFOScheduler,
        "ASHA": step_throughput.never_stopping_asha,
    }
    print(step_throughput.run(schedulers, quick=quick))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
