"""Fixtures of the tests of a worker's way to a mirrored experiment's
storage (test_persist.py, test_output_fence.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.storage_fixtures import StorageTarget
from tunecore.shell.executors.host import TrialHost


@pytest.fixture(params=["file", "s3"])
def storage(request: pytest.FixtureRequest) -> StorageTarget:
    target: StorageTarget = request.getfixturevalue(f"{request.param}_store")
    return target


@pytest.fixture
def driver_dir(tmp_path: Path) -> Path:
    """The driver's experiment directory: never created on this 'node'."""
    return tmp_path / "driver" / "exp"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "scratch"
    monkeypatch.setenv("TUNECORE_SCRATCH", str(root))
    return root


@pytest.fixture
def hosts() -> Iterator[list[TrialHost]]:
    made: list[TrialHost] = []
    yield made
    for host in made:
        host.release()
