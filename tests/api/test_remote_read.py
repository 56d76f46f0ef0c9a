"""Reading an experiment straight from its URI (issue 11): the results
loader, `ExperimentAnalysis`, `Tuner.can_restore` and `Checkpoint`, on a
machine with nothing but the URI. The stored experiment is made the way a
mirrored run leaves it: a local run, its state shipped by `StateShipper`
and its checkpoints uploaded as workers do; then the local directory is
deleted, so only storage can answer."""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pyarrow.fs
import pytest

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore import (
    CheckpointConfig,
    ExperimentAnalysis,
    Result,
    ResultGrid,
    RunConfig,
    TuneConfig,
    Tuner,
)
from tunecore.model import JsonValue
from tunecore.shell.eventlog import LOG_FILE, LogError
from tunecore.shell.mirror.shipper import StateShipper
from tunecore.shell.storage.resolve import within

TARGETS = ["file_store", "s3_store"]
STEPS = 3


def counting(config: Mapping[str, JsonValue]) -> None:
    """`STEPS` results, each with a checkpoint holding its step."""
    for step in range(1, STEPS + 1):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state.json").write_text(json.dumps({"step": step}))
            score = step * float(str(config["x"]))
            tunecore.report(
                {"score": score}, checkpoint=tunecore.Checkpoint.from_directory(directory)
            )


def experiment_uri(target: StorageTarget, name: str) -> str:
    """`name` under the storage's URI, its query (the endpoint) kept last."""
    parts = urllib.parse.urlsplit(target.uri)
    return urllib.parse.urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{name}"))


def stored_experiment(target: StorageTarget, tmp_path: Path, name: str = "exp") -> str:
    """Run `counting` locally, put it in `target` as a mirrored run would,
    delete the local directory; the experiment's URI."""
    Tuner(
        counting,
        param_space={"x": tunecore.grid_search([1.0, 2.0])},
        tune_config=TuneConfig(metric="score", mode="max"),
        run_config=RunConfig(
            name=name,
            storage_path=str(tmp_path / "local"),
            checkpoint_config=CheckpointConfig(num_to_keep=2),
            verbose=0,
            executor="in_process",
        ),
    ).fit()
    local = tmp_path / "local" / name
    store = within(target.store, name)
    size = (local / LOG_FILE).stat().st_size
    StateShipper(store, local, lambda: size, lag_s=60.0).close()
    for checkpoint in local.glob("*/checkpoint_*"):
        rel = checkpoint.relative_to(local).as_posix()
        store.upload_dir(str(checkpoint), rel, marker=".tunecore_checkpoint.json")
    shutil.rmtree(local)
    return experiment_uri(target, name)


