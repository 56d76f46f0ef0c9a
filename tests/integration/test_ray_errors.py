"""On Ray, a failure's text comes back decorated by Ray (colour codes,
`ray::TrialActor.train()` headers): users still read their own frames
first, without colour codes."""

from __future__ import annotations

import sys
from pathlib import Path

import cloudpickle
import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import TrialStatus
from tunecore.shell.trainable.errors import TUNECORE_DIR, TUNECORE_FRAMES_LABEL

pytestmark = pytest.mark.usefixtures("ray_cluster")


def fails_on_ray(config: dict[str, object]) -> None:
    tunecore.report({"loss": 1.0})
    raise ValueError(f"bad {config['x']}")


def test_a_failure_on_ray_reads_users_frames_first_without_colour_codes(tmp_path: Path) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers lack tests/
    (result,) = Tuner(
        fails_on_ray,
        param_space={"x": 1},
        tune_config=TuneConfig(),
        run_config=RunConfig(name="errors", storage_path=str(tmp_path), verbose=0),
    ).fit()
    assert result.status is TrialStatus.ERROR
    error = str(result.error)
    assert "\x1b" not in error
    assert error.startswith(f'Traceback (most recent call last):\n  File "{__file__}", line ')
    users, label, own = error.partition(TUNECORE_FRAMES_LABEL)
    assert label
    assert users.rstrip().endswith("ValueError: bad 1")
    assert TUNECORE_DIR not in users
    assert "tunecore/shell/executors/host.py" in own  # where the worker ran it
    assert "\x1b" not in (result.path / "error.txt").read_text()


class CleansUp(tunecore.Trainable):
    """Writes its `cleanup` into the trial's directory; `step` fails at 2
    when the config says so."""

    def setup(self, config: dict[str, object]) -> None:
        self.steps = 0

    def step(self) -> dict[str, object]:
        self.steps += 1
        if self.config["fail"] and self.steps == 2:
            raise RuntimeError("step 2 fails")
        return {"steps": self.steps, "done": self.steps >= 3}

    def cleanup(self) -> None:
        Path(self.logdir, "cleaned_up").write_text(str(self.steps))


def test_a_class_trainable_that_failed_is_cleaned_up_as_ray_stops_it(tmp_path: Path) -> None:
    """Ray calls the actor's `stop` (so `cleanup`) after a failed `step`
    too; tunecore's Ray executor used to kill the actor without it."""
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    results = Tuner(
        CleansUp,
        param_space={"fail": tunecore.grid_search([False, True])},
        tune_config=TuneConfig(reuse_actors=False),
        run_config=RunConfig(name="cleanup", storage_path=str(tmp_path), verbose=0),
    ).fit()
    cleaned = {
        result.config["fail"]: (result.status, (result.path / "cleaned_up").read_text())
        for result in results
    }
    assert cleaned == {False: (TrialStatus.TERMINATED, "3"), True: (TrialStatus.ERROR, "2")}
