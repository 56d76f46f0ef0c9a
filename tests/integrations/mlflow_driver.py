"""A driver for test_mlflow's kill test, run as its own process and
SIGKILLed by itself at a chosen moment (in-process executor: the trials
die with it, as a driver's trials lose their driver).

    python -m tests.integrations.mlflow_driver ROOT TRACKING_URI PHASE

PHASE `first` starts the experiment ROOT/exp and dies right after the
MLflow callback logged its `KILL_AFTER_RESULTS`th result, before the
event log holds it (a callback is told of a result before it is logged);
`second` resumes it and dies as the first trial ends, before the MLflow
callback is told (the loop logs a round's events after its callbacks, so
the trial runs its last step again on the next resume); `last` resumes it
to its end.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.integrations.mlflow import MLflowLoggerCallback
from tunecore.shell.callbacks import Callback

ITERATIONS = 6
XS = (1.0, 2.0, 3.0)
KILL_AFTER_RESULTS = 7
EXPERIMENT = "killed"


def train(config: dict[str, float]) -> None:
    """Resumes from its checkpoint; the loss depends only on x and step."""
    start = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = int(Path(directory, "step").read_text())
    for step in range(start + 1, ITERATIONS + 1):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tunecore.report(
                {"loss": config["x"] + 1.0 / step},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class DieAfterResults(Callback):
    """After the MLflow callback in the list: dies once it has logged
    `results` results."""

    def __init__(self, results: int) -> None:
        self.left = results

    def on_trial_result(
        self, iteration: int, trials: object, trial: object, result: object
    ) -> None:
        self.left -= 1
        if self.left == 0:
            die()


class DieAsATrialEnds(Callback):
    """Before the MLflow callback in the list."""

    def on_trial_complete(self, iteration: int, trials: object, trial: object) -> None:
        die()


def mlflow_callback(tracking_uri: str) -> MLflowLoggerCallback:
    return MLflowLoggerCallback(tracking_uri=tracking_uri, experiment_name=EXPERIMENT)


def main(argv: Sequence[str]) -> int:
    root, tracking_uri, phase = argv
    if phase == "first":
        tuner = Tuner(
            train,
            param_space={"x": tunecore.grid_search(list(XS))},
            tune_config=TuneConfig(metric="loss", mode="min", max_concurrent_trials=2),
            run_config=RunConfig(
                name="exp",
                storage_path=root,
                verbose=0,
                executor="in_process",
                callbacks=[mlflow_callback(tracking_uri), DieAfterResults(KILL_AFTER_RESULTS)],
            ),
        )
    else:
        callbacks: list[object] = [mlflow_callback(tracking_uri)]
        if phase == "second":
            callbacks.insert(0, DieAsATrialEnds())
        tuner = Tuner.restore(str(Path(root, "exp")), trainable=train, callbacks=callbacks)
    results = tuner.fit()
    return 0 if not results.errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
