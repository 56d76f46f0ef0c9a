"""PB2 across a driver crash: the resumed experiment makes the decisions
the uninterrupted one made (same exploits, same values chosen by the
model, same final scheduler state), end to end on the in-process executor.
A `Crash` raised from a callback stands for the driver dying mid-run."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.schedulers import PB2
from tunecore.shell.callbacks import Callback
from tunecore.shell.replay import replay

from .climbing import climb
from .test_restore import Crash, CrashAfter

ITERATIONS = 20


def climbing(config: dict[str, float]) -> None:
    """`climb` for `ITERATIONS` steps."""
    climb(config, ITERATIONS)


def experiment(root: Path, *callbacks: Callback) -> Tuner:
    return Tuner(
        climbing,
        param_space={"lr": tunecore.uniform(0.0, 1.0)},
        tune_config=TuneConfig(
            metric="score",
            mode="max",
            num_samples=6,
            seed=11,
            # All of the in-process executor's CPUs: one trial at a time (one
            # order of events, so runs compare exactly), the others waiting,
            # so trials take turns at each perturbation.
            resources_per_trial={"cpu": float(os.cpu_count() or 1)},
            scheduler=PB2(
                time_attr="training_iteration",
                perturbation_interval=2,
                hyperparam_bounds={"lr": [0.0, 1.0]},
                quantile_fraction=0.25,
                seed=5,
            ),
        ),
        run_config=RunConfig(
            name="exp",
            storage_path=str(root),
            verbose=0,
            executor="in_process",
            callbacks=list(callbacks),
        ),
    )


def decisions(scheduler: PB2) -> str:
    """The scheduler's whole state as JSON, with trial ids shorn of their
    experiment's prefix (each experiment draws its own)."""
    text = msgspec.json.encode(scheduler).decode()
    for prefix in {trial_id.split("_")[0] for trial_id in scheduler.members}:
        text = text.replace(f"{prefix}_", "")
    return text


def crash_and_resume(root: Path, results: int) -> tuple[PB2, PB2]:
    """Kill the driver after `results` results, resume it to the end: the
    scheduler as the crash left it and as the resumed run ended it."""
    with pytest.raises(Crash):
        experiment(root, CrashAfter(results=results)).fit()
    directory = root / "exp"
    before = replay(directory).state.scheduler
    resumed = Tuner.restore(str(directory), climbing).fit()
    assert not resumed.errors
    final = replay(directory)
    assert final.snapshots_verified >= 1
    after = final.state.scheduler
    assert isinstance(before, PB2)
    assert isinstance(after, PB2)
    return before, after


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> PB2:
    root = tmp_path_factory.mktemp("baseline")
    experiment(root).fit()
    scheduler = replay(root / "exp").state.scheduler
    assert isinstance(scheduler, PB2)
    assert scheduler.round_time > 0, "the model never chose: nothing to compare"
    return scheduler


def test_a_pb2_experiment_killed_before_the_model_chose_resumes_to_the_same_choices(
    tmp_path: Path, uninterrupted: PB2
) -> None:
    """The observations noted before the crash come back with the state, so
    the model fits the same data and draws the same candidates."""
    before, after = crash_and_resume(tmp_path, results=22)
    assert before.observations
    assert before.round_time == 0  # the model chose only after the resume
    assert decisions(after) == decisions(uninterrupted)


def test_a_pb2_experiment_killed_while_an_exploited_trial_waits_resumes_exactly(
    tmp_path: Path, uninterrupted: PB2
) -> None:
    """A trial paused right after an exploit (taking turns) waits with the
    donor's state in a MEMORY checkpoint, which dies with the driver; the
    donor's checkpoint it came from (`TrialState.exploited`) is where the
    resumed trial starts, not its own older one."""
    before, after = crash_and_resume(tmp_path, results=75)
    assert before.round_time > 0  # the model had chosen
    assert decisions(after) == decisions(uninterrupted)
