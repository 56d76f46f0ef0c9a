"""A driver for the trackers' kill tests (Comet, Aim, W&B, MLflow), run as
its own process and SIGKILLed by itself at chosen moments (in-process
executor: the trials die with it), sharing `mlflow_driver`'s trainable:

    python -m tests.integrations.tracker_driver TRACKER ROOT STORE PHASE [HOLD]

TRACKER is `comet` (offline archives in STORE), `aim` (the Aim repo
STORE), `wandb` (offline, W&B's files under each trial's directory) or
`mlflow` (the tracking URI STORE). The trials run one at a time, in the
order of `XS`, so each kill lands at a point of the experiment chosen in
advance, whatever the timing:

- PHASE `first` starts the experiment ROOT/exp and dies once the first
  trial (`ENDED_X`) has ended and its end is in the event log (a callback's
  `on_step_end` comes after the round's records are written), with no
  other trial's result logged yet;
- `second` resumes it and dies right after the tracker was given the
  second trial's (`SPLIT_X`) `SPLIT_AT`th result: that trial runs again on
  the next resume;
- `last` resumes it to its end.

HOLD says what the tracker has of the first trial as `first` dies: `all`
(the default: what it was given), `none` (`first` runs without the
tracker), or, for W&B only, a number n: W&B's thread is held for good
once it logged n results of the trial (0: before it opens the trial's
run), and `first` dies only once it is held there, so the killed driver's
W&B holds at most n of them, and maybe fewer (W&B loses what a SIGKILLed
process had buffered).

W&B opens its runs on a thread of its own, so with W&B `second` dies only
once this process opened the second trial's run (`RunsOpened`): the runs
W&B was told to open before, in order, are done by then.
"""

from __future__ import annotations

import os
import subprocess
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
ENDED_X = XS[0]
SPLIT_X = XS[1]
SPLIT_AT = 3
PROJECT = "killed"
OPEN_TIMEOUT_S = 120.0
_REPO = Path(__file__).resolve().parents[2]


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
    if tracker == "mlflow":
        from tunecore.integrations.mlflow import MLflowLoggerCallback  # noqa: PLC0415

        return MLflowLoggerCallback(tracking_uri=store, experiment_name=PROJECT)
    from tunecore.integrations.wandb import WandbLoggerCallback  # noqa: PLC0415

    return WandbLoggerCallback(project=PROJECT, mode="offline")


class RunsOpened:
    """The trials whose W&B run this process opened, seen by wrapping
    `wandb.init` (W&B names a trial's run by its id); for another tracker,
    every run counts as open (their callbacks open runs as they are told).
    With `hold_after` (W&B only), W&B's thread is held for good once it
    logged that many results of the trial of x = `ENDED_X` (its run is
    named after it: the trial id)."""

    def __init__(self, tracker: str, hold_after: int | None = None) -> None:
        self._opened: set[str] | None = None
        self._changed = threading.Condition()
        self._held = threading.Event()
        self._hold_after = hold_after
        if tracker == "wandb":
            self._opened = set()
            self._watch_wandb(hold_after)

    def _watch_wandb(self, hold_after: int | None) -> None:
        import wandb  # noqa: PLC0415

        real_init, real_log = wandb.init, wandb.Run.log
        held_id = "00000"  # the first trial's id ends so (`_is_held`)
        logged: dict[str, int] = {}

        def hold_here(run_id: str, count: int) -> None:
            if hold_after is not None and run_id.endswith(held_id) and count >= hold_after:
                self._held.set()
                threading.Event().wait()  # held for good: the process dies

        def init(**kwargs: Any) -> Any:
            run_id = str(kwargs["id"])
            hold_here(run_id, 0)
            run = real_init(**kwargs)
            with self._changed:
                assert self._opened is not None
                self._opened.add(run_id)
                self._changed.notify_all()
            return run

        def log(run: Any, *args: Any, **kwargs: Any) -> Any:
            count = logged.get(run.id, 0)
            hold_here(run.id, count)
            logged[run.id] = count + 1
            return real_log(run, *args, **kwargs)

        wandb.init = init  # type: ignore[assignment]  # the same call, watched
        wandb.Run.log = log  # type: ignore[method-assign]

    def wait(self, trial_id: str) -> None:
        """Until the trial's run is open; a process whose tracker never
        opens it says so and exits with 3 (the test expects a SIGKILL)."""
        opened = self._opened
        if opened is None:
            return
        with self._changed:
            if self._changed.wait_for(lambda: trial_id in opened, OPEN_TIMEOUT_S):
                return
        _give_up(f"no run opened for trial {trial_id}")

    def wait_held(self) -> None:
        """Until W&B's thread is held (when it is to be), as `wait`."""
        if self._hold_after is not None and not self._held.wait(OPEN_TIMEOUT_S):
            _give_up("W&B's thread never reached its hold")