@pytest.fixture(autouse=True)
def _temporary_directory_per_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`to_directory()` without a destination makes a new temporary
    directory the caller owns: here, one pytest deletes."""
    scratch = tmp_path / "tempdir"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))


def step_of(directory: str) -> int:
    step = json.loads(Path(directory, "state.json").read_text())["step"]
    assert isinstance(step, int)
    return step


@pytest.mark.parametrize("target_name", TARGETS)
def test_results_read_from_a_uri_point_at_the_stored_checkpoints(
    target_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target: StorageTarget = request.getfixturevalue(target_name)
    uri = stored_experiment(target, tmp_path)

    grid = ResultGrid.from_path(uri)

    assert sorted(float(str(r.metrics["score"])) for r in grid) == [3.0, 6.0]
    assert grid.num_terminated == 2
    best = grid.get_best_result()
    assert best.config == {"x": 2.0}
    assert best.metrics_dataframe is not None
    assert list(best.metrics_dataframe["score"]) == [2.0, 4.0, 6.0]  # result.json, fetched
    assert best.checkpoint is not None
    if target.filesystem is None:  # file://: the stored directory, read in place
        assert best.checkpoint.path.startswith(str(target.store.uri()))
        assert grid.experiment_path == target.store.uri("exp")
    else:
        bucket = urllib.parse.urlsplit(target.uri).hostname
        assert best.checkpoint.path.startswith(f"s3://{bucket}/exp/")
        assert "testing:" not in best.checkpoint.path  # no credentials
        assert grid.experiment_path.startswith(f"s3://{bucket}/exp?")
        assert best.path.startswith(f"s3://{bucket}/exp/")
    assert "/checkpoint_000003" in best.checkpoint.path
    assert step_of(best.checkpoint.to_directory(tmp_path / "copy")) == STEPS
    with best.checkpoint.as_directory() as directory:
        assert step_of(directory) == STEPS
    assert [step_of(c.to_directory()) for c, _ in best.best_checkpoints] == [2, 3]
    assert len({c for c, _ in best.best_checkpoints}) == 2  # hashable, filesystem and all


@pytest.mark.parametrize("target_name", TARGETS)
def test_experiment_analysis_and_can_restore_take_a_uri(
    target_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target: StorageTarget = request.getfixturevalue(target_name)
    uri = stored_experiment(target, tmp_path)

    analysis = ExperimentAnalysis(uri)
    assert analysis.best_config == {"x": 2.0}
    assert analysis.best_checkpoint is not None
    assert step_of(analysis.best_checkpoint.to_directory()) == STEPS
    assert Tuner.can_restore(uri)
    assert not Tuner.can_restore(experiment_uri(target, "nothing_here"))


def test_a_path_in_a_storage_filesystem_reads_and_shows_as_that_path(
    s3_store: StorageTarget, tmp_path: Path
) -> None:
    stored_experiment(s3_store, tmp_path)
    bucket = urllib.parse.urlsplit(s3_store.uri).hostname
    grid = ResultGrid.from_path(f"{bucket}/exp", storage_filesystem=s3_store.filesystem)
    assert grid.experiment_path == f"{bucket}/exp"  # as Ray names it: `fs` takes it
    assert Tuner.can_restore(f"{bucket}/exp", storage_filesystem=s3_store.filesystem)
    checkpoint = grid.get_best_result().checkpoint
    assert checkpoint is not None
    assert step_of(checkpoint.to_directory()) == STEPS


def test_result_from_path_takes_a_trial_directory_in_storage(
    s3_store: StorageTarget, tmp_path: Path
) -> None:
    uri = stored_experiment(s3_store, tmp_path)
    best = ResultGrid.from_path(uri).get_best_result()
    bucket = urllib.parse.urlsplit(s3_store.uri).hostname
    trial_dir = Path(urllib.parse.urlsplit(best.path).path).name  # the URI ends in its query
    by_uri = Result.from_path(uri.replace("/exp?", f"/exp/{trial_dir}?"))
    in_filesystem = Result.from_path(
        f"{bucket}/exp/{trial_dir}", storage_filesystem=s3_store.filesystem
    )
    for loaded in (by_uri, in_filesystem):
        assert (loaded.trial_id, loaded.config, loaded.metrics) == (
            best.trial_id,
            best.config,
            best.metrics,
        )
        assert loaded.checkpoint is not None
        assert step_of(loaded.checkpoint.to_directory()) == STEPS


@pytest.mark.parametrize("target_name", TARGETS)
def test_a_uri_with_no_experiment_is_named(
    target_name: str, request: pytest.FixtureRequest
) -> None:
    target: StorageTarget = request.getfixturevalue(target_name)
    missing = experiment_uri(target, "nothing_here")
    with pytest.raises(LogError, match="holds no tunecore experiment") as raised:
        ResultGrid.from_path(missing)
    assert "nothing_here" in str(raised.value)
    assert not Tuner.can_restore(missing)
    assert not Tuner.can_restore(target.uri)  # the storage root: no experiment either


def test_a_checkpoint_uri_alone_is_enough_with_credentials_from_the_environment(
    s3_store: StorageTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Checkpoint.path` holds no credentials and the filesystem is never
    persisted: a Checkpoint rebuilt from the path alone resolves the URI
    again, credentials coming from the environment as pyarrow reads them."""
    uri = stored_experiment(s3_store, tmp_path)
    checkpoint = ResultGrid.from_path(uri).get_best_result().checkpoint
    assert checkpoint is not None
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    again = tunecore.Checkpoint(checkpoint.path)
    assert step_of(again.to_directory()) == STEPS


