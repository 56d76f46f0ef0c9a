"""Experiments on a local S3-compatible server (moto, `s3_store`) with the
Ray executor (issue 11): the actors get the experiment's store and put
their checkpoints in the bucket themselves, the driver only stages its
state and ships it, and the URI alone is enough to resume a driver that
was SIGKILLed, from another staging directory (another machine).

The killed driver is this file run as a script (`python test_s3.py URI
NAME GCS_ADDRESS`) joined to the session's Ray: its trainable, defined
in `__main__`, is shipped by value as a user's script's is; a SIGKILL of
it ends its job, and Ray ends its actors.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import cloudpickle
import pytest

import tunecore
from tests.integration import gated_pbt
from tests.storage_fixtures import StorageTarget, make_s3_target
from tunecore import (
    CheckpointConfig,
    FailureConfig,
    ResultGrid,
    RunConfig,
    SyncConfig,
    TuneConfig,
    Tuner,
)
from tunecore.core.checkpoints import dirname_generation
from tunecore.model import (
    CheckpointSaved,
    ExperimentEvent,
    JsonValue,
    ResultReported,
    TrialStatus,
)
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import LogError, read_log
from tunecore.shell.mirror.stored_state import fetch_state
from tunecore.shell.replay import replay
from tunecore.shell.storage.resolve import within
from tunecore.shell.storage.store import Store

REPOSITORY = Path(__file__).resolve().parents[2]
DRIVER_STEPS = 12
DRIVER_STEP_S = 0.3
"""The killed driver's trials: 12 steps of 0.3 s each."""
DRIVER_LAG_S = 2.0
"""The killed driver's shipping lag (`SyncConfig.sync_period`, 5 s by default; shorter
to keep the test short). The storage records both trials' first saved
checkpoints 2-4 s in, when the kill comes: mid-run, and before any
result.json was shipped (a trial's file, growing every 0.3 s, is never
unchanged from one tick to the next)."""
KILL_TIMEOUT_S = 60.0


def counting(config: Mapping[str, JsonValue]) -> None:
    """Reports `score = step` for steps 1..`steps`, a checkpoint (a
    temporary directory, as Ray's docs write them) with each, resuming
    from the one it is given. With `die_at`, the worker process dies
    (os._exit) at that step the first time (`marker`, a file on this
    machine, remembers it did). With `gate`, a file on this machine, the
    last step waits (bounded) until it exists: a driver killed before the
    test opens the gate was killed mid-run, however slow the machine."""
    start = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            start = json.loads(Path(directory, "state.json").read_text())["step"]
    steps, pause = config["steps"], config.get("sleep", 0.0)
    assert isinstance(steps, int)
    assert isinstance(pause, int | float)
    for step in range(start + 1, steps + 1):
        time.sleep(pause)
        marker, gate = config.get("marker"), config.get("gate")
        if step == steps and isinstance(gate, str):
            wait_for_file(Path(gate))
        if step == config.get("die_at") and isinstance(marker, str) and not Path(marker).exists():
            Path(marker).write_text("died")
            os._exit(1)
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state.json").write_text(json.dumps({"step": step}))
            tunecore.report(
                {"score": step, "step": step, "started_at": start},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def wait_for_file(path: Path) -> None:
    """Poll until `path` exists; raise after `KILL_TIMEOUT_S` (nothing hangs)."""
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was not created in {KILL_TIMEOUT_S} s")
        time.sleep(0.05)


def make_tuner(storage_path: str, name: str, space: Mapping[str, object], **run: object) -> Tuner:
    return Tuner(
        counting,
        param_space=dict(space),
        tune_config=TuneConfig(metric="score", mode="max"),
        run_config=RunConfig(
            name=name,
            storage_path=storage_path,
            checkpoint_config=CheckpointConfig(num_to_keep=2),
            verbose=0,
            **run,  # type: ignore[arg-type]
        ),
    )


def drive(uri: str, name: str, address: str, gate: str) -> None:
    """The driver that is killed: two trials on the given Ray, their last
    steps held until `gate` exists."""
    import ray  # noqa: PLC0415

    ray.init(address=address, log_to_driver=False)
    space = {
        "steps": DRIVER_STEPS,
        "sleep": DRIVER_STEP_S,
        "x": tunecore.grid_search([1, 2]),
        "gate": gate,
    }
    make_tuner(uri, name, space, sync_config=SyncConfig(sync_period=DRIVER_LAG_S)).fit()


# --- the tests ----------------------------------------------------------------

pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.slow]


