"""`python -m benchmarks`: its flags are read like any command's, so
`--help` and a misspelt flag never start the full run (minutes of Ray)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HELP_TIMEOUT_S = 60.0
"""Far more than printing the usage takes; the full run takes many minutes."""


def benchmarks(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=HELP_TIMEOUT_S,
    )


def test_help_prints_the_usage_and_runs_nothing() -> None:
    done = benchmarks("--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m benchmarks")
    assert "--skip-ray-tune" in done.stdout
    assert "search_quality" in done.stdout  # the benchmarks run only when named
    assert "Python " not in done.stdout  # the full run's first line


@pytest.mark.parametrize("flag", ["--bogus", "--skip-ray", "--quik"])
def test_an_unknown_flag_exits_with_2_naming_it(flag: str) -> None:
    done = benchmarks(flag)
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"unrecognized arguments: {flag}" in done.stderr
