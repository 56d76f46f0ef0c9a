"""Experiments on a two-node Ray cluster whose node 2 does not share the
experiment's storage path with the driver (issue 11; `two_node_cluster`):
with a plain path trials there must fail saying so; with object storage (a
local S3 server both nodes reach, `s3_store`) they run there, put their
checkpoints in the bucket, and recover on node 1 when node 2 is lost. The
root of the cluster's directory, which both nodes see, stands for a shared
mount where a test needs one.

The pytest process keeps its own local Ray (tests/conftest.py): each test
runs this file as the driver script (`python test_multinode.py SCENARIO
OUT`) connected to the test cluster, and checks the JSON summary the
driver writes to OUT. Run as `__main__`, the trainables below are shipped
to the workers by value, as a user's script's are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cluster_fixture import TwoNodeCluster, two_node_cluster
from tests.storage_fixtures import StorageTarget

pytestmark = pytest.mark.slow

__all__ = ["two_node_cluster"]  # the fixture, used by name below

STEPS = 4
BLOCK_AT = 2  # the count after which the trial on node 2 waits to be killed
WAIT_S = 120.0
DRIVER_TIMEOUT_S = 240.0
# A run of two 4-step trials takes seconds; one that hangs is ended by this.
PINNED_BUDGET_S = 60.0


# --- the driver side (runs in its own process) -------------------------------


def counts_with_checkpoints(config: dict[str, Any]) -> None:
    """Counts to `steps`, a checkpoint (written to a temporary directory,
    as Ray Tune's docs do) at every report, resuming from the one it is
    given. Reports the HOME of the node it runs on. With `block_at`: on
    node 2, after that count, it marks `marks/` and waits to be killed; on
    node 1 it waits there until node 2's trial has (so both run at once)."""
    import tunecore  # noqa: PLC0415 - runs in a Ray worker

    start = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            start = json.loads((Path(directory) / "state.json").read_text())["count"]
    home = os.environ["HOME"]
    for count in range(start + 1, config["steps"] + 1):
        with tempfile.TemporaryDirectory(prefix="ckpt_") as saved:  # as Ray's docs write it
            (Path(saved) / "state.json").write_text(json.dumps({"count": count}))
            tunecore.report(
                {"count": count, "resumed_from": start, "home": home},
                checkpoint=tunecore.Checkpoint.from_directory(saved),
            )
        if count == config.get("block_at"):
            marker = Path(config["marks"]) / "node2_blocked"
            if home == config["node2_home"]:
                marker.write_text(str(count))
                threading.Event().wait()  # until node 2 is killed
            else:
                _wait_for(marker)


def counts_where_it_runs(config: dict[str, Any]) -> None:
    """Counts to `steps`, with the HOME of the node it runs on, no
    checkpoints."""
    import tunecore  # noqa: PLC0415 - runs in a Ray worker

    for count in range(1, config["steps"] + 1):
        tunecore.report({"count": count, "resumed_from": 0, "home": os.environ["HOME"]})


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {WAIT_S} s")
        time.sleep(0.05)


def _connect() -> None:
    """Join the cluster at RAY_ADDRESS, once node 2 is in it."""
    import ray  # noqa: PLC0415

    ray.init(log_to_driver=False)
    deadline = time.monotonic() + WAIT_S
    while ray.cluster_resources().get("node2", 0) < 1:  # type: ignore[no-untyped-call]
        if time.monotonic() > deadline:
            raise TimeoutError(f"node 2 did not join within {WAIT_S} s")
        time.sleep(0.1)


def probe_isolation(storage: Path) -> dict[str, Any]:
    """Whether files written under `storage` by the driver and by a task on
    node 2 are seen by the other, and by a task on node 1 (the control)."""
    import ray  # noqa: PLC0415

    @ray.remote(num_cpus=0)
    def exists(path: str) -> bool:
        return os.path.exists(path)

    @ray.remote(num_cpus=0)
    def write(path: str) -> tuple[bool, str]:
        Path(path).write_text("node 2")
        return os.path.exists(path), os.environ["HOME"]

    on_node1 = exists.options(resources={"node1": 0.01})
    on_node2 = exists.options(resources={"node2": 0.01})
    from_driver = storage / "from_driver.txt"
    from_driver.write_text("driver")
    from_node2 = storage / "from_node2.txt"
    node2_sees_own, node2_home = ray.get(
        write.options(resources={"node2": 0.01}).remote(str(from_node2))
    )
    return {
        "node1_sees_driver_file": ray.get(on_node1.remote(str(from_driver))),
        "node2_sees_driver_file": ray.get(on_node2.remote(str(from_driver))),
        "node2_sees_own_file": node2_sees_own,
        "driver_sees_node2_file": from_node2.exists(),
        "node2_home": node2_home,
    }


def fit_summary(
    name: str,
    storage: str,
    trainable: Callable[..., object],
    config: dict[str, Any],
    concurrent: int,
    *,
    time_budget_s: float | None = None,
) -> list[dict[str, Any]]:
    """Run two trials to the end (up to 2 retries each), at most
    `concurrent` at once (within `time_budget_s`, if given), and say, per
    trial, its error, its reported history and the files of
    Result.checkpoint."""
    import tunecore  # noqa: PLC0415

    results = tunecore.Tuner(
        trainable,
        param_space={**config, "trial": tunecore.grid_search([0, 1])},
        tune_config=tunecore.TuneConfig(
            max_concurrent_trials=concurrent, time_budget_s=time_budget_s
        ),
        run_config=tunecore.RunConfig(
            name=name,
            storage_path=storage,
            verbose=0,
            failure_config=tunecore.FailureConfig(max_failures=2),
        ),
    ).fit()
    summary = []
    for result in results:
        files: dict[str, str] = {}
        if result.checkpoint is not None:
            with result.checkpoint.as_directory() as directory:
                files = {p.name: p.read_text() for p in Path(directory).iterdir() if p.is_file()}
        summary.append(
            {
                "error": None if result.error is None else str(result.error),
                "status": str(result.status),
                "history": [
                    {k: row[k] for k in ("count", "resumed_from", "home")}
                    for row in result.history or []
                ],
                "checkpoint_files": files,
            }
        )
    return summary


def main(scenario: str, out: str, storage: str, marks: str, node2_home: str) -> None:
    import tunecore  # noqa: PLC0415

    _connect()
    config = {"steps": STEPS, "marks": marks, "node2_home": node2_home}
    summary: object
    if scenario == "isolation":
        summary = probe_isolation(Path(storage))
    elif scenario == "pinned":
        pinned = tunecore.with_resources(counts_with_checkpoints, {"cpu": 1, "node2": 0.01})
        summary = fit_summary("pinned", storage, pinned, config, concurrent=1)
    elif scenario == "pinned_together":
        # Both started at once; node 2 has one CPU, so the second waits.
        pinned = tunecore.with_resources(counts_where_it_runs, {"cpu": 1, "node2": 0.01})
        summary = fit_summary(
            "pinned_together", storage, pinned, config, 2, time_budget_s=PINNED_BUDGET_S
        )
    else:
        config["block_at"] = BLOCK_AT
        summary = fit_summary("node_loss", storage, counts_with_checkpoints, config, 2)
    Path(out).write_text(json.dumps(summary))


# --- the tests ----------------------------------------------------------------


@pytest.fixture
def cluster(two_node_cluster: TwoNodeCluster) -> TwoNodeCluster:
    """The module's cluster with node 2 running (restarted if a test
    removed it) and no coordination files left from an earlier test."""
    if not two_node_cluster.node2_running():
        two_node_cluster.start_node2()
    for marker in two_node_cluster.shared_dir.iterdir():
        marker.unlink()
    return two_node_cluster


def start_driver(
    cluster: TwoNodeCluster, scenario: str, storage: Path | str | None = None
) -> tuple[subprocess.Popen[str], Path]:
    """The driver of `scenario`, its experiments in `storage` (a path or a
    URI; by default the path node 2 does not share)."""
    out = cluster.shared_dir / f"{scenario}.json"
    storage = cluster.storage_path if storage is None else storage
    args = (scenario, str(out), str(storage), str(cluster.shared_dir))
    return cluster.start_driver(Path(__file__), *args, cluster.node2_home), out


def finish(driver: subprocess.Popen[str], out: Path) -> Any:
    """The driver's summary; a driver that hangs is killed (it would hold
    the cluster's CPUs) and fails the test as a harness error."""
    try:
        stdout, stderr = driver.communicate(timeout=DRIVER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        driver.kill()
        stdout, stderr = driver.communicate()
        raise RuntimeError(f"driver hung:\n{stdout}\n{stderr[-5000:]}") from None
    assert driver.returncode == 0, f"driver failed:\n{stdout}\n{stderr[-5000:]}"
    return json.loads(out.read_text())


def test_node2_does_not_share_the_storage_path_with_the_driver(
    cluster: TwoNodeCluster,
) -> None:
    probed = finish(*start_driver(cluster, "isolation"))
    assert probed == {
        "node1_sees_driver_file": True,
        "node2_sees_driver_file": False,
        "node2_sees_own_file": True,
        "driver_sees_node2_file": False,
        "node2_home": cluster.node2_home,
    }


def test_two_trials_pinned_to_a_one_cpu_node_both_run_there(cluster: TwoNodeCluster) -> None:
    """Issue 11: by sums the cluster holds both at once, so both start;
    the first one's actor, kept idle for reuse once it ended, held node 2's
    only CPU, and the second waited for it forever. The experiment is on
    a path both nodes share (the root of the cluster's directory), so the
    trials may run on node 2."""
    summary = finish(*start_driver(cluster, "pinned_together", cluster.shared_dir.parent))
    assert len(summary) == 2
    for trial in summary:
        assert trial["error"] is None, trial["error"]
        assert [row["count"] for row in trial["history"]] == list(range(1, STEPS + 1))
        assert {row["home"] for row in trial["history"]} == {cluster.node2_home}


def test_a_trial_on_a_node_that_does_not_share_storage_path_fails_saying_so(
    cluster: TwoNodeCluster,
) -> None:
    """Not a run whose checkpoints are empty directories: each attempt on
    node 2 fails at once, naming the directory it does not see."""
    summary = finish(*start_driver(cluster, "pinned"))
    assert len(summary) == 2
    for trial in summary:
        assert trial["history"] == []
        assert "does not share the driver's storage_path" in trial["error"]
        assert str(cluster.storage_path / "pinned") in trial["error"]


def test_trials_on_node2_put_their_checkpoints_in_object_storage(
    cluster: TwoNodeCluster, s3_store: StorageTarget
) -> None:
    """Nothing shared but the S3 server: node 2 runs both trials, uploads
    each checkpoint itself, and the driver's results read the last one
    back from the bucket. The driver's staging directory is on the path
    node 2 cannot see, so a worker that touched it would fail."""
    summary = finish(*start_driver(cluster, "pinned", s3_store.uri))
    counts = list(range(1, STEPS + 1))
    assert len(summary) == 2
    for trial in summary:
        assert trial["error"] is None, trial["error"]
        assert [row["count"] for row in trial["history"]] == counts
        assert {row["home"] for row in trial["history"]} == {cluster.node2_home}
        assert trial["checkpoint_files"].get("state.json") == json.dumps({"count": STEPS})
    trial_dirs = [name for name in s3_store.store.list("pinned") if name.startswith("counts_")]
    assert len(trial_dirs) == 2
    for name in trial_dirs:
        kept = [c for c in s3_store.store.list(f"pinned/{name}") if c.startswith("checkpoint_")]
        assert kept, f"no checkpoint of {name} in the bucket"
    assert not list(cluster.storage_path.rglob("checkpoint_*")), "a checkpoint went to the driver"


def test_trials_recover_on_node1_when_node2_is_lost(
    cluster: TwoNodeCluster, s3_store: StorageTarget
) -> None:
    """Object storage, no shared path: node 2 is removed while its trial
    runs, and the trial resumes on node 1 from the last checkpoint node 2
    uploaded, within max_failures, every count reported exactly once."""
    driver, out = start_driver(cluster, "node_loss", s3_store.uri)
    marker = cluster.shared_dir / "node2_blocked"
    deadline = time.monotonic() + WAIT_S
    while not marker.exists() and driver.poll() is None:
        if time.monotonic() > deadline:
            driver.kill()
            raise RuntimeError(f"no trial reached node 2's blocking point: {finish(driver, out)}")
        time.sleep(0.1)
    cluster.remove_node2()
    summary = finish(driver, out)

    counts = list(range(1, STEPS + 1))
    homes = []
    for trial in summary:
        assert trial["error"] is None, trial["error"]
        # Every count reported exactly once, the lost one resumed after the
        # last checkpoint node 2 stored.
        assert [row["count"] for row in trial["history"]] == counts
        assert trial["checkpoint_files"].get("state.json") == json.dumps({"count": STEPS})
        homes.append([row["home"] for row in trial["history"]])
    moved = [h for h in homes if h[0] == cluster.node2_home]
    assert len(moved) == 1
    assert moved[0][-1] != cluster.node2_home  # finished on node 1


if __name__ == "__main__":
    main(*sys.argv[1:])
