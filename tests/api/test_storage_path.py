"""Where `RunConfig(storage_path=...)` puts an experiment (issue 11): a
path as `str` or `os.PathLike` is a local directory; a `file://` URI the
directory it names (as mirrored storage); a URI of a scheme pyarrow knows
is kept as it is; any other is refused with an error naming it, never a
directory named `s3:`. Ray's `storage_filesystem` must be a
`pyarrow.fs.FileSystem` with a `storage_path` inside it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow.fs
import pydantic
import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.cli import main
from tunecore.model import JsonValue


def train(config: Mapping[str, JsonValue]) -> None:
    tunecore.report({"loss": 1.0})


def fit(storage_path: object) -> Path:
    [result] = Tuner(
        train,
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(
            name="where",
            storage_path=storage_path,  # type: ignore[arg-type]
            verbose=0,
            executor="in_process",
        ),
    ).fit()
    assert result.path is not None
    return Path(result.path)


def test_a_pathlib_path_is_a_local_directory(tmp_path: Path) -> None:
    trial_dir = fit(tmp_path / "results")
    assert trial_dir.parent == tmp_path / "results" / "where"
    assert (tmp_path / "results" / "where" / "events.log").is_file()


def test_a_file_uri_is_the_local_directory_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, staging: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    trial_dir = fit(f"file://{tmp_path}/shared%20mount")
    assert trial_dir.parent == tmp_path / "shared mount" / "where"
    assert not (tmp_path / "file:").exists()


def test_a_relative_path_is_kept_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert RunConfig(storage_path="results").storage_path == str(tmp_path / "results")


@pytest.mark.parametrize(
    ("storage_path", "message"),
    [
        ("foo://x/y", "unknown scheme 'foo'"),
        ("s3:/bucket/x", "needs '://' after its scheme"),
        ("file://elsewhere/x", "not one on the host 'elsewhere'"),
        (3, "must be a non-empty str, os.PathLike or URI"),
    ],
)
def test_other_storage_is_refused_naming_the_field_and_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, storage_path: object, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pydantic.ValidationError, match=message) as raised:
        RunConfig(storage_path=storage_path)  # type: ignore[arg-type]
    assert "storage_path" in str(raised.value)
    assert os.listdir(tmp_path) == []  # nothing written, no directory named "s3:"


@pytest.mark.parametrize("uri", ["s3://bucket/x", "gs://bucket/x", "hdfs://namenode:8020/x"])
def test_a_uri_pyarrow_knows_is_kept_as_given(uri: str) -> None:
    assert RunConfig(storage_path=uri).storage_path == uri


def test_a_filesystem_object_goes_with_a_path_inside_it(tmp_path: Path) -> None:
    filesystem = pyarrow.fs.LocalFileSystem()
    config = RunConfig(storage_path=str(tmp_path), storage_filesystem=filesystem)
    assert config.storage_filesystem is filesystem
    with pytest.raises(pydantic.ValidationError, match="needs a storage_path"):
        RunConfig(storage_filesystem=filesystem)


def test_a_path_inside_a_storage_filesystem_stays_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray users write `storage_path="bucket/runs"` with an `S3FileSystem`:
    a path in that filesystem, not a directory under the working one."""
    monkeypatch.chdir(tmp_path)
    filesystem = pyarrow.fs.LocalFileSystem()
    config = RunConfig(storage_path="bucket/runs", storage_filesystem=filesystem)
    assert config.storage_path == "bucket/runs"
    assert RunConfig(storage_path="runs").storage_path == str(tmp_path / "runs")


def test_a_storage_filesystem_that_is_no_filesystem_is_named(tmp_path: Path) -> None:
    with pytest.raises(
        pydantic.ValidationError, match=r"storage_filesystem must be a pyarrow.fs.FileSystem"
    ) as raised:
        RunConfig(storage_path=str(tmp_path), storage_filesystem="s3")
    assert "'s3'" in str(raised.value)


def test_the_cli_names_its_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "tests.api.test_storage_path:train", "--storage-path", "foo://bucket/x"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--storage-path foo://bucket/x: unknown scheme 'foo'" in err
    assert err.count("storage") == 1  # the flag, named once


def test_run_config_local_dir_is_refused_as_ray_2_60_refuses_it(tmp_path: Path) -> None:
    """Ray 2.60's `RunConfig(local_dir=...)` raises DeprecationWarning
    naming `storage_path` (a user's `air.RunConfig(local_dir=...)`,
    docs/ray-examples.md); tunecore said only "Extra inputs are not
    permitted". The text is Ray's, word for word; `local_dir=None` is the
    field's default there, given by keyword or as the twelfth positional
    argument. `tune.run(local_dir=...)` still maps onto storage_path."""
    with pytest.raises(DeprecationWarning) as refused:
        RunConfig(local_dir=str(tmp_path))  # type: ignore[call-arg]
    assert str(refused.value) == (
        "The `RunConfig(local_dir)` argument is deprecated. You should set the "
        "`RunConfig(storage_path)` instead.See the docs: https://docs.ray.io/en/latest/train/"
        "user-guides/persistent-storage.html#setting-the-local-staging-directory"
    )
    positional: Any = RunConfig  # Ray's twelve fields in order, the last `local_dir`
    with pytest.raises(DeprecationWarning, match=r"RunConfig\(local_dir\)"):
        positional(*[None] * 6, 1, None, [], None, False, str(tmp_path))
    assert RunConfig(local_dir=None, name="x") == RunConfig(name="x")  # type: ignore[call-arg]