@pytest.fixture(autouse=True, scope="module")
def _by_value() -> Iterator[None]:
    """Ray's workers cannot import the tests: ship this module by value."""
    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)
    yield
    cloudpickle.unregister_pickle_by_value(module)


def trial_dirs(store: Store, name: str) -> list[str]:
    return [entry for entry in store.list(name) if entry.startswith("counting_")]


def stored_rows(store: Store, rel: str) -> list[dict[str, JsonValue]]:
    return [json.loads(line) for line in store.read_bytes(rel).decode().splitlines()]


def column(rows: list[dict[str, JsonValue]], key: str) -> list[int]:
    values = [row[key] for row in rows]
    assert all(isinstance(v, int) for v in values), values
    return [v for v in values if isinstance(v, int)]


def stored_experiment(store: Store, tmp_path: Path) -> Path:
    """The experiment's state as the storage holds it, fetched here."""
    local = Path(tempfile.mkdtemp(dir=tmp_path, prefix="fetched_")) / "exp"
    fetch_state(store, local)
    return local


def checkpoints(store: Store, trial: str) -> list[str]:
    return [n for n in store.list(trial) if n.startswith("checkpoint_")]


def test_a_run_on_s3_keeps_its_checkpoints_in_the_bucket_and_recovers_from_them(
    s3_store: StorageTarget, staging: Path, tmp_path: Path
) -> None:
    """Two trials on Ray; the worker of the second dies at step 3 and the
    trial goes on from checkpoint 2, downloaded from the bucket."""
    space = {"steps": 4, "die_at": tunecore.grid_search([0, 3]), "marker": str(tmp_path / "died")}
    grid = make_tuner(
        s3_store.uri, "exp", space, failure_config=FailureConfig(max_failures=1)
    ).fit()
    assert (tmp_path / "died").exists()
    assert [r.error for r in grid] == [None, None]
    assert [r.metrics["step"] for r in grid] == [4, 4]
    assert [r.metrics["started_at"] for r in grid] == [0, 2]
    store = within(s3_store.store, "exp")
    trials = trial_dirs(s3_store.store, "exp")
    assert len(trials) == 2
    for trial in trials:
        # num_to_keep=2: retention deleted the older two in the bucket
        assert checkpoints(store, trial) == ["checkpoint_000003", "checkpoint_000004"]
        for kept in checkpoints(store, trial):
            assert store.exists(f"{trial}/{kept}/.tunecore_checkpoint.json")
        assert [r["step"] for r in stored_rows(store, f"{trial}/result.json")] == [1, 2, 3, 4]
    assert not list(staging.rglob("checkpoint_*")), "a checkpoint reached the staging dir"
    best = grid.get_best_result().checkpoint
    assert best is not None
    assert best.path.startswith("s3://")
    with best.as_directory() as directory:
        assert json.loads(Path(directory, "state.json").read_text()) == {"step": 4}


