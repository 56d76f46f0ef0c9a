"""A worker that does not see the driver's experiment directory refuses the
trial at once (issue 11: on a cluster without a shared storage_path,
trials wrote to their node's own disk and the driver found empty
checkpoints, with nothing said)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore
from tunecore import RunConfig, Tuner
from tunecore.model import JsonValue
from tunecore.shell.storage import shared_storage
from tunecore.shell.storage.shared_storage import TOKEN_FILE, StorageNotSharedError


def test_the_token_a_run_claims_is_the_one_its_workers_find(tmp_path: Path) -> None:
    token = shared_storage.claim(tmp_path)
    shared_storage.check(str(tmp_path), token)
    assert shared_storage.claim(tmp_path) != token  # every run its own


def test_a_directory_this_node_does_not_have_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StorageNotSharedError, match="does not exist here on node"):
        shared_storage.check(str(tmp_path / "elsewhere"), "abc")


def test_a_stale_copy_of_the_directory_is_refused(tmp_path: Path) -> None:
    """What an earlier run left on a node's own disk passes no better than
    nothing: its token is another run's."""
    shared_storage.claim(tmp_path)
    with pytest.raises(StorageNotSharedError, match="its token differs"):
        shared_storage.check(str(tmp_path), "this run's token")


def test_a_token_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("abc\n")
    (tmp_path / TOKEN_FILE).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StorageNotSharedError, match="symbolic link"):
        shared_storage.check(str(tmp_path), "abc")


def reports(config: Mapping[str, JsonValue]) -> None:
    tunecore.report({"loss": 1.0})


def test_a_trial_whose_worker_does_not_see_the_directory_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one process every worker sees the directory; a claim that writes
    no token plays the node with a disk of its own."""
    monkeypatch.setattr(shared_storage, "claim", lambda directory: "a token never written")
    [result] = Tuner(
        reports,
        run_config=RunConfig(
            name="exp", storage_path=str(tmp_path), verbose=0, executor="in_process"
        ),
    ).fit()
    assert result.error is not None
    assert "does not share the driver's storage_path" in str(result.error)
    assert str(tmp_path / "exp") in str(result.error)
