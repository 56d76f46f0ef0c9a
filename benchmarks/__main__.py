"""Run every benchmark and print Markdown tables (`python -m benchmarks [--quick]`)."""

from __future__ import annotations

import platform
import sys

from benchmarks import step_throughput
from tunecore.core.schedulers.fifo import FIFOScheduler


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.node()}\n")
    print(step_throughput.run({"FIFO": FIFOScheduler}, quick=quick))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
