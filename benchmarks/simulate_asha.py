"""10 000 trials x 100 iterations under ASHA, simulated (`tunecore.simulate`):
the whole run (core, loop, event log, snapshots) in virtual time, and what
replaying its log and snapshotting its final state cost.

Wall time is `time.perf_counter` around one run (this includes writing the
log and creating each trial's directory); the snapshot share is one
snapshot of the final, largest state against the run's wall time, which is
an upper bound on what the journal spends (it spaces snapshots to stay
within 2% of the wall time, plus one at the end).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import tunecore
from benchmarks.scratch import run_dir
from tunecore import Callback, ResultGrid, RunConfig, TuneConfig
from tunecore.core.experiment.snapshot import encode_state
from tunecore.model import JsonDict, Resources
from tunecore.schedulers import ASHAScheduler
from tunecore.shell.journal import EMPTY_DIGEST, SnapshotStore

MAX_T = 100


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """A learning curve that falls towards a floor; 1-2 virtual s a step."""
    a, b = config["a"], config["b"]
    assert isinstance(a, float)
    assert isinstance(b, float)
    return {"loss": a + b / iteration}, 1.0 + a


def simulated(
    trials: int,
    root: str,
    grace_period: int = 1,
    name: str = "sim",
    callbacks: Sequence[Callback] = (),
) -> ResultGrid:
    """The simulated ASHA run of `trials` trials into `root`."""
    return tunecore.simulate(
        curve,
        param_space={"a": tunecore.uniform(0.0, 1.0), "b": tunecore.uniform(0.0, 5.0)},
        tune_config=TuneConfig(
            metric="loss",
            mode="min",
            num_samples=trials,
            seed=0,
            scheduler=ASHAScheduler(max_t=MAX_T, grace_period=grace_period, reduction_factor=4),
        ),
        run_config=RunConfig(name=name, storage_path=root, verbose=0, callbacks=list(callbacks)),
        cluster=Resources(cpu=16),
        max_iterations=MAX_T,
    )


def run(trials: int = 10_000, grace_period: int = 1) -> str:
    root = run_dir("bench-simulate-")
    started = time.perf_counter()
    results = simulated(trials, root, grace_period)
    wall = time.perf_counter() - started
    directory = Path(results.experiment_path)
    log_mb = (directory / "events.log").stat().st_size / 1e6
    started = time.perf_counter()
    replayed = tunecore.replay(directory, keep_commands=False)
    replay_s = time.perf_counter() - started
    started = time.perf_counter()
    SnapshotStore(Path(root) / "probe").write(0, EMPTY_DIGEST, encode_state(replayed.state))
    snapshot_s = time.perf_counter() - started
    steps = sum(int(str(r.metrics.get("training_iteration", 0))) for r in results)
    return "\n".join(
        [
            f"### {trials:,} trials x {MAX_T} iterations under ASHA, simulated "
            f"(grace_period={grace_period}, reduction_factor=4, 16 CPUs)",
            "",
            "| results | events | wall s | events/s | log MB | replay s "
            "| one snapshot s | snapshot share | target |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {steps:,} | {replayed.records:,} | {wall:.1f} | {replayed.records / wall:,.0f} "
            f"| {log_mb:.1f} | {replay_s:.1f} | {snapshot_s:.2f} | {snapshot_s / wall:.1%} "
            "| < 30 s |",
        ]
    )


if __name__ == "__main__":
    print(run())
