"""Writes `tests/golden/log_v1/`: an experiment log of format 1 that every
later tunecore must keep reading (`tests/test_golden_log.py`).

It was run once, and its output is checked in; run it again only for a new
log format, into a new directory (`log_v2/`), never over an old one, and
through an import, so the log names the trainable by its import path:

    python -c "from pathlib import Path; from tests.golden.make_golden_log import main;
               main(Path('tests/golden/log_v2'))"

The experiment touches every kind of record: results, checkpoint saves and
their retention, a failure and its recovery, a trial that errors for good,
a crash, and a resume that retries the errored trial.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import tunecore
from tunecore import CheckpointConfig, FailureConfig, RunConfig, TuneConfig, Tuner
from tunecore.schedulers import ASHAScheduler


def train(config: dict[str, object]) -> None:
    """Fails at step 3 of trial x=0 while a marker is missing."""
    start = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = int(Path(directory, "step").read_text())
    x = float(str(config["x"]))
    for step in range(start + 1, 7):
        if step == 3 and x == 0.0 and not Path(str(config["marker"])).exists():
            raise RuntimeError("the marker is missing")
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tunecore.report(
                {"loss": x + 1.0 / step, "nested": {"step": step}},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def main(target: Path) -> None:
    with tempfile.TemporaryDirectory() as root:
        marker = Path(root) / "marker"
        Tuner(
            train,
            param_space={"x": tunecore.grid_search([0.0, 0.5, 1.0]), "marker": str(marker)},
            tune_config=TuneConfig(
                metric="loss",
                mode="min",
                max_concurrent_trials=1,
                scheduler=ASHAScheduler(max_t=6, grace_period=2, reduction_factor=2),
            ),
            run_config=RunConfig(
                name="golden",
                storage_path=root,
                verbose=0,
                executor="in_process",
                failure_config=FailureConfig(max_failures=0),
                checkpoint_config=CheckpointConfig(num_to_keep=2),
            ),
        ).fit()
        marker.touch()
        directory = Path(root) / "golden"
        results = Tuner.restore(directory, train, resume_errored=True).fit()
        target.mkdir(parents=True)
        shutil.copy(directory / "events.log", target / "events.log")
        shutil.copytree(directory / "snapshots", target / "snapshots")
        replayed = tunecore.replay(directory)
        expected = {
            "records": replayed.records,
            "commands": len(replayed.commands),
            "statuses": sorted(r.status.value for r in results),
            "iterations": sorted(int(str(r.metrics["training_iteration"])) for r in results),
        }
        (target / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
