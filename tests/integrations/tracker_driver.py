"""A driver for the trackers' kill tests (Comet, Aim, W&B), run as its own
process and SIGKILLed by itself at chosen moments, as `mlflow_driver` is
for MLflow (whose phases and trainable it shares):

    python -m tests.integrations.tracker_driver TRACKER ROOT STORE PHASE

TRACKER is `comet` (offline archives in STORE), `aim` (the Aim repo STORE)
or `wandb` (offline, W&B's files under each trial's directory). PHASE
`first` starts the experiment ROOT/exp and dies right after the tracker
was given its `KILL_AFTER_RESULTS`th result; `second` resumes it and dies
as the first trial ends, before the tracker hears of it; `last` resumes
it to its end.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import tunecore
from tests.integrations.mlflow_driver import (
    DieAfterResults,
    DieAsATrialEnds,
    train,
)
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.shell.callbacks import Callback

XS = (1.0, 2.0, 3.0)
KILL_AFTER_RESULTS = 7
PROJECT = "killed"


def tracker_callback(tracker: str, store: str) -> Callback:
    """The tracker's callback, imported only here (each needs its extra)."""
    if tracker == "comet":
        from tunecore.integrations.comet import CometLoggerCallback  # noqa: PLC0415

        return CometLoggerCallback(online=False, project_name=PROJECT, offline_directory=store)
    if tracker == "aim":
        from tunecore.logger.aim import AimLoggerCallback  # noqa: PLC0415

        return AimLoggerCallback(
            repo=store, system_tracking_interval=None, capture_terminal_logs=False
        )
    from tunecore.integrations.wandb import WandbLoggerCallback  # noqa: PLC0415

    return WandbLoggerCallback(project=PROJECT, mode="offline")


def main(argv: Sequence[str]) -> int:
    tracker, root, store, phase = argv
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
                callbacks=[tracker_callback(tracker, store), DieAfterResults(KILL_AFTER_RESULTS)],
            ),
        )
    else:
        callbacks: list[object] = [tracker_callback(tracker, store)]
        if phase == "second":
            callbacks.insert(0, DieAsATrialEnds())
        tuner = Tuner.restore(str(Path(root, "exp")), trainable=train, callbacks=callbacks)
    results = tuner.fit()
    return 0 if not results.errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
