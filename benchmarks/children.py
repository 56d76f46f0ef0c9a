"""One benchmark run in a fresh interpreter (a fresh Ray, no state left by
an earlier run): the child prints one `BENCH_RESULT {json}` line among
whatever Ray and the frameworks print, and the parent finds it."""

from __future__ import annotations

import compileall
import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks import scratch

MARKER = "BENCH_RESULT "


def emit(data: Mapping[str, Any]) -> None:
    """The child's one result line."""
    print(MARKER + json.dumps(data), flush=True)


def peak_rss_kib() -> float:
    """This process's peak RSS in KiB: `VmHWM`, which starts afresh at exec.
    (`ru_maxrss` does not: a child started by a parent that once held 276
    MB reports at least that, whatever it uses itself.)"""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return float(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


@dataclass(frozen=True)
class Child:
    """A child's result line (None if it has none), or why not, and its output."""

    data: dict[str, Any] | None
    problem: str | None
    stdout: str = ""
    stderr: str = ""


@functools.cache
def compile_tunecore() -> None:
    """Write tunecore's bytecode files once, before any child starts. A pip
    install compiles them, and Python writes them at the first import; but
    under `PYTHONDONTWRITEBYTECODE=1` (set on the benchmark machines) an
    editable install is compiled from source again in every process: the
    driver and each Ray worker, 0.1 to 0.2 s each. Ray's own modules come
    compiled from their wheel, so without this the comparison would charge
    tunecore alone for its compiler."""
    import tunecore  # noqa: PLC0415 - the package whose files are compiled

    compileall.compile_dir(os.path.dirname(tunecore.__file__), quiet=1)


def preload_tunecore() -> None:
    """Import the tunecore names a run uses. The package imports a name at
    its first use; `import ray.tune` imports Ray Tune's Tuner at once, so a
    benchmark calls this before its clock starts, as it imports Ray Tune
    before its clock."""
    import tunecore  # noqa: PLC0415 - imported when a child asks

    _ = tunecore.Tuner, tunecore.TuneConfig, tunecore.RunConfig


def preload_ray_serializers() -> None:
    """Import, before `ray.init`, what Ray's serializers import when they
    are set up at the first object stored: pyarrow, and numpy with it.

    Loading numpy starts OpenBLAS's threads, which spin on a core for about
    0.1 s before they sleep (measured: 95 ms of CPU in a thread Python does
    not see). `import ray.tune` imports numpy, so for Ray Tune that spin
    ends during `ray.init`; a tunecore driver imports numpy only with Ray's
    serializers, just before the clock, and 60-70 ms of the spin fell
    inside its timed span, on cores its workers needed (`docs/speed.md`,
    "The fourteenth profile"). Imported here, it ends before the clock for
    both. Without pyarrow, Ray's serializers import neither."""
    with contextlib.suppress(ImportError):
        import pyarrow  # noqa: F401, PLC0415 - what Ray's set-up would import


def run_child(
    module: str,
    args: Sequence[str],
    timeout_s: float,
    tail_lines: int = 15,
    exit_codes: Sequence[int] = (0,),
) -> Child:
    """Run `python -m module args...` from the repository root, with Ray's
    usage reporting off and tunecore's bytecode compiled, and parse its
    result line; a child that exits with a code not in `exit_codes` (a
    negative one is the signal that ended it), or prints no result line, is
    a `problem` with the end of its output.

    The child writes its files under this process's scratch root
    (`benchmarks.scratch`), made here if there is none yet: a child that
    made its own would delete its files as it exits, right before the next
    child's run.

    The child runs in a session of its own, and whatever is left in it when
    the child has exited is ended (`end_group`): a driver that dies without
    `ray.shutdown()` (killed, or `os._exit`) leaves Ray's agent processes
    behind, which would hold memory and CPU through the later runs."""
    compile_tunecore()
    scratch.root()  # the children inherit it through the environment
    repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    process = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=repository,
        env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        end_group(process.pid)
        process.communicate()
        return Child(None, f"timed out after {timeout_s:.0f} s")
    finally:
        end_group(process.pid)
    lines = [line for line in stdout.splitlines() if line.startswith(MARKER)]
    if process.returncode not in exit_codes or not lines:
        tail = "\n".join((stderr or stdout).strip().splitlines()[-tail_lines:])
        return Child(None, f"exit code {process.returncode}:\n{tail}", stdout, stderr)
    return Child(json.loads(lines[-1][len(MARKER) :]), None, stdout, stderr)


def end_group(leader: int) -> None:
    """SIGKILL what is left of the process group `leader` started (the
    child ran in a session of its own: the group holds only the processes
    it started); nothing if none is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGKILL)
