"""PBT across a resume: the exploits of the resumed run never write into
the directories of the earlier run's exploits (in-process executor)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunecore
from tunecore import TuneConfig, Tuner
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial

from .test_missing_checkpoints import Crash, exploiting, run_config, scoring


class CrashAfterAnExploit(Callback):
    """Kills the driver at the first result after an exploit's copy exists."""

    def __init__(self, experiment: Path) -> None:
        self.experiment = experiment

    def on_trial_result(self, iteration: int, trials: object, trial: Trial, result: object) -> None:
        if any(self.experiment.glob("*/exploit_*")):
            raise Crash


def exploit_copies(experiment: Path) -> dict[str, str]:
    """Each exploit directory (trial dir/name) and the score it holds."""
    return {
        f"{copy.parent.name}/{copy.name}": (copy / "score").read_text()
        for copy in sorted(experiment.glob("*/exploit_*"))
    }


def test_a_resumed_pbt_run_keeps_the_trial_directories_and_exploit_copies(tmp_path: Path) -> None:
    def tuner(*callbacks: Callback) -> Tuner:
        return Tuner(
            scoring,
            param_space={"rate": tunecore.grid_search([0.5, 3.0])},
            tune_config=TuneConfig(metric="score", mode="max", scheduler=exploiting([0.5, 3.0])),
            run_config=run_config(tmp_path, *callbacks, stop={"training_iteration": 10}),
        )

    experiment = tmp_path / "gone"
    with pytest.raises(Crash):
        tuner(CrashAfterAnExploit(experiment)).fit()
    before = exploit_copies(experiment)
    assert before, "no exploit before the crash: the test proves nothing"

    Tuner.restore(str(experiment), scoring).fit()
    after = exploit_copies(experiment)
    assert len(after) > len(before), "no exploit after the resume: the test proves nothing"
    # The earlier run's copies are left as they were: not overwritten, not merged,
    assert {name: after[name] for name in before} == before
    # and the trials kept their directories (named by their first tag).
    assert {name.split("/")[0] for name in after} == {name.split("/")[0] for name in before}