def _give_up(why: str) -> None:
    print(f"{why} in {OPEN_TIMEOUT_S} s", file=sys.stderr)
    os._exit(3)


class DieOnceTheFirstEndIsLogged(Callback):
    """Dies at the end of the round in which the first trial ended (its
    end is in the log, written before `on_step_end`), once W&B's thread is
    held where it is to be."""

    def __init__(self, opened: RunsOpened) -> None:
        self.opened = opened
        self.ended = False

    def on_trial_complete(self, iteration: int, trials: object, trial: Trial) -> None:
        self.ended = self.ended or trial.config["x"] == ENDED_X

    def on_step_end(self, iteration: int, trials: object) -> None:
        if self.ended:
            self.opened.wait_held()
            die()


class DieAtTheSplitResult(Callback):
    """After the tracker's callback in the list: dies once the tracker was
    given the second trial's `SPLIT_AT`th result."""

    def __init__(self, opened: RunsOpened) -> None:
        self.opened = opened

    def on_trial_result(
        self, iteration: int, trials: object, trial: Trial, result: Mapping[str, Any]
    ) -> None:
        if trial.config["x"] == SPLIT_X and result["training_iteration"] == SPLIT_AT:
            self.opened.wait(trial.trial_id)
            die()


def drive(tracker: str, root: Path, store: str, phase: str, hold: str = "all") -> int:
    """Run PHASE as its own process, in `root`; its exit code (-9: it
    killed itself). Each driver has its own W&B service, which dies with
    it: not the one an earlier test of this process started
    (WANDB_SERVICE names it)."""
    env = {k: v for k, v in os.environ.items() if k != "WANDB_SERVICE"}
    env["PYTHONPATH"] = f"{_REPO / 'src'}{os.pathsep}{_REPO}"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.integrations.tracker_driver",
            tracker,
            str(root),
            store,
            phase,
            hold,
        ],
        env=env,
        cwd=root,
        timeout=300,
        check=False,
    ).returncode


def main(argv: Sequence[str]) -> int:
    tracker, root, store, phase, *rest = argv
    hold = rest[0] if rest else "all"
    tracked = [tracker_callback(tracker, store)]
    if phase == "first":
        hold_after = int(hold) if hold not in {"all", "none"} else None
        if hold_after is not None and tracker != "wandb":
            raise SystemExit(f"HOLD={hold}: only W&B's thread can be held")
        opened = RunsOpened(tracker, hold_after)
        tuner = Tuner(
            train,
            param_space={"x": tunecore.grid_search(list(XS))},
            tune_config=TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
            run_config=RunConfig(
                name="exp",
                storage_path=root,
                verbose=0,
                executor="in_process",
                callbacks=[
                    *(tracked if hold != "none" else []),
                    DieOnceTheFirstEndIsLogged(opened),
                ],
            ),
        )
    else:
        callbacks: list[object] = [*tracked]
        if phase == "second":
            callbacks.append(DieAtTheSplitResult(RunsOpened(tracker)))
        tuner = Tuner.restore(str(Path(root, "exp")), trainable=train, callbacks=callbacks)
    results = tuner.fit()
    return 0 if not results.errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
