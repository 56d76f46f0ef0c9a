"""Writes `tests/golden/log_v1_end_stoppers/`: a log of format 1 written by
the tunecore before its stoppers heard a function trainable's end (before
`ExperimentConfig.end_repeats_result`), which every later tunecore must
replay as it ran (`tests/test_golden_log.py`). Like `make_golden_log.py`,
it was run once and its output is checked in:

    python -c "from pathlib import Path; from tests.golden.make_golden_log_end_stoppers
               import main; main(Path('tests/golden/log_v1_end_stoppers'))"

Four function trainables return after eight falling losses each, under
stateful built-in stoppers and a searcher object of the user's. Then the
stoppers heard each result once: `ExperimentPlateauStopper(top=2)` never
saw two equal best losses, so all four trials ran, and the searcher heard
each trial complete with its last result as recorded (not marked `done`).
A tunecore that fed this log's ends to the stoppers would stop the
experiment after the first trial, and its snapshots would not verify.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, cast

import tunecore
from tests.api.test_restore import Crash, CrashAfter
from tests.golden.recorded import keep_log, write_expected
from tunecore import Callback, RunConfig, TuneConfig, Tuner
from tunecore.core.experiment import ExperimentState
from tunecore.core.stoppers import AnyOf
from tunecore.model import Mode
from tunecore.search import Searcher
from tunecore.stopper import (
    ExperimentPlateauStopper,
    MaximumIterationStopper,
    TrialPlateauStopper,
)


def train(config: dict[str, Any]) -> None:
    """Eight falling losses, then the function returns."""
    for step in range(1, 9):
        tunecore.report({"loss": 1.0 / step + 0.01 * float(config["b"])})


class Offsets(Searcher):
    """A searcher object of the user's: four offsets, one per trial."""

    def __init__(self) -> None:
        super().__init__(metric="loss", mode="min")
        self.given = 0

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        if self.given >= 4:
            return cast("dict[str, Any]", Searcher.FINISHED)  # Ray's sentinel, a str
        self.given += 1
        return {"b": self.given}


def stopper_summary(state: ExperimentState) -> dict[str, Any]:
    """What the log's stoppers hold at the end: the plateau's best losses
    and streak, and how many results each per-trial stopper counted."""
    plateau, iterations, trial_plateau = cast(AnyOf, state.stopper).stoppers
    assert isinstance(plateau, ExperimentPlateauStopper)
    assert isinstance(iterations, MaximumIterationStopper)
    assert isinstance(trial_plateau, TrialPlateauStopper)
    ids = sorted(state.trials.keys())
    return {
        "best": list(plateau.best),
        "streak": plateau.streak,
        "iterations_seen": [iterations.seen.get(t) for t in ids],
        "plateau_seen": [trial_plateau.seen.get(t) for t in ids],
    }


def experiment(root: str, callbacks: list[Callback]) -> Tuner:
    """The log's experiment (see the module docstring)."""
    return Tuner(
        train,
        tune_config=TuneConfig(search_alg=Offsets(), num_samples=4, max_concurrent_trials=1),
        run_config=RunConfig(
            name="golden",
            storage_path=root,
            verbose=0,
            executor="in_process",
            callbacks=callbacks,
            stop=stoppers(),
        ),
    )


def stoppers() -> list[ExperimentPlateauStopper | MaximumIterationStopper | TrialPlateauStopper]:
    """Stateful built-in stoppers, none of which stops a trial here."""
    return [
        ExperimentPlateauStopper("loss", std=0.0001, top=2, mode=Mode.MIN, patience=1),
        MaximumIterationStopper(max_iter=9),
        TrialPlateauStopper("loss", std=1e-9, num_results=4, grace_period=4),
    ]


def crashed(target: Path) -> None:
    """Writes `tests/golden/crashed_v1_end_stoppers/`: the experiment
    killed in its second trial, after the first trial's function returned,
    as that tunecore left it; `expected.json` holds what that tunecore's
    resume of it gave (`tests/api/test_end_repeats_resume.py`)."""
    with tempfile.TemporaryDirectory() as root:
        with contextlib.suppress(Crash):
            experiment(root, [CrashAfter(results=12)]).fit()
        directory = Path(root) / "golden"
        shutil.copytree(directory, target)
        Tuner.restore(str(directory), train, search_alg=Offsets(), stop=stoppers()).fit()
        state = tunecore.replay(directory).state
        trials = state.trials.values()
        expected = {
            "statuses": sorted(t.status.value for t in trials),
            "iterations": sorted(int(str(t.last_result["training_iteration"])) for t in trials),
            "stopper": stopper_summary(state),
        }
        (target / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


def main(target: Path) -> None:
    with tempfile.TemporaryDirectory() as root:
        experiment(root, []).fit()
        replayed = keep_log(Path(root) / "golden", target)
        write_expected(
            replayed,
            target,
            kinds=["ResultReported", "Asked"],
            stopper=stopper_summary(replayed.state),
        )
