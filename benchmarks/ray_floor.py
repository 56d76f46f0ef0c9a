"""Ray's own floor for a round trip on this machine: what no framework on
Ray can go below for one result that waits for its answer.

Measured in a fresh interpreter with a fresh `ray.init(num_cpus=2)`, as the
comparison children are: an actor method that returns its argument, called
and waited for 2,000 times on one actor, then on two actors kept busy
through `ray.wait` (as a driver with two running trials does).

    python -m benchmarks.ray_floor
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from benchmarks.children import emit, run_child

CALLS = 2_000


def child() -> None:
    import ray  # noqa: PLC0415

    ray.init(num_cpus=2, include_dashboard=False)

    @ray.remote
    class Echo:
        def echo(self, value: object = None) -> object:
            return value

    actors = [Echo.remote() for _ in range(2)]  # type: ignore[attr-defined]
    ray.get([a.echo.remote() for a in actors])
    started = time.perf_counter()
    for _ in range(CALLS):
        ray.get(actors[0].echo.remote())
    one = (time.perf_counter() - started) / CALLS
    started = time.perf_counter()
    pending = {a.echo.remote(): a for a in actors}
    for _ in range(CALLS):
        ready, _ = ray.wait(list(pending), num_returns=1)
        actor = pending.pop(ready[0])
        ray.get(ready[0])
        pending[actor.echo.remote()] = actor
    two = (time.perf_counter() - started) / CALLS
    ray.shutdown()
    emit({"one_ms": one * 1e3, "two_ms": two * 1e3})


def run() -> str:
    child = run_child("benchmarks.ray_floor", ["--child"], timeout_s=600.0)
    if child.data is None:
        return f"Ray's floor: the child failed: {child.problem}"
    data = child.data
    return "\n".join(
        [
            "### Ray's floor: an actor call that returns at once",
            "",
            "| calls | ms per call |",
            "|---|---:|",
            f"| one actor, call then `ray.get` ({CALLS:,} times) | {data['one_ms']:.2f} |",
            f"| two actors kept busy through `ray.wait` | {data['two_ms']:.2f} |",
        ]
    )


def main(argv: Sequence[str]) -> int:
    if "--child" in argv:
        child()
        return 0
    print(run())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
