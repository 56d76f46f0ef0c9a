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
from tunecore.schedulers import ASHAScheduler, HyperBandScheduler

from .trainables import sleepy_curve, sleepy_curve_checkpointed

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


def test_hyperband_replays_exactly_when_paused_trials_resume_from_checkpoints(
    tmp_path: Path,
) -> None:
    def hyperband() -> HyperBandScheduler:
        return HyperBandScheduler(max_t=27, reduction_factor=3)

    Tuner(
        sleepy_curve_checkpointed,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(num_samples=16, metric="loss", mode="min", scheduler=hyperband()),
        run_config=RunConfig(name="recorded", storage_path=str(tmp_path), verbose=0),
    ).fit()
    result = what_if(tmp_path / "recorded", hyperband())
    assert result.restarted == ()
    assert result.what_if == result.original


def test_trials_that_begin_again_when_resumed_begin_again_in_the_what_if(
    tmp_path: Path,
) -> None:
    """Without a checkpoint a resumed function trainable begins again from
    its first iteration; the what-if restarts it too, along its recorded
    runs, and replays the run's decisions exactly."""
    Tuner(
        sleepy_curve,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(
            num_samples=16,
            metric="loss",
            mode="min",
            scheduler=HyperBandScheduler(max_t=27, reduction_factor=3),
        ),
        run_config=RunConfig(name="recorded", storage_path=str(tmp_path), verbose=0),
    ).fit()
    result = what_if(tmp_path / "recorded", HyperBandScheduler(max_t=27, reduction_factor=3))
    assert result.restarted, "HyperBand resumed no trial: the test proves nothing"
    assert result.what_if.ran == result.original.ran
    assert result.what_if == result.original
