"""Chaos for storage without Ray: a driver on `file://` or S3 storage, shipping
every 20 ms (so most moments are mid-shipment, and the log is compacted),
SIGKILLed again and again, each time resumed on a fresh machine (a new
staging directory) from the URI alone. At the end every trial reported
each iteration exactly once in the stored results, the stored log
replays, and no driver died of anything but its SIGKILL.

Each kill aims at one phase (`PHASES`, in turn):

- `shipping`: once storage holds more of the log (polled from outside);
- `compaction`: between a compaction's merged object and the deletion
  of the objects it covers (the `seed`-chosen one of them);
- `lease`: a resume taking a killed driver's lease over, just after its
  lease is stored, before it reads the storage;
- `fence`: the same resume, just after it marked where it takes the log
  over (`shell.mirror.stored_state`), before it ships anything.

The last three are SIGKILLs the driver sends itself at that exact call of
its store (`scripts/chaos.py`'s `aim_kill`, which the chaos loop aims
with too), so they land where they aim every time.

Run as a script, this file is the driver: `python -m
tests.api.test_storage_kills URI` (it resumes when the URI holds the
experiment).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from scripts.chaos import aim_kill

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore import RunConfig, SyncConfig, TuneConfig, Tuner
from tunecore.model import JsonValue
from tunecore.shell.mirror.stored_state import fetch_state, stored_log
from tunecore.shell.replay import replay
from tunecore.shell.storage.resolve import within

pytestmark = pytest.mark.slow  # drivers killed and resumed, a minute on S3

REPOSITORY = Path(__file__).resolve().parents[2]
STEPS = 40
TRIALS = 3
KILLS = 4
SEEDS = [int(seed) for seed in os.environ.get("TUNECORE_STORAGE_KILL_SEEDS", "1").split(",")]
"""`TUNECORE_STORAGE_KILL_SEEDS=1,2,3` runs more (the figures in the docs)."""
GROWTH = 600
"""Bytes the stored log grows by before a `shipping` kill."""
PHASES = ("compaction", "shipping", "lease", "fence")
"""What the kills aim at, in turn (see the module docstring)."""


def counting(config: Mapping[str, JsonValue]) -> None:
    """`STEPS` results, a checkpoint with each; resumes from the last."""
    start = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = json.loads(Path(directory, "state.json").read_text())["step"]
    for step in range(start + 1, STEPS + 1):
        time.sleep(0.01)  # the trial's work
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "state.json").write_text(json.dumps({"step": step}))
            tunecore.report(
                {"step": step}, checkpoint=tunecore.Checkpoint.from_directory(directory)
            )


def drive(uri: str) -> None:
    experiment = uri.replace("?", "/exp?", 1) if "?" in uri else f"{uri}/exp"
    if Tuner.can_restore(experiment):
        Tuner.restore(experiment, counting).fit()
        return
    Tuner(
        counting,
        param_space={"x": tunecore.grid_search(list(range(TRIALS)))},
        tune_config=TuneConfig(metric="step", mode="max"),
        run_config=RunConfig(
            name="exp",
            storage_path=uri,
            sync_config=SyncConfig(sync_period=0.02),
            verbose=0,
            executor="in_process",
        ),
    ).fit()


def start(uri: str, staging: Path, aim: str = "") -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPOSITORY / "src"), str(REPOSITORY)]),
        "TUNECORE_STAGING": str(staging),
        "TUNECORE_KILL_AIM": aim,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.api.test_storage_kills", uri],
        cwd=REPOSITORY,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def wait_for_growth(
    store_log: Callable[[], bytes], driver: subprocess.Popen[str], size: int
) -> bool:
    """Poll (bounded) until the stored log holds `size` bytes; False if the
    driver ended first."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if driver.poll() is not None:
            return False
        if len(store_log()) >= size:
            return True
        time.sleep(0.005)
    raise TimeoutError("the stored log stopped growing")


@pytest.fixture(params=["file_store", "s3_store"])
def target(request: pytest.FixtureRequest) -> StorageTarget:
    given: StorageTarget = request.getfixturevalue(request.param)
    return given


@pytest.mark.parametrize("seed", SEEDS)
def test_kills_while_shipping_lose_and_repeat_nothing(
    target: StorageTarget, tmp_path: Path, seed: int
) -> None:
    file_store = target
    rng = random.Random(seed)
    store = within(file_store.store, "exp")
    landed: list[str] = []
    for number in range(KILLS):
        phase = PHASES[number % len(PHASES)]
        machine = tmp_path / f"machine_{number}"
        if phase == "shipping":
            driver = start(file_store.uri, machine)
            size = len(stored_log(store)) + GROWTH + rng.randrange(GROWTH)
            if wait_for_growth(lambda: stored_log(store), driver, size):
                os.killpg(driver.pid, signal.SIGKILL)
                landed.append(phase)
            output = driver.communicate(timeout=60)[0]
        else:
            aim = f"compaction:{rng.randrange(1, 16)}" if phase == "compaction" else phase
            driver = start(file_store.uri, machine, aim)
            output = driver.communicate(timeout=120)[0]
            if f"killed: {phase}" in output and driver.returncode == -signal.SIGKILL:
                landed.append(phase)
        assert driver.returncode in (0, -signal.SIGKILL), output
        assert "Traceback" not in output, output
    final = start(file_store.uri, tmp_path / "last_machine")
    output = final.communicate(timeout=300)[0]
    assert final.returncode == 0, output
    assert "Traceback" not in output, output
    assert len(landed) == KILLS, landed
    fetched = tmp_path / "fetched"
    fetch_state(store, fetched)
    replayed = replay(fetched)
    assert replayed.state.done
    assert len(replayed.state.trials) == TRIALS
    for trial in [name for name in store.list() if name.startswith("counting_")]:
        rows = store.read_bytes(f"{trial}/result.json").decode().splitlines()
        assert [json.loads(row)["step"] for row in rows] == list(range(1, STEPS + 1))
    stored = f"{TRIALS * STEPS} rows stored once each"
    where = ", ".join(f"{landed.count(phase)} {phase}" for phase in PHASES)
    print(f"\n{store.uri()} seed {seed}: {len(landed)} kills landed ({where}), {stored}")


if __name__ == "__main__":
    if aim := os.environ.get("TUNECORE_KILL_AIM"):
        aim_kill(aim)
    drive(sys.argv[1])
