"""What-if on a run recorded on real Ray: given the run's own policy, it
decides exactly as the run did (the identity check of issue 14). On Ray a
worker reports `TrialStarted` with its first results, so the replay must
time each trial from when the core started it."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.api.whatif import what_if
from tunecore.schedulers import ASHAScheduler

from .trainables import sleepy_curve

pytestmark = pytest.mark.usefixtures("ray_cluster")


def asha() -> ASHAScheduler:
    return ASHAScheduler(max_t=27, grace_period=1, reduction_factor=3)


@pytest.mark.parametrize("seed", [1, 3])
def test_the_runs_own_policy_replays_its_decisions_exactly(tmp_path: Path, seed: int) -> None:
    Tuner(
        sleepy_curve,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(
            num_samples=16, metric="loss", mode="min", scheduler=asha(), seed=seed
        ),
        run_config=RunConfig(name="recorded", storage_path=str(tmp_path), verbose=0),
    ).fit()
    result = what_if(tmp_path / "recorded", asha())
    assert result.original.stopped_early > 0  # ASHA decided something
    assert result.what_if.ran == result.original.ran
    assert result.what_if == result.original