def test_rays_checkpoint_spelling_with_a_filesystem(
    s3_store: StorageTarget, tmp_path: Path
) -> None:
    source = tmp_path / "mine"
    source.mkdir()
    (source / "state.json").write_text(json.dumps({"step": 7}))
    s3_store.store.upload_dir(str(source), "somewhere/ckpt")
    bucket = urllib.parse.urlsplit(s3_store.uri).hostname
    checkpoint = tunecore.Checkpoint(f"{bucket}/somewhere/ckpt", filesystem=s3_store.filesystem)
    with checkpoint.as_directory() as directory:
        assert step_of(directory) == 7
        downloaded = directory
    assert not Path(downloaded).exists()  # a download is removed after use
    missing = tunecore.Checkpoint(f"{bucket}/nowhere", filesystem=s3_store.filesystem)
    left_before = sorted(Path(tempfile.gettempdir()).iterdir())
    with pytest.raises(FileNotFoundError, match="nowhere"):
        missing.to_directory()
    assert sorted(Path(tempfile.gettempdir()).iterdir()) == left_before  # nothing left behind


def test_a_checkpoint_persists_its_path_only_never_its_filesystem(
    s3_store: StorageTarget, tmp_path: Path
) -> None:
    local = tunecore.Checkpoint.from_directory(tmp_path)
    assert msgspec.json.decode(msgspec.json.encode(local)) == {"path": str(tmp_path)}
    remote = tunecore.Checkpoint("bucket/x", filesystem=s3_store.filesystem)
    with pytest.raises(TypeError):
        msgspec.json.encode(remote)


def test_a_file_uri_of_an_experiment_run_with_a_plain_path_is_read_in_place(
    tmp_path: Path,
) -> None:
    Tuner(
        counting,
        param_space={"x": 1.0},
        run_config=RunConfig(
            name="exp", storage_path=str(tmp_path), verbose=0, executor="in_process"
        ),
    ).fit()
    grid = ResultGrid.from_path(f"file://{tmp_path}/exp")
    assert grid.experiment_path == str(tmp_path / "exp")
    checkpoint = grid[0].checkpoint
    assert checkpoint is not None
    assert checkpoint.path.startswith(str(tmp_path / "exp"))
    assert Tuner.can_restore(f"file://{tmp_path}/exp")


@pytest.mark.parametrize("target_name", TARGETS)
def test_a_mirrored_fit_and_a_restored_tuner_give_results_in_storage(
    target_name: str, request: pytest.FixtureRequest
) -> None:
    target: StorageTarget = request.getfixturevalue(target_name)
    grid = Tuner(
        counting,
        param_space={"x": 1.0},
        run_config=RunConfig(name="exp", storage_path=target.uri, verbose=0, executor="in_process"),
    ).fit()
    uri = experiment_uri(target, "exp")
    for results in (grid, Tuner.restore(uri, counting).get_results()):
        checkpoint = results[0].checkpoint
        assert checkpoint is not None
        if target.filesystem is None:
            assert results.experiment_path == target.store.uri("exp")
        else:
            assert results.experiment_path == uri.replace("testing:testing@", "")
        assert checkpoint.path.startswith(str(results.experiment_path).partition("?")[0])
        assert step_of(checkpoint.to_directory()) == STEPS


@pytest.mark.parametrize("target_name", TARGETS)
def test_results_from_a_uri_are_on_the_storages_filesystem(
    target_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target: StorageTarget = request.getfixturevalue(target_name)
    grid = ResultGrid.from_path(stored_experiment(target, tmp_path))

    result = grid.get_best_result()
    if target.filesystem is None:  # file://: a local directory, named by its path
        assert isinstance(result.filesystem, pyarrow.fs.LocalFileSystem)
        fs_path = str(result.path)
    else:  # the filesystem the URI resolved to; the path is a URI (its query last)
        assert isinstance(result.filesystem, pyarrow.fs.S3FileSystem)
        parts = urllib.parse.urlsplit(result.path)
        fs_path = parts.netloc + parts.path
    assert grid.filesystem.type_name == result.filesystem.type_name
    with result.filesystem.open_input_file(f"{fs_path}/result.json") as file:
        rows = [json.loads(line) for line in file.read().decode().splitlines()]
    assert [row["score"] for row in rows] == [2.0, 4.0, 6.0]