def test_pbt_exploits_copy_the_donor_within_the_bucket(
    s3_store: StorageTarget, staging: Path, tmp_path: Path
) -> None:
    """`gated_pbt`'s two trials, in the bucket: `low` exploits `top` at its
    second result (gates, not sleeps, make the two meet)."""
    store = within(s3_store.store, "exp")

    def exploits() -> list[str]:
        return [
            f"{trial}/{name}"
            for trial in s3_store.store.list("exp")
            if trial.startswith("paced_")
            for name in store.list(trial)
            if name.startswith("exploit_")
        ]

    class SeenAtResults(Callback):
        """Each exploit copy in the bucket at each result, and whether it
        held its checkpoint's marker (a whole copy) when first seen: the
        exploited trial reports from its copy before the copy is deleted
        (at its next restore, which no hook marks, as in Ray Tune)."""

        def __init__(self) -> None:
            self.copies: dict[str, bool] = {}

        def on_trial_result(
            self, iteration: int, trials: object, trial: object, result: object
        ) -> None:
            for exploit in exploits():
                whole = store.exists(f"{exploit}/.tunecore_checkpoint.json")
                self.copies.setdefault(exploit, whole)

    seen = SeenAtResults()
    grid = gated_pbt.fit(
        s3_store.uri, tmp_path / "gates", checkpoints=True, name="exp", callbacks=[seen]
    )
    assert [r.error for r in grid] == [None, None]
    assert seen.copies, "no exploit copy seen in the bucket"
    assert all(seen.copies.values()), seen.copies
    # the exploited trial went on from the donor's step 1, read from the bucket
    low = gated_pbt.first_trial(grid)
    progress = low.metrics_dataframe
    assert progress is not None
    assert list(progress["step"])[:3] == [1, 2, 2]
    # rate 1, then the donor's 10 explored to a neighbour in the list: 2 or 20
    assert list(progress["score"])[:3] in ([1.0, 2.0, 4.0], [1.0, 2.0, 40.0])
    assert not list(staging.rglob("exploit_*"))
    assert exploits() == []  # deleted as the run ended


def test_a_ray_user_passes_a_filesystem_and_a_bucket_path(s3_store: StorageTarget) -> None:
    """`storage_filesystem=S3FileSystem(...)` with `storage_path="bucket/runs"`,
    as Ray Tune's docs write it."""
    store = s3_store.store
    assert s3_store.filesystem is not None
    bucket = s3_store.uri.split("@")[1].split("?")[0]
    grid = make_tuner(
        f"{bucket}/runs",
        "exp",
        {"steps": 3},
        storage_filesystem=s3_store.filesystem,
    ).fit()
    assert not grid.errors
    [trial] = trial_dirs(store, "runs/exp")
    assert checkpoints(store, f"runs/exp/{trial}") == ["checkpoint_000002", "checkpoint_000003"]
    assert store.list("runs/exp/events")
    checkpoint = grid.get_best_result().checkpoint
    assert checkpoint is not None
    with checkpoint.as_directory() as directory:
        assert json.loads(Path(directory, "state.json").read_text()) == {"step": 3}


@dataclass(frozen=True)
class Resumed:
    """A driver SIGKILLed mid-run and its experiment resumed elsewhere."""

    store: Store  # rooted at the experiment
    killed_at: list[ExperimentEvent]  # the events the storage held at the kill
    grid: ResultGrid  # what the resume's fit() returned
    experiment: Path  # the storage's state after the resume, fetched


