"""Issue 9, bug 16: the README's restore snippet, as a user runs it. The
experiment is run by a script whose trainable is defined in the script
(`__main__`), so the log names it by a bare name that a new process does
not know."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tunecore
from tunecore import ExperimentAnalysis, ResultGrid, Tuner

SCRIPT = """
import sys
import tunecore
from tunecore import RunConfig, TuneConfig, Tuner

def train_defined_in_the_script(config):
    for step in range(3):
        tunecore.report({"loss": config["x"] + 1.0 / (step + 1)})

Tuner(
    train_defined_in_the_script,
    param_space={"x": tunecore.grid_search([3.0, 1.0, 2.0])},
    tune_config=TuneConfig(metric="loss", mode="min"),
    run_config=RunConfig(
        name="sweep", storage_path=sys.argv[1], verbose=1, executor="in_process"
    ),
).fit()
"""


def train_defined_in_the_script(config: dict[str, float]) -> None:
    """The same function, given back to `Tuner.restore` by the user."""
    for step in range(3):
        tunecore.report({"loss": config["x"] + 1.0 / (step + 1)})


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    """The directory of the experiment the script ran."""
    script = tmp_path / "sweep.py"
    script.write_text(textwrap.dedent(SCRIPT))
    subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return tmp_path / "sweep"


def test_restore_without_the_trainable_says_to_pass_it(experiment: Path) -> None:
    with pytest.raises(ValueError, match=r"trainable=") as caught:
        Tuner.restore(experiment)
    assert "train_defined_in_the_script" in str(caught.value)


def test_a_restored_experiment_keeps_its_metric_and_mode(
    experiment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = Tuner.restore(experiment, trainable=train_defined_in_the_script).fit()
    assert results.get_best_result().config == {"x": 1.0}
    assert ", best trial " in capsys.readouterr().out  # by the logged metric and mode


def test_replay_and_restore_expand_the_home_directory(
    experiment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(experiment.parent))
    assert tunecore.replay("~/sweep").state.done
    assert Tuner.can_restore("~/sweep")
    assert len(ResultGrid.from_path("~/sweep")) == 3
    assert ExperimentAnalysis("~/sweep").best_config == {"x": 1.0}
    restored = Tuner.restore("~/sweep", trainable=train_defined_in_the_script)
    assert restored.get_results().get_best_result().config == {"x": 1.0}
