"""`Tuner.restore(path, storage_filesystem=fs)` with `path` inside `fs`
(Ray's tune-storage guide: `storage_path="bucket/sub-path"` on a pyarrow
filesystem, then the experiment restored by its path there). A relative
path used to be made absolute against the working directory, so the
restore looked for the log in a place the filesystem never wrote."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pyarrow.fs
import pytest

import tunecore
from tunecore import CheckpointConfig, RunConfig, TuneConfig, Tuner
from tunecore.model import JsonValue
from tunecore.shell.storage.resolve import split_experiment


def stepping(config: Mapping[str, JsonValue]) -> None:
    """Reports steps 1-3 with a checkpoint each, failing once at step 2
    when `fail` is set and it started from nothing."""
    start = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = json.loads(Path(directory, "state.json").read_text())["step"]
    for step in range(start + 1, 4):
        if config["fail"] and step == 2 and checkpoint is None:
            raise RuntimeError("planned failure at step 2")
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state.json").write_text(json.dumps({"step": step}))
            tunecore.report(
                {"step": step, "started_at": start},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def test_a_relative_path_inside_the_filesystem_is_restored_from_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = tmp_path / "bucket"
    bucket.mkdir()
    monkeypatch.setenv("TUNECORE_STAGING", str(tmp_path / "staging"))
    monkeypatch.chdir(tmp_path)  # where the relative path would land if made absolute
    # pyarrow ships the class; its type stubs do not list it
    fs = pyarrow.fs.SubTreeFileSystem(str(bucket), pyarrow.fs.LocalFileSystem())  # type: ignore[attr-defined]
    grid = Tuner(
        stepping,
        param_space={"fail": True},
        tune_config=TuneConfig(metric="step", mode="max"),
        run_config=RunConfig(
            storage_filesystem=fs,
            storage_path="experiments",
            name="guide",
            checkpoint_config=CheckpointConfig(num_to_keep=1),
            verbose=0,
            executor="in_process",
        ),
    ).fit()
    assert grid.errors
    assert (bucket / "experiments" / "guide" / "events").is_dir()

    assert Tuner.can_restore("experiments/guide", storage_filesystem=fs)
    restored = Tuner.restore(
        "experiments/guide", trainable=stepping, storage_filesystem=fs, resume_errored=True
    ).fit()
    [result] = list(restored)
    assert result.error is None
    assert (result.metrics["step"], result.metrics["started_at"]) == (3, 1)
    assert not (tmp_path / "experiments").exists(), "nothing went to the working directory"

    # The places are paths inside `fs`, as Ray names them, so `fs` reads them.
    assert restored.experiment_path == "experiments/guide"
    assert result.path.startswith("experiments/guide/")
    assert fs.get_file_info(result.path).type == pyarrow.fs.FileType.Directory
    assert result.checkpoint is not None
    assert result.checkpoint.path.startswith(result.path + "/checkpoint_")
    with result.checkpoint.as_directory() as directory:
        assert json.loads(Path(directory, "state.json").read_text()) == {"step": 3}
    read_back = tunecore.ResultGrid.from_path("experiments/guide", storage_filesystem=fs)
    assert [r.path for r in read_back] == [result.path]


def test_a_path_inside_a_filesystem_is_split_as_written() -> None:
    assert split_experiment("bucket/runs/exp", in_filesystem=True) == ("bucket/runs", "exp")
    assert split_experiment("/runs/exp/", in_filesystem=True) == ("/runs", "exp")
    assert split_experiment("~/runs/exp", in_filesystem=True) == ("~/runs", "exp")


def test_a_bare_name_inside_a_filesystem_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="'exp' names no experiment directory inside"):
        split_experiment("exp", in_filesystem=True)
