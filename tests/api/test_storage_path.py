"""Where `RunConfig(storage_path=...)` puts an experiment (issue 11, first
part): a path as `str` or `os.PathLike`, or a `file://` URI, is a local
directory; a URI of another scheme is refused with an error naming it
(until storage through pyarrow.fs is built), never a directory named
`s3:`; so is Ray's `storage_filesystem`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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
        ("s3://bucket/x", "storage on s3:// is not supported yet"),
        ("gs://bucket/x", "storage on gs:// is not supported yet"),
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


def test_a_filesystem_object_is_refused_until_it_is_supported() -> None:
    filesystem = pyarrow.fs.LocalFileSystem()
    with pytest.raises(
        pydantic.ValidationError, match=r"storage_filesystem=LocalFileSystem\("
    ) as e:
        RunConfig(storage_filesystem=filesystem)
    assert "not supported yet" in str(e.value)


def test_the_cli_names_its_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "tests.api.test_storage_path:train", "--storage-path", "s3://bucket/x"])
    assert code == 2
    assert "--storage-path='s3://bucket/x' is invalid" in capsys.readouterr().err
