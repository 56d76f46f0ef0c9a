"""On Ray, a trial's context carries the experiment's store to the actor
(pickled with an `S3FileSystem` inside), and the actor saves to and
restores from S3 itself, without the driver's directory (issue 11)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import tunecore
from tests.integration import trainables
from tests.storage_fixtures import StorageTarget
from tunecore.model import (
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ExperimentEvent,
    JsonDict,
    Resources,
    ResultReported,
    TrialFailed,
    TrialRestored,
)
from tunecore.shell.executors.ray import RayExecutor
from tunecore.shell.storage.resolve import within
from tunecore.shell.trainable import make_worker_trainable
from tunecore.shell.trainable.worker import TrialContext, WorkerTrainable

pytestmark = pytest.mark.usefixtures("ray_cluster")


def counter(config: JsonDict, context: TrialContext) -> WorkerTrainable:
    return make_worker_trainable(trainables.Counter, config, context)


def wait_for(executor: RayExecutor, kind: type) -> list[ExperimentEvent]:
    events: list[ExperimentEvent] = []
    deadline = time.monotonic() + 60
    while not any(isinstance(e, kind | TrialFailed) for e in events):
        assert time.monotonic() < deadline, events
        events.extend(executor.next_events(1.0))
    return events


def test_a_ray_actor_saves_to_and_restores_from_s3(s3_store: StorageTarget, tmp_path: Path) -> None:
    driver_dir = tmp_path / "driver" / "exp"  # never made: the actor must not need it
    context = TrialContext(
        trial_id="t1",
        trial_name="t1",
        trial_dir=str(driver_dir / "t1"),
        experiment_dir=str(driver_dir),
        storage_token="feedc0de" * 4,
        store=within(s3_store.store, "exp"),
    )
    checkpoint_dir = str(driver_dir / "t1" / "checkpoint_000002")
    executor = RayExecutor(counter)
    try:
        executor.start("t1", Resources(cpu=1), {}, context, None)
        wait_for(executor, ResultReported)
        executor.train("t1")
        wait_for(executor, ResultReported)
        executor.save("t1", checkpoint_dir, 2, {})
        [saved] = wait_for(executor, CheckpointSaved)
        assert isinstance(saved, CheckpointSaved), saved
        assert saved.checkpoint.path == checkpoint_dir
        executor.release("t1")

        restore = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path=checkpoint_dir)
        executor.start("t2", Resources(cpu=1), {}, context, restore)
        events = wait_for(executor, ResultReported)
        assert [type(e) for e in events][-2:] == [TrialRestored, ResultReported], events
        result = events[-1]
        assert isinstance(result, ResultReported)
        assert result.result["count"] == 3
    finally:
        executor.shutdown()
    assert s3_store.store.exists("exp/t1/checkpoint_000002/.tunecore_checkpoint.json")
    assert not driver_dir.parent.exists()


def test_output_of_actors_not_kept_for_reuse_reaches_the_storage(
    file_store: StorageTarget,
) -> None:
    """With `reuse_actors=False` an actor is ended as its trial ends; it
    first finishes its release, which uploads the trial's `log_to_file`
    output (it used to be killed with the upload still queued)."""
    grid = tunecore.Tuner(
        trainables.prints_its_trial,
        param_space={"x": tunecore.grid_search([1, 2, 3])},
        tune_config=tunecore.TuneConfig(reuse_actors=False),
        run_config=tunecore.RunConfig(
            name="logs", storage_path=file_store.uri, log_to_file=True, verbose=0
        ),
    ).fit()
    assert not grid.errors
    for result in grid:
        trial_dir = Path(result.path).name
        stdout = file_store.store.read_bytes(f"logs/{trial_dir}/stdout").decode()
        assert f"hello from {result.trial_id}" in stdout
