"""A worker's side of `fit()` with a URI `storage_path` (issue 11): the
trainable works in node-local scratch, never in the driver's staging
directory, and what it leaves (checkpoints, `log_to_file` output,
exports) is in the storage, where a restore after a failure finds it.
In-process executor, on `file://` and on a local S3 server."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore import CheckpointConfig, FailureConfig, RunConfig, TuneConfig, Tuner
from tunecore.model import JsonDict


class Learner(tunecore.Trainable):
    """Counts to 4 and fails once at step 3; checkpoints its count in a
    file; prints where it works; exports a `model` file."""

    def setup(self, config: JsonDict) -> None:
        self.count = 0
        self.restored = 0

    def step(self) -> Mapping[str, object]:
        self.count += 1
        print(f"step {self.count} in {os.getcwd()}")
        if self.count == 3 and not self.restored:
            raise RuntimeError("planned failure at step 3")
        return {
            "count": self.count,
            "restored": self.restored,
            "logdir": self.logdir,
            "done": self.count >= 4,
        }

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        Path(checkpoint_dir, "count.txt").write_text(str(self.count))

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        assert isinstance(checkpoint, str)
        self.count = self.restored = int(Path(checkpoint, "count.txt").read_text())

    def export_model(self, export_formats: list[str], export_dir: str) -> dict[str, str]:
        path = Path(export_dir, "model.txt")
        path.write_text(f"model at {self.count}")
        return {"model": str(path)}


@pytest.fixture(params=["file_store", "s3_store"])
def target(request: pytest.FixtureRequest) -> StorageTarget:
    given: StorageTarget = request.getfixturevalue(request.param)
    return given


def test_the_trainable_works_in_scratch_and_its_files_reach_the_storage(
    target: StorageTarget, staging: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    monkeypatch.setenv("TUNECORE_SCRATCH", str(scratch))
    [result] = list(
        Tuner(
            Learner,
            tune_config=TuneConfig(chdir_to_trial_dir=True),
            run_config=RunConfig(
                name="exp",
                storage_path=target.uri,
                checkpoint_config=CheckpointConfig(checkpoint_frequency=2),
                failure_config=FailureConfig(max_failures=1),
                log_to_file="output.txt",
                export_formats=["model"],
                verbose=0,
                executor="in_process",
            ),
        ).fit()
    )
    assert result.error is None
    assert result.metrics["count"] == 4
    assert result.metrics["restored"] == 2  # from checkpoint_000002, downloaded
    logdir = Path(str(result.metrics["logdir"]))
    assert scratch in logdir.parents
    store = target.store
    [trial] = [name for name in store.list("exp") if name.startswith("Learner_")]
    assert logdir.name == trial
    assert store.read_bytes(f"exp/{trial}/checkpoint_000002/count.txt") == b"2"
    assert store.read_bytes(f"exp/{trial}/export/model.txt") == b"model at 4"
    output = store.read_bytes(f"exp/{trial}/output.txt").decode().splitlines()
    # both runs of the trial, the first one's output kept, all in scratch
    assert [line.split(" in ")[0] for line in output] == [
        "step 1",
        "step 2",
        "step 3",
        "step 3",
        "step 4",
    ]
    cwds = [Path(line.split(" in ")[1]) for line in output]
    assert cwds[-1] == logdir
    assert all(scratch in cwd.parents and cwd.name == trial for cwd in cwds)
    # nothing of the trainable's reached the staging directory
    assert not list(staging.rglob("output.txt"))
    assert not list(staging.rglob("export"))
    assert not logdir.exists()  # the trial's last stay in scratch ended with fit()
