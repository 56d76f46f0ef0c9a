"""`TrainContext.get_storage()`: a trial's place in its storage, under the
names of Ray's `StorageContext`, for a local directory, `file://` and S3."""

from __future__ import annotations

import posixpath
import sys
from pathlib import Path

import pyarrow.fs
import pytest

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore import RunConfig, Tuner
from tunecore.shell.storage.arrow_store import ArrowStore
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.trainable.trial_storage import TrialStorage

NAMES = ("storage_fs_path", "experiment_dir_name", "trial_dir_name")
PATHS = ("experiment_fs_path", "trial_fs_path")


def reports_its_storage(config: dict[str, object]) -> None:
    storage = tunecore.get_context().get_storage()
    tunecore.report(
        {name: getattr(storage, name) for name in NAMES + PATHS}
        | {"filesystem": storage.storage_filesystem.type_name}
    )


def fit_reporting_storage(storage_path: str) -> tunecore.Result:
    [result] = Tuner(
        reports_its_storage,
        run_config=RunConfig(
            name="exp", storage_path=storage_path, verbose=0, executor="in_process"
        ),
    ).fit()
    assert result.error is None
    return result


def storage(
    target_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> tuple[str, str, pyarrow.fs.FileSystem]:
    """The `storage_path` to run with, its path in its filesystem, and a
    filesystem that reaches it from the test."""
    if target_name == "local":
        return str(tmp_path / "runs"), str(tmp_path / "runs"), pyarrow.fs.LocalFileSystem()
    target: StorageTarget = request.getfixturevalue(target_name)
    if isinstance(target.store, ArrowStore):
        assert target.filesystem is not None
        return target.uri, target.store.base, target.filesystem
    assert isinstance(target.store, LocalStore)
    return target.uri, target.store.local_path(""), pyarrow.fs.LocalFileSystem()


@pytest.mark.parametrize("target_name", ["local", "file_store", "s3_store"])
def test_the_trial_finds_its_files_where_get_storage_says(
    target_name: str, tmp_path: Path, staging: Path, request: pytest.FixtureRequest
) -> None:
    storage_path, fs_root, filesystem = storage(target_name, tmp_path, request)

    seen = fit_reporting_storage(storage_path).metrics

    trial_dir_name = str(seen["trial_dir_name"])
    assert trial_dir_name.startswith("reports_its_storage_")
    assert (seen["storage_fs_path"], seen["experiment_dir_name"]) == (fs_root, "exp")
    assert seen["experiment_fs_path"] == posixpath.join(fs_root, "exp")
    assert seen["trial_fs_path"] == posixpath.join(fs_root, "exp", trial_dir_name)
    assert seen["filesystem"] == filesystem.type_name
    result_file = posixpath.join(str(seen["trial_fs_path"]), "result.json")
    assert filesystem.get_file_info(result_file).type == pyarrow.fs.FileType.File


def test_the_storage_filesystem_without_pyarrow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.fs", None)
    trial_storage = TrialStorage.of(str(tmp_path / "exp"), str(tmp_path / "exp" / "t"), None)
    assert trial_storage.trial_fs_path == f"{tmp_path.as_posix()}/exp/t"
    with pytest.raises(ImportError, match=r"tunecore\[storage\]"):
        _ = trial_storage.storage_filesystem
