"""Where the benchmarks keep a run's files: every run of a session under one
root that outlives the runs (deleting a run's files right away makes the
next run's file creation slow on the benchmark machines' disk), shared with
child processes, and deleted when the process that made it exits."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from benchmarks import children, scratch


@pytest.fixture
def fresh_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Recorded first, so the root a test makes is not left to the next one.
    monkeypatch.setenv(scratch.SCRATCH_ENV, "")
    monkeypatch.delenv(scratch.SCRATCH_ENV)
    scratch.root.cache_clear()
    yield
    scratch.root.cache_clear()


def test_runs_get_their_own_directories_under_the_inherited_root(
    fresh_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(scratch.SCRATCH_ENV, str(tmp_path))
    first, second = scratch.run_dir("bench-a-"), scratch.run_dir("bench-a-")
    assert first != second
    for made in (first, second):
        assert Path(made).parent == tmp_path
        assert Path(made).name.startswith("bench-a-")
        assert os.listdir(made) == []


def test_a_root_made_here_is_shared_with_children_and_deleted_at_exit(tmp_path: Path) -> None:
    """The parent makes the root, a child it starts writes under the same
    root, and the root (with both runs' files) is gone once the parent exits."""
    program = (
        "import os, subprocess, sys\n"
        "from benchmarks.scratch import root, run_dir\n"
        "mine = run_dir('parent-')\n"
        "theirs = subprocess.run([sys.executable, '-c', "
        "'from benchmarks.scratch import run_dir; print(run_dir(\"child-\"))'], "
        "capture_output=True, text=True, check=True).stdout.strip()\n"
        "print(root()); print(mine); print(theirs)\n"
        "print(os.path.isdir(theirs))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != scratch.SCRATCH_ENV}
    repo = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(repo), env.get("PYTHONPATH", "")])
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True
    )
    root, mine, theirs, child_dir_kept = done.stdout.split()
    assert Path(root).parent == tmp_path
    assert Path(mine).parent == Path(root)
    assert Path(theirs).parent == Path(root)
    assert child_dir_kept == "True"  # the child's exit deleted nothing
    assert not Path(root).exists()


def test_every_child_a_benchmark_starts_writes_under_the_starters_root(
    fresh_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run_child` makes the root before the first child starts, so the
    children share one root that outlives them (a child that made its own
    would delete its run's files as it exits, right before the next run)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    monkeypatch.setattr(children, "compile_tunecore", lambda: None)
    # A real child, found through PYTHONPATH, that reports the root it was given.
    (tmp_path / "scratch_probe.py").write_text(
        "import json, os\n"
        f"root = os.environ[{scratch.SCRATCH_ENV!r}]\n"
        f"print({children.MARKER!r} + json.dumps({{'root': root}}))\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    seen = []
    for _ in range(2):
        data = children.run_child("scratch_probe", [], timeout_s=60.0).data
        assert data is not None
        seen.append(data["root"])
    assert seen == [scratch.root(), scratch.root()]
    assert Path(seen[0]).parent == tmp_path
    assert Path(seen[0]).is_dir()
