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
