"""A driver for the trackers' kill tests (Comet, Aim, W&B), run as its own
process and SIGKILLed by itself at chosen moments, as `mlflow_driver` is
for MLflow (whose trainable it shares):

    python -m tests.integrations.tracker_driver TRACKER ROOT STORE PHASE

TRACKER is `comet` (offline archives in STORE), `aim` (the Aim repo STORE)
or `wandb` (offline, W&B's files under each trial's directory). The kills
are aimed at one trial, the one with x = `SPLIT_X`, so that all three
drivers run it whatever the other trials do meanwhile: PHASE `first`
starts the experiment ROOT/exp and dies right after the tracker was given
that trial's `SPLIT_AT`th result; `second` resumes it and dies as that
trial ends, before the tracker hears of it (the loop logs a round's events
after its callbacks, so the trial runs again on the next resume); `last`
resumes it to its end.

W&B opens its runs on a thread of its own, so a kill could come before the
run it was told to open exists: with W&B, each kill waits until this
process opened the trial's run (`RunsOpened`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tunecore
from tests.integrations.mlflow_driver import die, train
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial

XS = (1.0, 2.0, 3.0)
SPLIT_X = XS[0]
SPLIT_AT = 3
PROJECT = "killed"
OPEN_TIMEOUT_S = 120.0


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


class RunsOpened:
    """The trials whose W&B run this process opened, seen by wrapping
    `wandb.init` (W&B names a trial's run by its id); for another tracker,
    every run counts as open (their callbacks open runs as they are told)."""

    def __init__(self, tracker: str) -> None:
        self._opened: set[str] | None = None
        self._changed = threading.Condition()
        if tracker == "wandb":
            self._opened = set()
            self._watch_wandb()

    def _watch_wandb(self) -> None:
        import wandb  # noqa: PLC0415

        real_init = wandb.init

        def init(**kwargs: Any) -> Any:
            run = real_init(**kwargs)
            with self._changed:
                assert self._opened is not None
                self._opened.add(str(kwargs["id"]))
                self._changed.notify_all()
            return run

        wandb.init = init  # type: ignore[assignment]  # the same call, watched

    def wait(self, trial_id: str) -> None:
        """Until the trial's run is open; a process whose tracker never
        opens it says so and exits with 3 (the test expects a SIGKILL)."""
        opened = self._opened
        if opened is None:
            return
        with self._changed:
            if self._changed.wait_for(lambda: trial_id in opened, OPEN_TIMEOUT_S):
                return
        print(f"no run opened for trial {trial_id} in {OPEN_TIMEOUT_S} s", file=sys.stderr)
        os._exit(3)


def is_split(trial: Trial) -> bool:
    return bool(trial.config["x"] == SPLIT_X)


class DieAtTheSplitResult(Callback):
    """After the tracker's callback in the list: dies once the tracker was
    given the split trial's `SPLIT_AT`th result."""

    def __init__(self, opened: RunsOpened) -> None:
        self.opened = opened

    def on_trial_result(
        self, iteration: int, trials: object, trial: Trial, result: Mapping[str, Any]
    ) -> None:
        if is_split(trial) and result["training_iteration"] == SPLIT_AT:
            self.opened.wait(trial.trial_id)
            die()


class DieAsTheSplitTrialEnds(Callback):
    """Before the tracker's callback in the list."""

    def __init__(self, opened: RunsOpened) -> None:
        self.opened = opened

    def on_trial_complete(self, iteration: int, trials: object, trial: Trial) -> None:
        if is_split(trial):
            self.opened.wait(trial.trial_id)
            die()


def main(argv: Sequence[str]) -> int:
    tracker, root, store, phase = argv
    opened = RunsOpened(tracker)
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
                callbacks=[tracker_callback(tracker, store), DieAtTheSplitResult(opened)],
            ),
        )
    else:
        callbacks: list[object] = [tracker_callback(tracker, store)]
        if phase == "second":
            callbacks.insert(0, DieAsTheSplitTrialEnds(opened))
        tuner = Tuner.restore(str(Path(root, "exp")), trainable=train, callbacks=callbacks)
    results = tuner.fit()
    return 0 if not results.errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