@pytest.fixture(scope="module")
def resumed(
    s3_endpoint: str, ray_cluster: None, tmp_path_factory: pytest.TempPathFactory
) -> Resumed:
    """Run the driver (this file as a script) on the session's Ray, SIGKILL
    it once the storage records a saved checkpoint of each trial, and
    resume with nothing but the URI, from another staging directory
    (another machine). The trials' last steps wait for a gate file the
    test creates only after the kill, so the kill is mid-run."""
    import ray  # noqa: PLC0415

    target = make_s3_target(s3_endpoint)
    tmp = tmp_path_factory.mktemp("killed")
    store = within(target.store, "exp")
    env = {
        **os.environ,
        # This checkout's tunecore, whatever the environment has installed.
        "PYTHONPATH": os.pathsep.join([str(REPOSITORY / "src"), str(REPOSITORY)]),
        "TUNECORE_STAGING": str(tmp / "first"),
    }
    address = ray.get_runtime_context().gcs_address
    gate = tmp / "gate"
    driver = subprocess.Popen(
        [sys.executable, __file__, target.uri, "exp", address, str(gate)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for_stored_checkpoints(store, driver, trials=2)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it ended first: said above
            os.killpg(driver.pid, signal.SIGKILL)
        driver.communicate(timeout=60)
    killed_at = list(read_log(stored_experiment(store, tmp), quiet=True).events)
    gate.touch()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TUNECORE_STAGING", str(tmp / "elsewhere"))
        uri = target.experiment_uri("exp")
        assert Tuner.can_restore(uri)
        grid = Tuner.restore(uri, counting).fit()
    return Resumed(store, killed_at, grid, stored_experiment(store, tmp))


def wait_for_stored_checkpoints(store: Store, driver: subprocess.Popen[str], trials: int) -> None:
    """Poll (bounded) until the stored log records a saved checkpoint of
    `trials` trials."""
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while time.monotonic() < deadline:
        if driver.poll() is not None:
            raise RuntimeError(f"the driver ended first: {driver.communicate()[0][-3000:]}")
        saved = {e.trial_id for e in stored_events(store) if isinstance(e, CheckpointSaved)}
        if len(saved) >= trials:
            return
        time.sleep(0.2)
    raise TimeoutError(f"the stored log recorded no checkpoint of {trials} trials in time")


def stored_events(store: Store) -> list[ExperimentEvent]:
    """The events of the log the storage holds now (none before its header)."""
    with tempfile.TemporaryDirectory() as directory:
        try:
            fetch_state(store, Path(directory))
            return list(read_log(Path(directory), quiet=True).events)
        except (FileNotFoundError, LogError):
            return []


def test_a_killed_driver_resumes_from_the_uri_alone_repeating_nothing(resumed: Resumed) -> None:
    # the kill came mid-run: no trial had reported its last step to the storage
    assert not any(
        isinstance(e, ResultReported) and e.result.get("step") == DRIVER_STEPS
        for e in resumed.killed_at
    )
    assert [r.status for r in resumed.grid] == [TrialStatus.TERMINATED] * 2
    assert [r.metrics["step"] for r in resumed.grid] == [DRIVER_STEPS] * 2
    assert 0 not in [r.metrics["started_at"] for r in resumed.grid], "not from a checkpoint"
    replayed = replay(resumed.experiment)  # verifies the stored snapshots too
    assert replayed.state.done
    assert {t.status for t in replayed.state.trials.values()} == {TrialStatus.TERMINATED}
    last_steps = Counter(
        e.trial_id
        for e in read_log(resumed.experiment, quiet=True).events
        if isinstance(e, ResultReported) and e.result.get("step") == DRIVER_STEPS
    )
    assert sorted(last_steps.values()) == [1, 1], last_steps
    store = resumed.store
    trials = [t for t in store.list() if t.startswith("counting_")]
    assert len(trials) == 2
    for trial in trials:
        steps = column(stored_rows(store, f"{trial}/result.json"), "step")
        assert steps == sorted(set(steps)), f"a result repeated: {steps}"
        assert steps[-1] == DRIVER_STEPS
        names = checkpoints(store, trial)
        assert sorted(dirname_generation(name)[0] for name in names) == [
            f"checkpoint_{DRIVER_STEPS - 1:06d}",
            f"checkpoint_{DRIVER_STEPS:06d}",
        ]
        # The resume (lease generation 2) stored its checkpoints under its
        # generation's names: a paused first driver's worker replaces none.
        assert f"checkpoint_{DRIVER_STEPS:06d}_g2" in names


def test_a_killed_driver_resumed_from_the_uri_loses_no_result(resumed: Resumed) -> None:
    """The stored result.json lags the stored log (it is shipped less
    often); the resume writes back every row the log holds."""
    for trial in [t for t in resumed.store.list() if t.startswith("counting_")]:
        rows = stored_rows(resumed.store, f"{trial}/result.json")
        assert [r["step"] for r in rows] == list(range(1, DRIVER_STEPS + 1))
        assert [r["training_iteration"] for r in rows] == list(range(1, DRIVER_STEPS + 1))


if __name__ == "__main__":
    drive(*sys.argv[1:5])
